import BusProtocol
import Foundation
import ShieldBusTestSupport
import UsageReports
import XCTest

/// The oracle: ten days of a scenario through the real broker and report builder — midnight and end-of-week spans,
/// device restarts (one inside an app span), the broker SIGKILLed inside an app span, iOS updates, private tabs, a web limit, a restricted site and the 25-hour day that ends summer
/// time — then every number of every daily, weekly, monthly and range report the builder serves (and that
/// `shieldbus report` reads from its store) against an expectation computed here from the journal with the rules of
/// docs/reports-and-notifications.md, without the production aggregation code.
final class ReportOracleTests: XCTestCase {
    static let zone = TimeZone(identifier: "Europe/Berlin")!

    static let configuration = """
        name: oracle
        timeZone: Europe/Berlin
        device:
          webLimits: {reddit.com: 20}
          restrictedDomains: [poki.com]
        appGroups:
          - {name: group.test.reports, slices: {reports: ["reports.*"]}}
        plugins:
          - {name: reports, executable: \(BuildProducts.path("report-builder")), role: report, options: {appGroup: group.test.reports, retentionDays: 36500}}
        """

    /// Wednesday 21 – Friday 30 October 2026; summer time ends on Sunday 25 at 03:00 (clocks go back to 02:00).
    static let scenario = """
        name: oracle
        start: 2026-10-21T07:00
        end: day 10 09:01
        steps:
          - {at: "07:10", open: Instagram}
          - {at: "07:40", open: TikTok}
          - {at: "08:05", home: true}
          - {at: "12:00", visit: "https://www.reddit.com/r/swift"}
          - {at: "12:25", open: Maps}
          - {at: "12:40", home: true}
          - {at: "13:00", visit: "https://poki.com/"}
          - {at: "13:01", osUpdate: true}
          - {at: "13:02", home: true}
          - {at: "18:00", visit: {url: "https://www.instagram.com/", tab: 2, private: true}}
          - {at: "18:20", home: true}
          - {at: "20:00", publish: {topic: notification.post.request, body: {id: n1, title: Hello, body: Hi, interruptionLevel: active, kind: reminder}}}
          - {at: "20:01", publish: {topic: app.intent.grace-pass, body: {target: TikTok}}}
          - {at: "20:02", publish: {topic: app.intent.nudge, body: {}}}
          - {at: "23:30", open: YouTube}
          - {at: "day 2 00:30", home: true}
          - {at: "day 2 08:00", open: Duolingo}
          - {at: "day 2 08:20", osUpdate: true}
          - {at: "day 2 08:30", home: true}
          - {at: "day 2 09:00", restart: true}
          - {at: "day 2 10:00", open: Instagram}
          - {at: "day 2 10:30", home: true}
          - {at: "day 2 14:00", open: Maps}
          - {at: "day 2 14:10", home: true}
          - {at: "day 2 14:11", restart: true}
          - {at: "day 3 07:00", open: TikTok}
          - {at: "day 3 07:45", visit: "https://old.reddit.com/"}
          - {at: "day 3 08:00", home: true}
          - {at: "day 3 21:00", open: Instagram}
          - {at: "day 3 22:30", home: true}
          - {at: "day 4 10:00", open: YouTube}
          - {at: "day 4 12:00", home: true}
          - {at: "day 4 23:50", open: Instagram}
          - {at: "day 5 00:40", home: true}
          - {at: "day 5 01:30", open: YouTube}
          - {at: "day 5 03:30", home: true}
          - {at: "day 5 20:00", open: Maps}
          - {at: "day 5 20:10", publish: {topic: notification.post.request, body: {id: n2, title: Walk, body: Go, interruptionLevel: passive}}}
          - {at: "day 5 20:30", home: true}
          - {at: "day 5 23:40", open: TikTok}
          - {at: "day 6 00:20", home: true}
          - {at: "day 6 09:00", visit: "https://poki.com/play"}
          - {at: "day 6 09:01", open: Instagram}
          - {at: "day 6 09:30", home: true}
          - {at: "day 7 10:00", open: Maps}
          - {at: "day 7 10:20", restart: true}
          - {at: "day 7 11:00", open: TikTok}
          - {at: "day 7 11:15", crashBroker: true}
          - {at: "day 7 11:40", open: Instagram}
          - {at: "day 7 12:00", home: true}
          - {at: "day 8 08:00", open: Duolingo}
          - {at: "day 8 08:30", home: true}
          - {at: "day 8 08:31", publish: {topic: app.intent.grace-pass, body: {target: Instagram}}}
          - {at: "day 9 12:00", open: YouTube}
          - {at: "day 9 13:00", visit: {url: "https://www.reddit.com/r/private", tab: 3, private: true}}
          - {at: "day 9 13:30", visit: "https://www.wikipedia.org/"}
          - {at: "day 9 14:00", home: true}
        \(requests)
        """

    static let days = (0..<10).map { LocalDay(year: 2026, month: 10, day: 21 + $0)! }
    static let weekEnds = ["2026-10-25", "2026-10-30"]
    static let ranges = [("2026-10-21", "2026-10-30"), ("2026-10-24", "2026-10-26")]

    static var requests: String {
        var lines = days.map { "  - {at: \"day 10 09:00\", publish: {topic: report.daily.request, body: {date: \"\($0)\"}}}" }
        lines += weekEnds.map { "  - {at: \"day 10 09:00\", publish: {topic: report.weekly.request, body: {date: \"\($0)\"}}}" }
        lines.append("  - {at: \"day 10 09:00\", publish: {topic: report.monthly.request, body: {month: \"2026-10\"}}}")
        lines += ranges.map { "  - {at: \"day 10 09:00\", publish: {topic: report.range.request, body: {from: \"\($0.0)\", to: \"\($0.1)\"}}}" }
        return lines.joined(separator: "\n")
    }

    func testEveryNumberOfEveryReportMatchesTheOracle() throws {
        let state = TemporaryDirectory(prefix: "sboracle")
        let run = try ScenarioRun.run(configuration: Self.configuration, scenario: Self.scenario, stateDirectory: state.path, timeoutSeconds: 120)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        // The situations the oracle is about did happen.
        XCTAssertEqual(run.events("device.restarted").count, 3)
        XCTAssertEqual(run.events("bus.started").filter { $0.bodyValue["after"] == "crash" }.count, 1, "the broker was killed once")
        XCTAssertEqual(Self.stepsInsideAnAppSpan(run.journal), ["restart the device", "the broker crashes and starts again"],
                       "a device restart and a broker crash each with an app on screen")
        XCTAssertEqual(run.events("device.os-updated").count, 2)
        XCTAssertEqual(run.events("activity.web.visited").filter { $0.bodyValue["isPrivate"] == true }.count, 2)
        XCTAssertTrue(run.events("activity.web.left").contains { $0.bodyValue["reason"] == "limit-reached" })

        let oracle = Oracle(journal: run.journal, zone: Self.zone)
        // A few numbers by hand, so the oracle itself is seen to count.
        XCTAssertEqual(oracle.day("2026-10-21").pickups, ["Instagram": 1, "YouTube": 1], "Maps came from the web-limit view")
        XCTAssertEqual(oracle.day("2026-10-21").encounters, ["reddit.com": 1, "poki.com": 1], "the redraw after the iOS update is the same")
        XCTAssertEqual(oracle.day("2026-10-21").web, ["reddit.com": 1200], "20 minutes to the limit; the private tab not at all")
        XCTAssertEqual(oracle.day("2026-10-22").apps["Duolingo"], 1200, "the iOS update ended the span")
        XCTAssertEqual(oracle.day("2026-10-25").apps["YouTube"], 10800, "01:30 to 03:30 on the day the clocks go back")
        XCTAssertEqual(oracle.day("2026-10-26").pickups, [:], "Instagram came from the restricted-site view")
        XCTAssertEqual(oracle.day("2026-10-27").apps["Maps"], 1200, "the device restart ended the span")
        XCTAssertEqual(oracle.hourCount(LocalDay(year: 2026, month: 10, day: 25)!), 25, "the 25-hour day")
        XCTAssertEqual(oracle.day("2026-10-25").slots.count, 7, "00h, YouTube from 01:30 to 03:30 in four hours (the repeated one twice), 20h, 23h")

        let dailies = try run.events("report.daily.reply").map { try ReportBuilderTests.value(DailyReport.self, of: $0) }
        XCTAssertEqual(dailies.map(\.day).sorted(), Self.days)
        for report in dailies { oracle.check(report) }
        let weeklies = try run.events("report.weekly.reply").map { try ReportBuilderTests.value(WeeklyReport.self, of: $0) }
        XCTAssertEqual(weeklies.map(\.lastDay.description).sorted(), Self.weekEnds)
        for report in weeklies { oracle.check(report) }
        let runs = try run.events("report.monthly.reply").map { try ReportBuilderTests.value(RangeReport.self, of: $0) }
            + run.events("report.range.reply").map { try ReportBuilderTests.value(RangeReport.self, of: $0) }
        XCTAssertEqual(runs.count, 3)
        for report in runs { oracle.check(report) }

        // The same numbers from the store, read by `shieldbus report` without a broker.
        for arguments in [["monthly", "--month", "2026-10"], ["range", "--from", "2026-10-21", "--to", "2026-10-30"]] {
            let command = try ReportBuilderTests.shieldbus(["report"] + arguments + ["--json", "--state-dir", state.path])
            XCTAssertEqual(command.status, 0, command.errors)
            XCTAssertTrue(command.errors.contains("no broker asked"), command.errors)
            oracle.check(try JSONReportRenderer.makeDecoder().decode(RangeReport.self, from: Data(command.output.utf8)))
        }
        for day in ["2026-10-25", "2026-10-30"] {
            let command = try ReportBuilderTests.shieldbus(["report", "weekly", "--date", day, "--json", "--state-dir", state.path])
            XCTAssertEqual(command.status, 0, command.errors)
            oracle.check(try JSONReportRenderer.makeDecoder().decode(WeeklyReport.self, from: Data(command.output.utf8)))
        }
    }

    /// The restarts and broker crashes the scenario played while an app was in the foreground (opened, not yet left).
    static func stepsInsideAnAppSpan(_ journal: [Envelope]) -> [String] {
        var appOnScreen = false
        var steps: [String] = []
        for event in journal {
            switch event.topic {
            case "activity.app.opened": appOnScreen = true
            case "activity.app.closed", "activity.home", "activity.web.visited", "device.restarted": appOnScreen = false
            case "scenario.step":
                let action = event.bodyValue["action"]?.stringValue ?? ""
                if appOnScreen && ["restart the device", "the broker crashes and starts again"].contains(action) { steps.append(action) }
            default: continue
            }
        }
        return steps
    }
}

/// The expected numbers, from the journal and the documented rules alone.
///
/// - App time runs from `activity.app.opened` to the matching `activity.app.closed`, or to `activity.home`,
///   `device.restarted` or `device.os-updated`, or to the next app or public page; web time likewise per domain from
///   `activity.web.visited` to `activity.web.left`; private tabs count for nothing.
/// - Time is split at local midnight and at each clock hour (Berlin's hours start on whole UTC hours).
/// - A pickup: an app opened from the home screen, or from under the shield that came up over it when it was
///   opened from the home screen; anything else on screen in between (a page, a shield, an OS view) makes it a switch.
/// - A shield encounter: `shield.shown` for a target other than the one already shown, unless the person moved on
///   (home, restart, an app or page opened, a dismissal that is not the OS redrawing).
/// - Insights over the 7 days ending on the report's day; the daily average is that week's time divided by 7.
final class Oracle {
    struct Day {
        var apps: [String: Double] = [:]
        var categoryOfApp: [String: String] = [:]
        var web: [String: Double] = [:]
        /// App seconds per clock hour, keyed by the hour's start (so the repeated hour of a 25-hour day is two keys).
        var slots: [Date: Double] = [:]
        var pickups: [String: Int] = [:]
        var firstPickup: (app: String, at: Date)?
        var notifications: [String: Int] = [:]
        var encounters: [String: Int] = [:]
        var grace = 0
        var nudges = 0
        var hasData = false

        var total: Double { apps.values.reduce(0, +) }
        var categories: [String: Double] {
            var sums: [String: Double] = [:]
            for (app, seconds) in apps { sums[categoryOfApp[app] ?? "", default: 0] += seconds }
            return sums
        }
    }

    private var days: [String: Day] = [:]
    private let calendar: Calendar

    init(journal: [Envelope], zone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        self.calendar = calendar
        read(journal)
    }

    func day(_ text: String) -> Day { days[text] ?? Day() }

    /// The clock hours of a local day, counted from its midnight to the next.
    func hourCount(_ day: LocalDay) -> Int {
        let start = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day))!
        return Int(calendar.date(byAdding: .day, value: 1, to: start)!.timeIntervalSince(start) / 3600)
    }

    // MARK: Reading the journal

    private enum Place: Equatable { case home, shieldedFromHome(String), away }

    private func read(_ journal: [Envelope]) {
        var span: (app: String?, category: String, domain: String?, since: Date)?
        var place = Place.home
        var shown: String?
        func close(_ at: Date) {
            if let open = span { add(app: open.app, category: open.category, domain: open.domain, from: open.since, to: at) }
            span = nil
        }
        for event in journal {
            let at = Date(timeIntervalSince1970: Double(event.time) / 1000)
            let body = event.bodyValue
            switch event.topic {
            case "activity.app.opened":
                let app = body["application"]?["localizedDisplayName"]?.stringValue ?? "Unknown app"
                close(at)
                if place == .home || place == .shieldedFromHome(app) { pickup(app, at) }
                place = .away
                shown = nil
                span = (app, body["category"]?["localizedDisplayName"]?.stringValue ?? "Other", nil, at)
            case "activity.app.closed":
                if let open = span, open.app != nil, open.app == body["application"]?["localizedDisplayName"]?.stringValue { close(at) }
            case "activity.web.visited":
                guard body["isPrivate"] != true else { continue }
                close(at)
                place = .away
                shown = nil
                span = (nil, "", body["webDomain"]?["domain"]?.stringValue ?? "unknown", at)
            case "activity.web.left":
                guard body["isPrivate"] != true else { continue }
                if let open = span, open.domain != nil, open.domain == body["webDomain"]?["domain"]?.stringValue { close(at) }
            case "activity.home", "device.restarted":
                close(at)
                place = .home
                shown = nil
            case "device.os-updated":
                close(at)
            case "shield.shown":
                let target = body["target"]?["application"]?["localizedDisplayName"]?.stringValue
                    ?? body["target"]?["webDomain"]?["domain"]?.stringValue ?? "?"
                if place == .home { place = body["target"]?["application"] != nil ? .shieldedFromHome(target) : .away }
                if target != shown {
                    shown = target
                    mark(at) { $0.encounters[target, default: 0] += 1 }
                }
            case "shield.dismissed":
                if !["managed-settings", "os-update"].contains(body["reason"]?.stringValue ?? "") { shown = nil }
            case "notification.posted":
                let source = body["kind"]?.stringValue ?? body["title"]?.stringValue ?? "?"
                mark(at) { $0.notifications[source, default: 0] += 1 }
            case "app.intent.grace-pass":
                mark(at) { $0.grace += 1 }
            case "app.intent.nudge":
                mark(at) { $0.nudges += 1 }
            default:
                continue
            }
        }
    }

    private func key(_ at: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: at)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    private func mark(_ at: Date, _ change: (inout Day) -> Void) {
        change(&days[key(at), default: Day()])
        days[key(at)]!.hasData = true
    }

    private func pickup(_ app: String, _ at: Date) {
        mark(at) { day in
            day.pickups[app, default: 0] += 1
            if day.firstPickup == nil { day.firstPickup = (app, at) }
        }
    }

    /// Splits a span at every whole UTC hour (Berlin's clock hours) and books each piece on its local day and hour.
    private func add(app: String?, category: String, domain: String?, from start: Date, to end: Date) {
        var cursor = start
        while cursor < end {
            let hourStart = Date(timeIntervalSince1970: (cursor.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
            let pieceEnd = min(hourStart + 3600, end)
            let seconds = pieceEnd.timeIntervalSince(cursor)
            mark(cursor) { day in
                if let app {
                    day.apps[app, default: 0] += seconds
                    day.categoryOfApp[app] = category
                    day.slots[hourStart, default: 0] += seconds
                } else if let domain {
                    day.web[domain, default: 0] += seconds
                }
            }
            cursor = pieceEnd
        }
    }

    // MARK: Expectations

    private func hourly(_ day: Day) -> [Double] {
        var hours = Array(repeating: 0.0, count: 24)
        for (start, seconds) in day.slots { hours[calendar.component(.hour, from: start)] += seconds }
        return hours
    }

    private func ranked(_ map: [String: Double]) -> [UsageEntry] {
        map.map { UsageEntry(name: $0.key, seconds: $0.value) }.sorted { ($1.seconds, $0.name) < ($0.seconds, $1.name) }
    }

    private func ranked(_ map: [String: Int]) -> [CountEntry] {
        map.map { CountEntry(name: $0.key, count: $0.value) }.sorted { ($1.count, $0.name) < ($0.count, $1.name) }
    }

    private func apps(_ list: [Day]) -> [AppUsageEntry] {
        var seconds: [String: Double] = [:], categories: [String: String] = [:]
        for day in list {
            seconds.merge(day.apps, uniquingKeysWith: +)
            categories.merge(day.categoryOfApp) { $1 }
        }
        return ranked(seconds).map { AppUsageEntry(app: $0.name, category: categories[$0.name] ?? "", seconds: $0.seconds) }
    }

    private func merged(_ list: [Day], _ field: (Day) -> [String: Double]) -> [String: Double] {
        list.reduce(into: [:]) { $0.merge(field($1), uniquingKeysWith: +) }
    }

    private func merged(_ list: [Day], _ field: (Day) -> [String: Int]) -> [String: Int] {
        list.reduce(into: [:]) { $0.merge(field($1), uniquingKeysWith: +) }
    }

    private func run(_ first: LocalDay, _ last: LocalDay) -> [LocalDay] {
        var result: [LocalDay] = []
        var day = first
        while day <= last {
            result.append(day)
            day = day.adding(days: 1)
        }
        return result
    }

    private func checkInsights(_ insights: Insights, endingOn last: LocalDay, _ label: String, file: StaticString, line: UInt) {
        let period = run(last.adding(days: -6), last).map { day($0.description) }
        let totals = period.map(\.total)
        let top = apps(period).first
        XCTAssertEqual(insights.mostUsedApp, top?.app, "\(label) most used app", file: file, line: line)
        XCTAssertEqual(insights.mostUsedAppSeconds, top?.seconds ?? 0, "\(label) most used app's time", file: file, line: line)
        XCTAssertEqual(insights.averageDailySeconds, totals.reduce(0, +) / 7, accuracy: 1e-6, "\(label) average: the week ÷ 7", file: file, line: line)
        XCTAssertEqual(insights.daysWithData, period.filter(\.hasData).count, "\(label) days with data", file: file, line: line)
        let first = totals[4], final = totals[6]
        let trend: Insights.Trend = final > first * 1.2 ? .increasing : first > final * 1.2 ? .decreasing : .stable
        XCTAssertEqual(insights.trend, trend, "\(label) trend", file: file, line: line)
        let recommendation = trend == .increasing && top != nil ? "Your screen time is rising. Try limiting \(top!.app)."
            : totals.reduce(0, +) / 7 > 3 * 3600 ? "Over 3h daily — schedule some breaks!" : "Great job maintaining healthy habits!"
        XCTAssertEqual(insights.recommendation, recommendation, "\(label) recommendation", file: file, line: line)
        XCTAssertEqual(insights.yesterdayGracePasses, period[5].grace, "\(label) yesterday's grace passes", file: file, line: line)
    }

    func check(_ report: DailyReport, file: StaticString = #filePath, line: UInt = #line) {
        let expected = day(report.day.description), label = "daily \(report.day)"
        XCTAssertEqual(report.totalSeconds, expected.total, "\(label) total", file: file, line: line)
        XCTAssertEqual(report.apps, apps([expected]), "\(label) apps", file: file, line: line)
        XCTAssertEqual(report.categories, ranked(expected.categories), "\(label) categories", file: file, line: line)
        XCTAssertEqual(report.webDomains, ranked(expected.web), "\(label) web", file: file, line: line)
        XCTAssertEqual(report.hourlySeconds, hourly(expected), "\(label) hours", file: file, line: line)
        XCTAssertEqual(report.pickups, expected.pickups.values.reduce(0, +), "\(label) pickups", file: file, line: line)
        XCTAssertEqual(report.pickupsByApp, ranked(expected.pickups), "\(label) pickups by app", file: file, line: line)
        XCTAssertEqual(report.firstPickup?.app, expected.firstPickup?.app, "\(label) first pickup", file: file, line: line)
        XCTAssertEqual(report.firstPickup?.at, expected.firstPickup?.at, "\(label) first pickup's time", file: file, line: line)
        XCTAssertEqual(report.notifications, expected.notifications.values.reduce(0, +), "\(label) notifications", file: file, line: line)
        XCTAssertEqual(report.notificationsBySource, ranked(expected.notifications), "\(label) notifications by source", file: file, line: line)
        XCTAssertEqual(report.shieldEncounters, expected.encounters.values.reduce(0, +), "\(label) encounters", file: file, line: line)
        XCTAssertEqual(report.shieldEncountersByTarget, ranked(expected.encounters), "\(label) encounters by target", file: file, line: line)
        XCTAssertEqual(report.gracePassesUsed, expected.grace, "\(label) grace passes", file: file, line: line)
        XCTAssertEqual(report.nudgesUsed, expected.nudges, "\(label) nudges", file: file, line: line)
        XCTAssertEqual(report.end.timeIntervalSince(report.start), Double(hourCount(report.day)) * 3600, "\(label) length", file: file, line: line)
        checkInsights(report.insights, endingOn: report.day, label, file: file, line: line)
    }

    func check(_ report: WeeklyReport, file: StaticString = #filePath, line: UInt = #line) {
        let week = run(report.lastDay.adding(days: -6), report.lastDay), list = week.map { day($0.description) }
        let label = "weekly \(report.lastDay)"
        XCTAssertEqual(report.firstDay, week[0], label, file: file, line: line)
        XCTAssertEqual(report.days.map(\.day), week, "\(label) days", file: file, line: line)
        XCTAssertEqual(report.days.map(\.totalSeconds), list.map(\.total), "\(label) day totals", file: file, line: line)
        XCTAssertEqual(report.days.map(\.pickups), list.map { $0.pickups.values.reduce(0, +) }, "\(label) day pickups", file: file, line: line)
        XCTAssertEqual(report.days.map(\.gracePassesUsed), list.map(\.grace), "\(label) day grace passes", file: file, line: line)
        XCTAssertEqual(report.totalSeconds, list.map(\.total).reduce(0, +), "\(label) total", file: file, line: line)
        XCTAssertEqual(report.apps, apps(list), "\(label) apps", file: file, line: line)
        XCTAssertEqual(report.categories, ranked(merged(list, \.categories)), "\(label) categories", file: file, line: line)
        XCTAssertEqual(report.webDomains, ranked(merged(list, \.web)), "\(label) web", file: file, line: line)
        XCTAssertEqual(report.hourByDay, list.map(hourly), "\(label) hour by day", file: file, line: line)
        XCTAssertEqual(report.pickups, merged(list, \.pickups).values.reduce(0, +), "\(label) pickups", file: file, line: line)
        XCTAssertEqual(report.notifications, merged(list, \.notifications).values.reduce(0, +), "\(label) notifications", file: file, line: line)
        XCTAssertEqual(report.shieldEncounters, merged(list, \.encounters).values.reduce(0, +), "\(label) encounters", file: file, line: line)
        XCTAssertEqual(report.gracePassesUsed, list.map(\.grace).reduce(0, +), "\(label) grace passes", file: file, line: line)
        XCTAssertEqual(report.nudgesUsed, list.map(\.nudges).reduce(0, +), "\(label) nudges", file: file, line: line)
        checkInsights(report.insights, endingOn: report.lastDay, label, file: file, line: line)
    }

    func check(_ report: RangeReport, file: StaticString = #filePath, line: UInt = #line) {
        let days = run(report.firstDay, report.lastDay), list = days.map { day($0.description) }
        let label = "\(report.context.rawValue) \(report.firstDay)…\(report.lastDay)"
        XCTAssertEqual(report.days.map(\.day), days, "\(label) days", file: file, line: line)
        XCTAssertEqual(report.days.map(\.totalSeconds), list.map(\.total), "\(label) day totals", file: file, line: line)
        XCTAssertEqual(report.days.map(\.webSeconds), list.map { $0.web.values.reduce(0, +) }, "\(label) day web", file: file, line: line)
        XCTAssertEqual(report.days.map(\.pickups), list.map { $0.pickups.values.reduce(0, +) }, "\(label) day pickups", file: file, line: line)
        XCTAssertEqual(report.days.map(\.notifications), list.map { $0.notifications.values.reduce(0, +) }, "\(label) day notifications", file: file, line: line)
        XCTAssertEqual(report.days.map(\.shieldEncounters), list.map { $0.encounters.values.reduce(0, +) }, "\(label) day encounters", file: file, line: line)
        XCTAssertEqual(report.days.map(\.gracePassesUsed), list.map(\.grace), "\(label) day grace passes", file: file, line: line)
        let total = list.map(\.total).reduce(0, +)
        XCTAssertEqual(report.totalSeconds, total, "\(label) total", file: file, line: line)
        XCTAssertEqual(report.averageSecondsPerDay, total / Double(days.count), accuracy: 1e-6, "\(label) average per day", file: file, line: line)
        XCTAssertEqual(report.daysWithData, list.filter(\.hasData).count, "\(label) days with data", file: file, line: line)
        XCTAssertEqual(report.apps, apps(list), "\(label) apps", file: file, line: line)
        XCTAssertEqual(report.categories, ranked(merged(list, \.categories)), "\(label) categories", file: file, line: line)
        XCTAssertEqual(report.webDomains, ranked(merged(list, \.web)), "\(label) web", file: file, line: line)
        XCTAssertEqual(report.pickups, merged(list, \.pickups).values.reduce(0, +), "\(label) pickups", file: file, line: line)
        XCTAssertEqual(report.notifications, merged(list, \.notifications).values.reduce(0, +), "\(label) notifications", file: file, line: line)
        XCTAssertEqual(report.shieldEncountersByTarget, ranked(merged(list, \.encounters)), "\(label) encounters", file: file, line: line)
        XCTAssertEqual(report.gracePassesUsed, list.map(\.grace).reduce(0, +), "\(label) grace passes", file: file, line: line)
        XCTAssertEqual(report.nudgesUsed, list.map(\.nudges).reduce(0, +), "\(label) nudges", file: file, line: line)
        XCTAssertEqual(report.end.timeIntervalSince(report.start), Double(days.map(hourCount).reduce(0, +)) * 3600, "\(label) length", file: file, line: line)
    }
}
