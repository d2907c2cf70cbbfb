import BusProtocol
import Foundation
import ShieldBusTestSupport
import UsageReports
import XCTest

/// The report builder through the real broker and its real process: three days of a scenario, the midnight reports
/// and the requested daily and weekly reports against numbers computed by hand.
final class ReportBuilderTests: XCTestCase {
    static func configuration(retentionDays: Int = 10) -> String {
        """
        name: reports
        timeZone: Europe/Berlin
        device:
          restrictedDomains: [poki.com]
        appGroups:
          - {name: group.test.reports, slices: {reports: ["reports.*"]}}
        plugins:
          - {name: reports, executable: \(BuildProducts.path("report-builder")), role: report, options: {appGroup: group.test.reports, retentionDays: \(retentionDays)}}
        """
    }

    /// Monday 23 – Wednesday 25 November 2026 in Berlin (UTC+1). Each private visit is followed by the home screen,
    /// so `privateVisits: false` (the home screen at once instead) leaves every public span and pickup the same.
    static func threeDays(privateVisits: Bool) -> String {
        func privately(_ url: String, tab: Int) -> String {
            privateVisits ? "visit: {url: \"\(url)\", tab: \(tab), private: true}" : "home: true"
        }
        return """
        name: three-days
        start: 2026-11-23T07:00
        end: day 3 10:01
        steps:
          # Monday: Instagram 07:10–07:40 (a pickup), TikTok 07:40–08:00 (a switch, no pickup), reddit.com 12:00–12:15,
          # Duolingo 20:00–20:10 (a pickup).
          - {at: "07:10", open: Instagram}
          - {at: "07:40", open: TikTok}
          - {at: "08:00", home: true}
          - {at: "12:00", visit: "https://www.reddit.com/r/swift"}
          - {at: "12:15", \(privately("https://www.reddit.com/r/ios", tab: 2))}
          - {at: "12:45", home: true}
          - {at: "20:00", open: Duolingo}
          - {at: "20:10", home: true}
          # Tuesday: TikTok 07:30–08:30 (a pickup), a restricted page (a shield encounter), a notification, a grace
          # pass and a nudge, Instagram from 23:30 across midnight to 00:30.
          - {at: "day 2 07:30", open: TikTok}
          - {at: "day 2 08:30", home: true}
          - {at: "day 2 09:00", visit: "https://poki.com/"}
          - {at: "day 2 09:01", home: true}
          - {at: "day 2 13:00", publish: {topic: notification.post.request, body: {id: n1, title: Hello, body: Hi, interruptionLevel: active, kind: reminder}}}
          - {at: "day 2 13:05", publish: {topic: app.intent.grace-pass, body: {target: TikTok}}}
          - {at: "day 2 13:06", publish: {topic: app.intent.nudge, body: {}}}
          - {at: "day 2 23:30", open: Instagram}
          - {at: "day 3 00:30", home: true}
          # Wednesday: Duolingo 09:00–09:10 (a pickup), reddit.com 09:10–09:30, then a private Instagram page.
          - {at: "day 3 09:00", open: Duolingo}
          - {at: "day 3 09:10", visit: "https://www.reddit.com/"}
          - {at: "day 3 09:30", \(privately("https://www.instagram.com/", tab: 3))}
          - {at: "day 3 09:50", home: true}
          - {at: "day 3 10:00", publish: {topic: report.daily.request, body: {date: "2026-11-25"}}}
          - {at: "day 3 10:00", publish: {topic: report.weekly.request, body: {date: "2026-11-25"}}}
        """
    }

    static func utc(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    static func hours(_ values: [Int: TimeInterval]) -> [TimeInterval] { (0..<24).map { values[$0] ?? 0 } }

    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970  // bus coding: integer milliseconds
        return try decoder.decode(type, from: Data(bytes))
    }

    /// A reply's `value`, decoded.
    static func value<T: Decodable>(_ type: T.Type, of reply: Envelope?) throws -> T {
        let reply = try XCTUnwrap(reply, "no reply")
        XCTAssertEqual(reply.bodyValue["ok"], true, reply.bodyValue.jsonText)
        return try decode(T.self, Array(try XCTUnwrap(reply.bodyValue["value"]).jsonText.utf8))
    }

    func testDailyAndWeeklyReportsMatchTheHandComputedNumbers() throws {
        let run = try ScenarioRun.run(configuration: Self.configuration(), scenario: Self.threeDays(privateVisits: true))
        XCTAssertEqual(run.exitStatus, 0, run.errors)

        // The midnight reports of Monday and Tuesday.
        let midnight = try run.events("report.daily").map { try Self.decode(DailyReport.self, $0.body) }
        XCTAssertEqual(midnight.map(\.day.description), ["2026-11-23", "2026-11-24"])
        guard midnight.count == 2 else { return }
        let monday = midnight[0], tuesday = midnight[1]
        XCTAssertEqual(run.events("report.daily").first?.time, busTime("2026-11-23T23:00:00Z"), "published at local midnight")
        // Instagram 1800 + TikTok 1200 + Duolingo 600 = 3600; Social 3000, Education 600; reddit.com 900 (public only).
        XCTAssertEqual(monday.totalSeconds, 3600)
        XCTAssertEqual(monday.apps, [AppUsageEntry(app: "Instagram", category: "Social", seconds: 1800),
                                     AppUsageEntry(app: "TikTok", category: "Social", seconds: 1200),
                                     AppUsageEntry(app: "Duolingo", category: "Education", seconds: 600)])
        XCTAssertEqual(monday.categories, [UsageEntry(name: "Social", seconds: 3000), UsageEntry(name: "Education", seconds: 600)])
        XCTAssertEqual(monday.webDomains, [UsageEntry(name: "reddit.com", seconds: 900)])
        XCTAssertEqual(monday.pickups, 2)
        XCTAssertEqual(monday.pickupsByApp, [CountEntry(name: "Duolingo", count: 1), CountEntry(name: "Instagram", count: 1)])
        XCTAssertEqual(monday.firstPickup, FirstPickup(app: "Instagram", at: Self.utc("2026-11-23T06:10:00Z"), clockTime: "07:10"))
        XCTAssertEqual(monday.hourlySeconds, Self.hours([7: 3000, 20: 600]))
        // Tuesday: TikTok 3600 + Instagram 23:30–24:00 1800, split at midnight.
        XCTAssertEqual(tuesday.totalSeconds, 5400)
        XCTAssertEqual(tuesday.apps, [AppUsageEntry(app: "TikTok", category: "Social", seconds: 3600),
                                      AppUsageEntry(app: "Instagram", category: "Social", seconds: 1800)])
        XCTAssertEqual(tuesday.hourlySeconds, Self.hours([7: 1800, 8: 1800, 23: 1800]))
        XCTAssertEqual(tuesday.shieldEncountersByTarget, [CountEntry(name: "poki.com", count: 1)])
        XCTAssertEqual(tuesday.notificationsBySource, [CountEntry(name: "reminder", count: 1)])
        XCTAssertEqual(tuesday.gracePassesUsed, 1)
        XCTAssertEqual(tuesday.nudgesUsed, 1)
        XCTAssertEqual(tuesday.pickups, 2)
        XCTAssertEqual(run.events("report.insight").first?.bodyValue["day"]?.stringValue, "2026-11-23")

        // Wednesday, asked for at 10:00: Instagram 00:00–00:30, Duolingo 09:00–09:10, reddit.com 09:10–09:30.
        let wednesday = try Self.value(DailyReport.self, of: run.events("report.daily.reply").first)
        XCTAssertEqual(wednesday.totalSeconds, 2400)
        XCTAssertEqual(wednesday.apps, [AppUsageEntry(app: "Instagram", category: "Social", seconds: 1800),
                                        AppUsageEntry(app: "Duolingo", category: "Education", seconds: 600)])
        XCTAssertEqual(wednesday.webDomains, [UsageEntry(name: "reddit.com", seconds: 1200)])
        XCTAssertEqual(wednesday.pickups, 1, "Instagram's pickup was on Tuesday")
        XCTAssertEqual(wednesday.firstPickup, FirstPickup(app: "Duolingo", at: Self.utc("2026-11-25T08:00:00Z"), clockTime: "09:00"))
        XCTAssertEqual(wednesday.hourlySeconds, Self.hours([0: 1800, 9: 600]))
        // Trend over Mon–Wed: 3600 → 2400; 5 × 3600 > 6 × 2400, so decreasing.
        XCTAssertEqual(wednesday.insights.trend, .decreasing)
        XCTAssertEqual(wednesday.insights.yesterdayGracePasses, 1)
        XCTAssertEqual(wednesday.insights.morningMessage, "Yesterday you used 1 grace pass.")

        let week = try Self.value(WeeklyReport.self, of: run.events("report.weekly.reply").first)
        XCTAssertEqual(week.firstDay.description, "2026-11-19")
        XCTAssertEqual(week.days.map(\.totalSeconds), [0, 0, 0, 0, 3600, 5400, 2400])
        XCTAssertEqual(week.totalSeconds, 11400)
        XCTAssertEqual(week.apps, [AppUsageEntry(app: "Instagram", category: "Social", seconds: 5400),
                                   AppUsageEntry(app: "TikTok", category: "Social", seconds: 4800),
                                   AppUsageEntry(app: "Duolingo", category: "Education", seconds: 1200)])
        XCTAssertEqual(week.categories, [UsageEntry(name: "Social", seconds: 10200), UsageEntry(name: "Education", seconds: 1200)])
        XCTAssertEqual(week.webDomains, [UsageEntry(name: "reddit.com", seconds: 2100)])
        XCTAssertEqual(week.pickups, 5)
        XCTAssertEqual([week.notifications, week.shieldEncounters, week.gracePassesUsed, week.nudgesUsed], [1, 1, 1, 1])
        XCTAssertEqual(week.insights.mostUsedApp, "Instagram")
        XCTAssertEqual(week.insights.daysWithData, 3)
        XCTAssertEqual(week.insights.averageDailySeconds, 11400.0 / 7, "the week over its 7 days")
        XCTAssertEqual(week.insights.trend, .decreasing)
        XCTAssertEqual(week.insights.recommendation, "Great job maintaining healthy habits!")
    }

    func testPrivateTabVisitsChangeNothing() throws {
        let with = try ScenarioRun.run(configuration: Self.configuration(), scenario: Self.threeDays(privateVisits: true))
        let without = try ScenarioRun.run(configuration: Self.configuration(), scenario: Self.threeDays(privateVisits: false))
        XCTAssertEqual(with.exitStatus, 0, with.errors)
        XCTAssertEqual(with.events("activity.web.visited").filter { $0.bodyValue["isPrivate"] == true }.count, 2, "the private visits happened")
        for topic in ["report.daily", "report.insight", "report.daily.reply", "report.weekly.reply"] {
            let bodies = { (run: ScenarioRun) in run.events(topic).map { $0.bodyValue.jsonText } }
            XCTAssertFalse(bodies(with).isEmpty, topic)
            XCTAssertEqual(bodies(with), bodies(without), "\(topic) differs with private visits")
        }
    }

    /// Days beyond the retention are dropped from the ledger and the store at midnight.
    func testDaysBeyondTheRetentionAreDropped() throws {
        let scenario = """
        name: retention
        start: 2026-11-23T07:00
        steps:
          - {at: "07:10", open: Instagram}
          - {at: "07:20", home: true}
          - {at: "day 9 07:00", publish: {topic: report.daily.request, body: {date: "2026-11-23"}}}
        """
        let run = try ScenarioRun.run(configuration: Self.configuration(retentionDays: 7), scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let midnight = try run.events("report.daily").map { try Self.decode(DailyReport.self, $0.body) }
        XCTAssertEqual(midnight.first?.totalSeconds, 600, "Monday's report, published at its midnight")
        let removal = run.events("state.changed").first { $0.bodyValue["removed"] == true }
        XCTAssertEqual(removal?.bodyValue["key"]?.stringValue, "reports.day.2026-11-23")
        XCTAssertEqual(removal?.time, busTime("2026-11-29T23:00:00Z"), "at the midnight that starts Monday 30, the 8th day")
        XCTAssertEqual(try Self.value(DailyReport.self, of: run.events("report.daily.reply").first).totalSeconds, 0)
    }

    /// The numbers outlive the run: a broker started later on the same state answers `shieldbus report` with them,
    /// as a table, JSON, and an HTML page that a headless browser renders.
    func testTheReportCommandAsksTheRunningReportBuilder() throws {
        let state = TemporaryDirectory(prefix: "sbreport")
        let configuration = Self.configuration(retentionDays: 36_500)  // independent of today's wall-clock date
        let run = try ScenarioRun.run(configuration: configuration, scenario: Self.threeDays(privateVisits: true), stateDirectory: state.path)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let expected = try Self.value(DailyReport.self, of: run.events("report.daily.reply").first)

        let broker = try BrokerProcess(configuration: configuration, arguments: ["--state-dir", state.path])
        defer { broker.stop() }
        waitUntil("the report builder to connect (\(broker.log()))") {
            (try? broker.status())?["plugins"]?.arrayValue?.contains { $0["name"] == "reports" && $0["connected"] == true } == true
        }
        let json = try Self.shieldbus(["report", "daily", "--date", "2026-11-25", "--json", "--runtime-dir", broker.runtime.path])
        XCTAssertEqual(json.status, 0, json.errors)
        XCTAssertTrue(json.errors.contains("asked the report builder of the broker"), json.errors)
        let answered = try JSONReportRenderer.makeDecoder().decode(DailyReport.self, from: Data(json.output.utf8))
        XCTAssertEqual(answered.apps, expected.apps)
        XCTAssertEqual(answered.totalSeconds, 2400)

        // Without --runtime-dir the store is read directly, while the broker runs: the same numbers (nothing was in use).
        let stored = try Self.shieldbus(["report", "daily", "--date", "2026-11-25", "--json", "--state-dir", state.path])
        XCTAssertEqual(stored.status, 0, stored.errors)
        XCTAssertTrue(stored.errors.contains("read the report builder's days in app group group.test.reports"), stored.errors)
        XCTAssertEqual(try JSONReportRenderer.makeDecoder().decode(DailyReport.self, from: Data(stored.output.utf8)), answered)
        // Without --date the store's today is its last day (the played day), not this machine's.
        let lastPlayed = try Self.shieldbus(["report", "daily", "--json", "--state-dir", state.path])
        XCTAssertEqual(try JSONReportRenderer.makeDecoder().decode(DailyReport.self, from: Data(lastPlayed.output.utf8)).day.description,
                       "2026-11-25", lastPlayed.errors)
        // Relative days count back from that today, not this machine's.
        let yesterday = try Self.shieldbus(["report", "daily", "--date", "yesterday", "--json", "--state-dir", state.path])
        XCTAssertEqual(yesterday.status, 0, yesterday.errors)
        XCTAssertEqual(try JSONReportRenderer.makeDecoder().decode(DailyReport.self, from: Data(yesterday.output.utf8)).day.description,
                       "2026-11-24", yesterday.errors)
        // A day back written as the help writes it, a separate argument that starts with a dash.
        let threeBack = try Self.shieldbus(["report", "daily", "--date", "-3d", "--json", "--state-dir", state.path])
        XCTAssertEqual(threeBack.status, 0, threeBack.errors)
        XCTAssertEqual(try JSONReportRenderer.makeDecoder().decode(DailyReport.self, from: Data(threeBack.output.utf8)).day.description,
                       "2026-11-22", threeBack.errors)
        let badDay = try Self.shieldbus(["report", "daily", "--date", "the other day", "--state-dir", state.path])
        XCTAssertEqual(badDay.status, 64, badDay.errors)
        XCTAssertTrue(badDay.errors.contains("--date is a day like 2026-11-25, today, yesterday or -3d"), badDay.errors)

        let table = try Self.shieldbus(["report", "weekly", "--date", "2026-11-25", "--runtime-dir", broker.runtime.path])
        XCTAssertEqual(table.status, 0, table.output)
        XCTAssertTrue(table.output.contains("Weekly report · 19 Nov – 25 Nov 2026"), table.output)
        XCTAssertTrue(table.output.contains("Week total"), table.output)

        let page = state.file("report.html")
        let html = try Self.shieldbus(["report", "daily", "--date", "2026-11-25", "--html", page, "--runtime-dir", broker.runtime.path])
        XCTAssertEqual(html.status, 0, html.output)
        let text = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("<!DOCTYPE html>") && text.contains("<svg"), "a page with SVG charts")
        try assertChromiumRenders(page: page, in: state)

        // The weekly page is the week's, not the daily page again; a missing folder is said plainly.
        let weekPage = state.file("week.html")
        XCTAssertEqual(try Self.shieldbus(["report", "weekly", "--date", "2026-11-25", "--html", weekPage, "--runtime-dir", broker.runtime.path]).status, 0)
        XCTAssertNotEqual(try String(contentsOfFile: weekPage, encoding: .utf8), text, "weekly and daily are different pages")
        let nowhere = try Self.shieldbus(["report", "daily", "--html", state.file("missing/report.html"), "--state-dir", state.path])
        XCTAssertEqual(nowhere.status, 1)
        XCTAssertTrue(nowhere.errors.contains("the folder \(state.file("missing")) does not exist"), nowhere.errors)
        XCTAssertFalse(nowhere.errors.contains("NSCocoaErrorDomain"), nowhere.errors)
    }

    private func assertChromiumRenders(page: String, in folder: TemporaryDirectory) throws {
        guard let chromium = ["/usr/bin/chromium", "/usr/local/bin/chromium"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw XCTSkip("chromium is not installed (`make deps` installs it): the page was not rendered")
        }
        let png = folder.file("report.png")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chromium)
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(folder.file("chromium"))",
                             "--screenshot=\(png)", "--window-size=1200,1600", URL(fileURLWithPath: page).absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        waitUntil("chromium to render the page", timeoutSeconds: 60) { !process.isRunning }
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: png), "no screenshot")
        XCTAssertEqual(Array(bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG")
        XCTAssertGreaterThan(bytes.count, 20_000, "charts and tables, not a blank page")
    }

    /// Runs the built `shieldbus` with arguments; its exit status, standard output and standard error.
    static func shieldbus(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let folder = TemporaryDirectory(prefix: "sbcli")
        let errorPath = folder.file("stderr")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardError = errors
        try process.run()
        try errors.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
    }

    func busTime(_ text: String) -> BusTime { BusTime(Self.utc(text).timeIntervalSince1970 * 1000) }
}
