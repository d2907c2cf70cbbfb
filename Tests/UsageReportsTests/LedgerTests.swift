import Foundation
import XCTest
@testable import UsageReports

final class LedgerTests: XCTestCase {
    private func hourly(_ values: [Int: TimeInterval]) -> [TimeInterval] {
        (0..<24).map { values[$0] ?? 0 }
    }

    func testDailyReportOfTheFixedSunday() throws {
        let report = try FixedWeek.ledger().dailyReport(for: FixedWeek.sunday)

        XCTAssertEqual(report.context, .daily)
        XCTAssertEqual(report.day, Berlin.day("2026-03-08"))
        // Instagram 600+1200 (08:50–09:20) + 1800+600 (21:30–22:10) + 1200 (00:00–00:20) = 5400;
        // Notes 2700; Mail 1200; WhatsApp 900 → 10200. Web time is not screen time.
        XCTAssertEqual(report.totalSeconds, 10200)
        XCTAssertEqual(report.apps, [
            AppUsageEntry(app: "Instagram", category: "Social", seconds: 5400),
            AppUsageEntry(app: "Notes", category: "Productivity", seconds: 2700),
            AppUsageEntry(app: "Mail", category: "Productivity", seconds: 1200),
            AppUsageEntry(app: "WhatsApp", category: "Social", seconds: 900),
        ])
        // Social 5400 + 900 = 6300; Productivity 2700 + 1200 = 3900.
        XCTAssertEqual(report.categories, [UsageEntry(name: "Social", seconds: 6300),
                                           UsageEntry(name: "Productivity", seconds: 3900)])
        // example.com 1800 + 600 = 2400; news.example 600; the private secret.example hour is absent.
        XCTAssertEqual(report.webDomains, [UsageEntry(name: "example.com", seconds: 2400),
                                           UsageEntry(name: "news.example", seconds: 600)])
        // Pickups: Instagram 2, WhatsApp 2 (tie → by name), Notes 1.
        XCTAssertEqual(report.pickups, 5)
        XCTAssertEqual(report.pickupsByApp, [CountEntry(name: "Instagram", count: 2),
                                             CountEntry(name: "WhatsApp", count: 2),
                                             CountEntry(name: "Notes", count: 1)])
        // 07:45 CET = 06:45 UTC, although the 08:50 pickup was ingested first.
        XCTAssertEqual(report.firstPickup, FirstPickup(app: "WhatsApp", at: utc("2026-03-08T06:45:00Z"), clockTime: "07:45"))
        XCTAssertEqual(report.notifications, 4)
        XCTAssertEqual(report.notificationsBySource, [CountEntry(name: "WhatsApp", count: 3), CountEntry(name: "Mail", count: 1)])
        XCTAssertEqual(report.shieldEncounters, 3)
        XCTAssertEqual(report.shieldEncountersByTarget, [CountEntry(name: "Instagram", count: 2),
                                                         CountEntry(name: "example.com", count: 1)])
        XCTAssertEqual(report.gracePassesUsed, 1)
        XCTAssertEqual(report.nudgesUsed, 2)
        XCTAssertEqual(report.hourlySeconds, hourly([0: 1200, 8: 600, 9: 1200, 10: 2700, 12: 900,
                                                     20: 1200, 21: 1800, 22: 600]))
        XCTAssertEqual(report.start, utc("2026-03-07T23:00:00Z"))
        XCTAssertEqual(report.end, utc("2026-03-08T23:00:00Z"))
    }

    func testWeeklyReportOfTheFixedWeek() throws {
        let report = try FixedWeek.ledger().weeklyReport(endingOn: FixedWeek.sunday)

        XCTAssertEqual(report.context, .weekly)
        XCTAssertEqual(report.firstDay, Berlin.day("2026-03-02"))
        XCTAssertEqual(report.lastDay, Berlin.day("2026-03-08"))
        XCTAssertEqual(report.days.map(\.weekday), ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])
        // Mon 1800+3600, Tue nothing, Wed 2400+1800, Thu 3600, Fri 7200+1800,
        // Sat 1200+3600+1200 (until midnight), Sun 10200.
        XCTAssertEqual(report.days.map(\.totalSeconds), [5400, 0, 4200, 3600, 9000, 6000, 10200])
        XCTAssertEqual(report.totalSeconds, 38400)
        // Instagram 3600+3600+1800+1200+5400; Notes 1800+7200+2700; Mail 2400+3600+1200; WhatsApp 1800+1200+900.
        XCTAssertEqual(report.apps, [
            AppUsageEntry(app: "Instagram", category: "Social", seconds: 15600),
            AppUsageEntry(app: "Notes", category: "Productivity", seconds: 11700),
            AppUsageEntry(app: "Mail", category: "Productivity", seconds: 7200),
            AppUsageEntry(app: "WhatsApp", category: "Social", seconds: 3900),
        ])
        XCTAssertEqual(report.categories, [UsageEntry(name: "Social", seconds: 19500),
                                           UsageEntry(name: "Productivity", seconds: 18900)])
        XCTAssertEqual(report.webDomains, [UsageEntry(name: "example.com", seconds: 3000),
                                           UsageEntry(name: "news.example", seconds: 600)])
        XCTAssertEqual(report.hourByDay.count, 7)
        XCTAssertEqual(report.hourByDay, [
            hourly([9: 1800, 19: 3600]),
            hourly([:]),
            hourly([8: 2400, 18: 1800]),
            hourly([22: 3600]),
            hourly([14: 3600, 15: 3600, 17: 1800]),
            hourly([11: 1200, 15: 3600, 23: 1200]),
            hourly([0: 1200, 8: 600, 9: 1200, 10: 2700, 12: 900, 20: 1200, 21: 1800, 22: 600]),
        ])
        // Pickups Mon 2 + Sat 3 + Sun 5; passes Sat 2 + Sun 1.
        XCTAssertEqual(report.days.map(\.pickups), [2, 0, 0, 0, 0, 3, 5])
        XCTAssertEqual(report.days.map(\.gracePassesUsed), [0, 0, 0, 0, 0, 2, 1])
        XCTAssertEqual(report.pickups, 10)
        XCTAssertEqual(report.notifications, 4)
        XCTAssertEqual(report.shieldEncounters, 3)
        XCTAssertEqual(report.gracePassesUsed, 3)
        XCTAssertEqual(report.nudgesUsed, 2)
    }

    func testInsightsOfTheFixedWeek() throws {
        let insights = try FixedWeek.ledger().weeklyReport(endingOn: FixedWeek.sunday).insights
        XCTAssertEqual(insights.mostUsedApp, "Instagram")
        XCTAssertEqual(insights.mostUsedAppSeconds, 15600)
        // 38400 s over the week's 7 days (Tuesday, without data, counts as 0).
        XCTAssertEqual(insights.daysWithData, 6)
        XCTAssertEqual(insights.averageDailySeconds, 38400.0 / 7)
        // Friday 9000 → Sunday 10200: 10200 ≤ 1.2 × 9000 = 10800 and 9000 ≤ 1.2 × 10200 → stable.
        XCTAssertEqual(insights.trend, .stable)
        XCTAssertEqual(insights.recommendation, "Great job maintaining healthy habits!")
        // Saturday's two passes, reflected back on Sunday morning.
        XCTAssertEqual(insights.yesterdayGracePasses, 2)
        XCTAssertEqual(insights.morningMessage, "Yesterday you used 2 grace passes.")
        // The daily report of the same day carries the same insights.
        XCTAssertEqual(try FixedWeek.ledger().dailyReport(for: FixedWeek.sunday).insights, insights)
    }

    func testSpanAcrossMidnightTouchesBothDays() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        let touched = try ledger.ingest(FixedWeek.app("Instagram", "2026-03-07 23:40", "2026-03-08 00:20"))
        XCTAssertEqual(touched, [Berlin.day("2026-03-07"), Berlin.day("2026-03-08")])
        XCTAssertEqual(ledger.usage(on: Berlin.day("2026-03-07"))?.hourlySeconds[23], 1200)
        XCTAssertEqual(ledger.usage(on: Berlin.day("2026-03-08"))?.hourlySeconds[0], 1200)
    }

    func testPrivateWebUsageChangesNothing() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        let touched = try ledger.ingest(FixedWeek.web("secret.example", "2026-03-08 14:00", "2026-03-08 15:00", isPrivate: true))
        XCTAssertEqual(touched, [])
        XCTAssertEqual(ledger, UsageLedger(timeZone: Berlin.zone))
        XCTAssertTrue(ledger.days.isEmpty)

        let withoutPrivate = try FixedWeek.ledger(FixedWeek.records.filter {
            if case .webUsage(_, _, _, true) = $0 { return false }
            return true
        })
        XCTAssertEqual(try FixedWeek.ledger(), withoutPrivate)
    }

    func testRecordOrderDoesNotMatter() throws {
        XCTAssertEqual(try FixedWeek.ledger(FixedWeek.records.reversed()), try FixedWeek.ledger())
    }

    func testSpringForwardDayHas23HoursAndSkipsTwoOClock() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        let day = Berlin.day("2026-03-29")
        XCTAssertEqual(ledger.dateInterval(of: day).duration, 23 * 3600)
        // 00:30 CET (23:30 UTC) to 04:30 CEST (02:30 UTC): 3 real hours, the clock skips 02:00–03:00.
        try ledger.ingest(.appUsage(app: "Notes", category: "Productivity",
                                    start: utc("2026-03-28T23:30:00Z"), end: utc("2026-03-29T02:30:00Z")))
        let report = ledger.dailyReport(for: utc("2026-03-29T10:00:00Z"))
        XCTAssertEqual(report.day, day)
        XCTAssertEqual(report.totalSeconds, 10800)
        XCTAssertEqual(report.hourlySeconds, hourly([0: 1800, 1: 3600, 3: 3600, 4: 1800]))
        XCTAssertEqual(report.end.timeIntervalSince(report.start), 23 * 3600)
        // The week containing the change is one hour short.
        let week = ledger.weeklyReport(endingOn: utc("2026-03-29T10:00:00Z"))
        XCTAssertEqual(week.end.timeIntervalSince(week.start), 7 * 24 * 3600 - 3600)
        XCTAssertEqual(week.days.map(\.totalSeconds), [0, 0, 0, 0, 0, 0, 10800])
    }

    func testFallBackDayHas25HoursAndCountsTheRepeatedHourTwice() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        let day = Berlin.day("2026-10-25")
        XCTAssertEqual(ledger.dateInterval(of: day).duration, 25 * 3600)
        // 01:00 CEST (23:00 UTC) to 04:00 CET (03:00 UTC): 4 real hours; 02:00–03:00 happens twice.
        try ledger.ingest(.appUsage(app: "Notes", category: "Productivity",
                                    start: utc("2026-10-24T23:00:00Z"), end: utc("2026-10-25T03:00:00Z")))
        let report = ledger.dailyReport(for: utc("2026-10-25T12:00:00Z"))
        XCTAssertEqual(report.totalSeconds, 14400)
        XCTAssertEqual(report.hourlySeconds, hourly([1: 3600, 2: 7200, 3: 3600]))
    }

    func testRetentionKeepsTheLastDaysUpToAsOf() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        for day in 1...11 {
            try ledger.ingest(.notification(source: "Mail", at: Berlin.at("2026-03-\(TwoDigits.pad(day)) 23:30")))
        }
        ledger.retain(days: 7, asOf: Berlin.at("2026-03-10 00:10"))
        // 4…10 March plus the later 11 March.
        XCTAssertEqual(ledger.days.map(\.day.description),
                       ["2026-03-04", "2026-03-05", "2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09",
                        "2026-03-10", "2026-03-11"])
        ledger.retain(days: 0, asOf: Berlin.at("2026-03-10 12:00"))
        XCTAssertEqual(ledger.days.map(\.day.description), ["2026-03-11"])
    }

    func testInvalidRecordsAreRejectedWithPreciseErrors() {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        XCTAssertThrowsError(try ledger.ingest(FixedWeek.app("Notes", "2026-03-08 10:00", "2026-03-08 09:00"))) {
            guard case .spanEndsBeforeStart(subject: "Notes", _, _)? = $0 as? UsageLedgerError else {
                return XCTFail("unexpected \($0)")
            }
            XCTAssertTrue("\($0)".contains("swap or fix the timestamps"))
        }
        XCTAssertThrowsError(try ledger.ingest(.pickup(app: "  ", at: FixedWeek.sunday))) {
            XCTAssertEqual($0 as? UsageLedgerError, .emptyName(field: "app"))
        }
        // Blank in any script: tabs, line breaks, NEL, the ideographic space.
        XCTAssertThrowsError(try ledger.ingest(.shieldEncounter(target: "\t\r\n\u{85}\u{3000}\u{2029}", at: FixedWeek.sunday))) {
            XCTAssertEqual($0 as? UsageLedgerError, .emptyName(field: "shield target"))
        }
        XCTAssertThrowsError(try ledger.ingest(.appUsage(app: "Notes", category: "Productivity",
                                                         start: FixedWeek.sunday, end: FixedWeek.sunday + 8 * 86400))) {
            XCTAssertEqual($0 as? UsageLedgerError,
                           .spanTooLong(subject: "Notes", seconds: 8 * 86400, maximum: UsageLedger.maximumSpan))
        }
        XCTAssertEqual(ledger, UsageLedger(timeZone: Berlin.zone), "a rejected record leaves the ledger unchanged")
    }

    func testLedgerAndDaysRoundTripThroughJSON() throws {
        let ledger = try FixedWeek.ledger()
        let encoder = JSONReportRenderer.makeEncoder(), decoder = JSONReportRenderer.makeDecoder()
        XCTAssertEqual(try decoder.decode(UsageLedger.self, from: encoder.encode(ledger)), ledger)

        var restored = UsageLedger(timeZone: Berlin.zone)
        for day in ledger.days {
            try restored.restore(decoder.decode(DayUsage.self, from: encoder.encode(day)))
        }
        XCTAssertEqual(restored, ledger)

        var tokyo = UsageLedger(timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        XCTAssertThrowsError(try tokyo.restore(ledger.days[0])) {
            XCTAssertEqual($0 as? UsageLedgerError,
                           .timeZoneMismatch(day: Berlin.day("2026-03-02"), ledger: "Asia/Tokyo", found: "Europe/Berlin"))
        }
        let unknown = Data(#"{"timeZone":"Mars/Olympus","days":[]}"#.utf8)
        XCTAssertThrowsError(try decoder.decode(UsageLedger.self, from: unknown)) {
            XCTAssertEqual($0 as? UsageLedgerError, .unknownTimeZone("Mars/Olympus"))
        }
    }

    func testAYearOfRecordsAggregatesIntoDailyBuckets() throws {
        var generator = SyntheticUsage(seed: 42)
        let year = generator.records(days: 365, endingOn: Berlin.day("2026-03-08"))
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(contentsOf: year.records)
        // Memory is per day, not per record: one bucket per day (sessions may spill into 9 March).
        XCTAssertGreaterThan(year.records.count, 8_000)
        XCTAssertTrue((365...366).contains(ledger.days.count), "\(ledger.days.count) buckets")
        // Every second of every span lands in exactly one hour of one day (including both DST changes).
        XCTAssertEqual(ledger.days.map(\.totalSeconds).reduce(0, +), year.appSeconds)
        let week = ledger.weeklyReport(endingOn: FixedWeek.sunday)
        XCTAssertEqual(week.hourByDay.map { $0.reduce(0, +) }, week.days.map(\.totalSeconds))
        XCTAssertEqual(week.apps.map(\.seconds).reduce(0, +), week.totalSeconds)

        ledger.retain(days: 30, asOf: FixedWeek.sunday)
        XCTAssertEqual(ledger.days.first?.day, Berlin.day("2026-02-07"))
    }

    func testLocalDayArithmetic() {
        XCTAssertNil(LocalDay(year: 2026, month: 2, day: 29))
        XCTAssertNotNil(LocalDay(year: 2028, month: 2, day: 29))
        XCTAssertEqual(Berlin.day("2026-02-28").adding(days: 1), Berlin.day("2026-03-01"))
        XCTAssertEqual(Berlin.day("2026-01-01").adding(days: -1), Berlin.day("2025-12-31"))
        XCTAssertEqual(Berlin.day("2026-03-08").weekday, 7)
        XCTAssertEqual(Berlin.day("2026-03-02").shortWeekdayName, "Mon")
        XCTAssertNil(LocalDay("2026-3-8"))
    }
}
