import AppGroupStore
import BusProtocol
import Foundation
import ShieldBusTestSupport
import UsageReports
import XCTest

/// The report builder's monthly roll-ups (`reports.month.YYYY-MM`): written at midnight through the real broker,
/// summing exactly the stored days; taken by `shieldbus report` for whole months while they do, and passed over once
/// a day changed.
final class MonthRollupStoreTests: XCTestCase {
    /// Four days across the end of November 2026: at the midnight that starts December, November's roll-up sums its
    /// stored days as they are, and the monthly report read from the store is the one the builder answered.
    func testTheBuilderRollsUpAFinishedMonth() throws {
        let state = TemporaryDirectory(prefix: "sbrollup")
        let scenario = """
        name: month-end
        start: 2026-11-28T07:00
        end: day 4 10:01
        steps:
          - {at: "07:10", open: Instagram}
          - {at: "07:40", home: true}
          - {at: "day 2 12:00", visit: "https://www.reddit.com/"}
          - {at: "day 2 12:20", home: true}
          - {at: "day 3 23:30", open: TikTok}
          - {at: "day 4 00:15", home: true}
          - {at: "day 4 10:00", publish: {topic: report.monthly.request, body: {month: "2026-11"}}}
        """
        let run = try ScenarioRun.run(configuration: ReportBuilderTests.configuration(retentionDays: 36_500), scenario: scenario,
                                      stateDirectory: state.path)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let answered = try ReportBuilderTests.value(RangeReport.self, of: run.events("report.monthly.reply").first)
        XCTAssertEqual(answered.totalSeconds, 1800 + 1800, "Instagram 30 min, TikTok 23:30–24:00")

        let rolledUp = run.events("state.changed").filter { $0.bodyValue["key"] == "reports.month.2026-11" }
        XCTAssertFalse(rolledUp.isEmpty, "November rolled up at a midnight")
        XCTAssertEqual(rolledUp.last?.time, busTime("2026-11-30T23:00:00Z"), "last at the midnight that ends November")

        let defaults = try SharedDefaults(suiteName: "group.test.reports", container: AppGroupContainer(root: URL(fileURLWithPath: state.file("appgroups"))))
        let rollup = try XCTUnwrap(defaults.value(MonthRollup.self, forKey: "reports.month.2026-11"))
        var stored: [LocalDay: Int64] = [:]
        for (key, entry) in try defaults.dictionaryRepresentation() {
            if let day = StoredDayKey.day(ofKey: key), day.month == 11 { stored[day] = entry.version }
        }
        XCTAssertEqual(stored.keys.sorted().map(\.description), ["2026-11-28", "2026-11-29", "2026-11-30"])
        XCTAssertTrue(rollup.sums(stored, timeZoneIdentifier: "Europe/Berlin"), "the roll-up sums the stored days: \(rollup.dayVersions) vs \(stored)")

        let command = try ReportBuilderTests.shieldbus(["report", "monthly", "--month", "2026-11", "--json", "--state-dir", state.path])
        XCTAssertEqual(command.status, 0, command.errors)
        XCTAssertEqual(try JSONReportRenderer.makeDecoder().decode(RangeReport.self, from: Data(command.output.utf8)), answered)
    }

    /// A store of October's days with a roll-up that names their versions but sums other numbers: the command shows
    /// the roll-up's numbers for the whole month (so it took it) and the days' for a part of it; once a day is
    /// written again the roll-up no longer sums the days, and the days' numbers come back.
    func testTheCommandTakesARollupOnlyWhileItSumsTheStoredDays() throws {
        let state = TemporaryDirectory(prefix: "sbrollup")
        let container = AppGroupContainer(root: URL(fileURLWithPath: state.file("appgroups")))
        try container.createGroup("group.test.reports")
        let defaults = try SharedDefaults(suiteName: "group.test.reports", container: container, writer: SharedDefaults.administrator)
        let zone = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        var ledger = UsageLedger(timeZone: zone), other = UsageLedger(timeZone: zone)
        for day in 1...31 {
            let start = try XCTUnwrap(ISO8601DateFormatter().date(from: String(format: "2026-10-%02dT06:00:00Z", day)))
            try ledger.ingest(.appUsage(app: "Maps", category: "Travel", start: start, end: start + 600))
            try other.ingest(.appUsage(app: "Chess", category: "Games", start: start, end: start + 60))
        }
        var versions: [(usage: DayUsage, version: Int64)] = []
        for usage in ledger.days { versions.append((usage, try defaults.set(usage, forKey: StoredDayKey.key(usage.day)).version)) }
        let october = try XCTUnwrap(LocalMonth("2026-10"))
        let doctored = MonthRollup(month: october, timeZoneIdentifier: zone.identifier,
                                   days: zip(other.days, versions).map { ($0, $1.version) })
        _ = try defaults.set(doctored, forKey: StoredDayKey.key(october))

        func report(_ arguments: [String]) throws -> RangeReport {
            let command = try ReportBuilderTests.shieldbus(["report"] + arguments + ["--json", "--state-dir", state.path])
            XCTAssertEqual(command.status, 0, command.errors)
            return try JSONReportRenderer.makeDecoder().decode(RangeReport.self, from: Data(command.output.utf8))
        }
        XCTAssertEqual(try report(["monthly", "--month", "2026-10"]).apps.map(\.app), ["Chess"], "the whole month: its roll-up")
        XCTAssertEqual(try report(["range", "--from", "2026-09-20", "--to", "2026-11-02"]).totalSeconds, 31 * 60)
        XCTAssertEqual(try report(["range", "--from", "2026-10-02", "--to", "2026-10-31"]).apps.map(\.app), ["Maps"], "a part: its days")

        _ = try defaults.set(ledger.days[4], forKey: StoredDayKey.key(ledger.days[4].day))
        let month = try report(["monthly", "--month", "2026-10"])
        XCTAssertEqual(month.apps.map(\.app), ["Maps"], "a day written since: the days")
        XCTAssertEqual(month.days, try report(["range", "--from", "2026-10-01", "--to", "2026-10-31"]).days)
        XCTAssertEqual(month.totalSeconds, 31 * 600)
    }

    func busTime(_ text: String) -> BusTime { BusTime(ReportBuilderTests.utc(text).timeIntervalSince1970 * 1000) }
}
