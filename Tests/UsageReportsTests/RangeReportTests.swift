import Foundation
import XCTest
@testable import UsageReports
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Monthly and range reports: their numbers are the sums of their days' reports, whatever the run.
final class RangeReportTests: XCTestCase {
    /// 120 generated days around both 2026 DST changes; many runs inside them against the daily reports.
    func testARunIsTheSumOfItsDays() throws {
        var generator = SyntheticUsage(seed: 11)
        var ledger = UsageLedger(timeZone: Berlin.zone)
        let last = Berlin.day("2026-11-15")
        try ledger.ingest(contentsOf: generator.records(days: 260, endingOn: last).records)
        var random = SyntheticUsage(seed: 5)
        for _ in 0..<60 {
            let first = last.adding(days: -random.next(250))
            let end = first.adding(days: random.next(60))
            let report = try ledger.rangeReport(from: first, to: min(end, last))
            let dailies = report.days.map { ledger.dailyReport(for: ledger.dateInterval(of: $0.day).start) }
            XCTAssertEqual(report.days.map(\.day), dailies.map(\.day))
            XCTAssertEqual(report.totalSeconds, dailies.map(\.totalSeconds).reduce(0, +), accuracy: 1e-6)
            XCTAssertEqual(report.days.map(\.totalSeconds), dailies.map(\.totalSeconds))
            XCTAssertEqual(report.pickups, dailies.map(\.pickups).reduce(0, +))
            XCTAssertEqual(report.notifications, dailies.map(\.notifications).reduce(0, +))
            XCTAssertEqual(report.shieldEncounters, dailies.map(\.shieldEncounters).reduce(0, +))
            XCTAssertEqual(report.averageSecondsPerDay, report.totalSeconds / Double(dailies.count), accuracy: 1e-9)
            XCTAssertEqual(report.start, dailies.first?.start)
            XCTAssertEqual(report.end, dailies.last?.end)
            var apps: [String: TimeInterval] = [:]
            for daily in dailies { for app in daily.apps { apps[app.app, default: 0] += app.seconds } }
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: report.apps.map { ($0.app, $0.seconds) }).mapValues { ($0 * 1000).rounded() },
                           apps.mapValues { ($0 * 1000).rounded() })
        }
    }

    func testAMonthIsItsCalendarMonthAndTheWeekAgreesWithTheRange() throws {
        var generator = SyntheticUsage(seed: 3)
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(contentsOf: generator.records(days: 70, endingOn: Berlin.day("2026-03-31")).records)
        let february = ledger.monthlyReport(for: try XCTUnwrap(LocalMonth("2026-02")))
        XCTAssertEqual(february.context, .monthly)
        XCTAssertEqual([february.firstDay, february.lastDay].map(\.description), ["2026-02-01", "2026-02-28"])
        XCTAssertEqual(february.days.count, 28)
        XCTAssertEqual(ledger.monthlyReport(for: try XCTUnwrap(LocalMonth("2028-02"))).days.count, 29, "a leap year")
        // March 2026 holds the spring-forward day: 31 days, 743 hours.
        let march = ledger.monthlyReport(for: try XCTUnwrap(LocalMonth("2026-03")))
        XCTAssertEqual(march.end.timeIntervalSince(march.start), 743 * 3600)

        let week = ledger.weeklyReport(endingOn: FixedWeek.sunday)
        let range = try ledger.rangeReport(from: week.firstDay, to: week.lastDay)
        XCTAssertEqual(range.totalSeconds, week.totalSeconds)
        XCTAssertEqual(range.apps, week.apps)
        XCTAssertEqual(range.webDomains, week.webDomains)
        XCTAssertEqual(range.averageSecondsPerDay, week.insights.averageDailySeconds, "the same rule: the total over every day")
    }

    func testBadRunsAreRefusedWithTheReason() {
        let ledger = UsageLedger(timeZone: Berlin.zone)
        XCTAssertThrowsError(try ledger.rangeReport(from: Berlin.day("2026-03-08"), to: Berlin.day("2026-03-01"))) {
            XCTAssertEqual($0 as? ReportRangeError, .endsBeforeStart(from: Berlin.day("2026-03-08"), to: Berlin.day("2026-03-01")))
        }
        XCTAssertThrowsError(try ledger.rangeReport(from: Berlin.day("2025-01-01"), to: Berlin.day("2026-03-01"))) {
            XCTAssertEqual(($0 as? ReportRangeError)?.description, "2025-01-01 … 2026-03-01 is 425 days; a report covers at most 400 days")
        }
        XCTAssertNil(LocalMonth("2026-13"))
        XCTAssertNil(LocalMonth("2026-1"))
    }

    func testTheRangeRenderings() throws {
        var generator = SyntheticUsage(seed: 9)
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(contentsOf: generator.records(days: 40, endingOn: Berlin.day("2026-03-31")).records)
        let march = ledger.monthlyReport(for: try XCTUnwrap(LocalMonth("2026-03")))
        let text = TerminalReportRenderer().render(march)
        XCTAssertTrue(text.hasPrefix("Monthly report · March 2026 · Europe/Berlin\n"), text)
        XCTAssertEqual(text.components(separatedBy: "\n").filter { $0.hasPrefix("Sun ") }.count, 5, "a line per day: five Sundays")
        let html = HTMLReportRenderer().render(range: march)
        #if canImport(FoundationXML) || os(macOS)
        let document = try XMLDocument(xmlString: html, options: [])
        XCTAssertEqual(try document.nodes(forXPath: "//svg[@class='chart calendar']/rect[title]").count, 31)
        XCTAssertEqual(try document.nodes(forXPath: "//svg[@class='chart day-bars']/rect[title]").count,
                       march.days.filter { $0.totalSeconds > 0 }.count)
        #endif
        XCTAssertTrue(html.contains("the total ÷ 31 days"))
        XCTAssertEqual(try JSONReportRenderer.makeDecoder().decode(RangeReport.self, from: Data(try JSONReportRenderer().render(march).utf8)), march)
    }
}
