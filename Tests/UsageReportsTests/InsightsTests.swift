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
        // Exactly 3 h a day on average is not over 3 h.
        XCTAssertEqual(try insights([10800, 10800, 10800]).recommendation, "Great job maintaining healthy habits!")
        XCTAssertEqual(try insights([10801, 10801, 10801]).recommendation, "Over 3h daily — schedule some breaks!")
        // A falling trend with a high average still asks for breaks.
        let falling = try insights([20000, 20000, 12000])
        XCTAssertEqual(falling.trend, .decreasing)
        XCTAssertEqual(falling.recommendation, "Over 3h daily — schedule some breaks!")
        // Rising wins over a high average.
        XCTAssertEqual(Insights.recommendation(trend: .increasing, averageDailySeconds: 20000, mostUsedApp: "Maps"),
                       "Your screen time is rising. Try limiting Maps.")
    }

    func testAverageCountsOnlyDaysWithAnyData() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(FixedWeek.app("Notes", "2026-03-08 08:00", "2026-03-08 10:00"))
        // A notification alone makes Saturday a day with data (and zero screen time).
        try ledger.ingest(.notification(source: "Mail", at: Berlin.at("2026-03-07 09:00")))
        let result = ledger.dailyReport(for: FixedWeek.sunday).insights
        XCTAssertEqual(result.daysWithData, 2)
        XCTAssertEqual(result.averageDailySeconds, 3600)

        let empty = UsageLedger(timeZone: Berlin.zone).dailyReport(for: FixedWeek.sunday).insights
        XCTAssertEqual(empty.daysWithData, 0)
        XCTAssertEqual(empty.averageDailySeconds, 0)
        XCTAssertNil(empty.mostUsedApp)
        XCTAssertEqual(empty.trend, .stable)
        XCTAssertEqual(empty.recommendation, "Great job maintaining healthy habits!")
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
