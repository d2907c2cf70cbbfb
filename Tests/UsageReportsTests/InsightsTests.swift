import Foundation
import XCTest
@testable import UsageReports

final class InsightsTests: XCTestCase {
    /// A ledger whose days 6, 7 and 8 March hold `seconds[i]` of use of `apps[i]`
    /// (nil: no record that day); insights are read for 8 March.
    private func insights(_ seconds: [Int?], apps: [String] = ["Alpha", "Alpha", "Alpha"]) throws -> Insights {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        for (index, value) in seconds.enumerated() {
            guard let value else { continue }
            let start = Berlin.at("2026-03-0\(6 + index) 08:00")
            try ledger.ingest(.appUsage(app: apps[index], category: "Social", start: start, end: start + TimeInterval(value)))
        }
        return ledger.dailyReport(for: FixedWeek.sunday).insights
    }

    func testTrendAtTheTwentyPercentEdges() throws {
        // 3000 → 3600 is exactly +20%: not more than 20%, so stable.
        XCTAssertEqual(try insights([3000, 100, 3600]).trend, .stable)
        // 3000 → 3601 is more than +20%.
        XCTAssertEqual(try insights([3000, 100, 3601]).trend, .increasing)
        // 3600 → 3000: the first is exactly 1.2 × the last, so stable.
        XCTAssertEqual(try insights([3600, 100, 3000]).trend, .stable)
        // 3601 → 3000: the first exceeds 1.2 × the last.
        XCTAssertEqual(try insights([3601, 100, 3000]).trend, .decreasing)
        // The middle day plays no part, as in the seed's rule.
        XCTAssertEqual(try insights([3000, 50_000, 3000]).trend, .stable)
        // A day without data counts as zero.
        XCTAssertEqual(try insights([nil, nil, 60]).trend, .increasing)
        XCTAssertEqual(try insights([60, nil, nil]).trend, .decreasing)
        XCTAssertEqual(Insights.Trend(firstDaySeconds: 0, lastDaySeconds: 0), .stable)
    }

    func testRisingTrendRecommendsLimitingTheMostUsedApp() throws {
        // Alpha 3000 vs Beta 3601 + 200: Beta is the most used app of the week.
        let result = try insights([3000, 200, 3601], apps: ["Alpha", "Beta", "Beta"])
        XCTAssertEqual(result.mostUsedApp, "Beta")
        XCTAssertEqual(result.mostUsedAppSeconds, 3801)
        XCTAssertEqual(result.recommendation, "Your screen time is rising. Try limiting Beta.")
    }

    func testBreakRecommendationNeedsMoreThanThreeHoursADay() throws {
        // Exactly 3 h a day on average (3 × 25200 s = 7 × 10800 s) is not over 3 h.
        XCTAssertEqual(try insights([25200, 25200, 25200]).recommendation, "Great job maintaining healthy habits!")
        XCTAssertEqual(try insights([25201, 25201, 25201]).recommendation, "Over 3h daily — schedule some breaks!")
        // A falling trend with a high average still asks for breaks.
        let falling = try insights([40000, 40000, 30000])
        XCTAssertEqual(falling.trend, .decreasing)
        XCTAssertEqual(falling.recommendation, "Over 3h daily — schedule some breaks!")
        // Rising wins over a high average.
        XCTAssertEqual(Insights.recommendation(trend: .increasing, averageDailySeconds: 20000, mostUsedApp: "Maps"),
                       "Your screen time is rising. Try limiting Maps.")
    }

    func testAverageDividesTheWeekBySevenAsTheMediumSeriesDoes() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(FixedWeek.app("Notes", "2026-03-08 08:00", "2026-03-08 10:00"))
        // A notification alone makes Saturday a day with data (and zero screen time).
        try ledger.ingest(.notification(source: "Mail", at: Berlin.at("2026-03-07 09:00")))
        let result = ledger.dailyReport(for: FixedWeek.sunday).insights
        XCTAssertEqual(result.daysWithData, 2)
        XCTAssertEqual(result.averageDailySeconds, 7200.0 / 7, "the week over its 7 days, days without data as 0")

        let empty = UsageLedger(timeZone: Berlin.zone).dailyReport(for: FixedWeek.sunday).insights
        XCTAssertEqual(empty.daysWithData, 0)
        XCTAssertEqual(empty.averageDailySeconds, 0)
        XCTAssertNil(empty.mostUsedApp)
        XCTAssertEqual(empty.trend, .stable)
        XCTAssertEqual(empty.recommendation, "Great job maintaining healthy habits!")
    }

    /// Four days of 4 h 30 m: 4.5 h a day with data, but 18 h ÷ 7 ≈ 2.6 h a day — under the 3-hour line, so praise,
    /// as the seed's insights view would say (over the days with data it would ask for breaks).
    func testTheRecommendationFollowsTheWeekDividedBySeven() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        for day in ["2026-03-02", "2026-03-04", "2026-03-06", "2026-03-08"] {
            try ledger.ingest(FixedWeek.app("Maps", "\(day) 08:00", "\(day) 12:30"))
        }
        let insights = ledger.weeklyReport(endingOn: FixedWeek.sunday).insights
        XCTAssertEqual(insights.averageDailySeconds, 4 * 16200 / 7)
        XCTAssertEqual(insights.trend, .stable)
        XCTAssertEqual(insights.recommendation, "Great job maintaining healthy habits!")
    }

    func testMostUsedAppTieIsBrokenByName() throws {
        let result = try insights([1800, nil, 1800], apps: ["Zebra", "", "Aardvark"])
        XCTAssertEqual(result.mostUsedApp, "Aardvark")
    }

    func testMorningMessageReflectsYesterdaysGracePasses() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(.gracePassUsed(at: Berlin.at("2026-03-07 22:00")))
        // Today's pass is not yesterday's.
        try ledger.ingest(.gracePassUsed(at: Berlin.at("2026-03-08 07:00")))
        XCTAssertEqual(ledger.dailyReport(for: FixedWeek.sunday).insights.morningMessage, "Yesterday you used 1 grace pass.")
        XCTAssertEqual(ledger.dailyReport(for: Berlin.at("2026-03-09 07:00")).insights.morningMessage,
                       "Yesterday you used 1 grace pass.")
        XCTAssertEqual(ledger.dailyReport(for: Berlin.at("2026-03-07 07:00")).insights.morningMessage,
                       "Yesterday you used 0 grace passes.")
    }
}
