import Foundation
import MonitorKit
import XCTest

/// The products' day keys: the day before a key is the calendar's previous date (what Focus Window's shield reads
/// "yesterday's" grace passes under), not the date 24 hours earlier, which a 23- or 25-hour day gets wrong.
final class DayKeyTests: XCTestCase {
    func testTheDayBeforeIsThePreviousDateAcrossDaylightSavingDaysAndMonthEnds() {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        // 23:30 on Sunday 25 October 2026, Berlin's 25-hour day: 24 hours earlier it was 00:30 the same day.
        let lateOnALongDay = Date(timeIntervalSince1970: 1_792_967_400)
        XCTAssertEqual(DayKey.string(lateOnALongDay, in: berlin), "2026-10-25")
        XCTAssertEqual(DayKey.string(lateOnALongDay.addingTimeInterval(-86_400), in: berlin), "2026-10-25", "24 hours back is the same date")
        XCTAssertEqual(DayKey.dayBefore(DayKey.string(lateOnALongDay, in: berlin)), "2026-10-24")
        // 00:30 on Monday 30 March 2026, after Berlin's 23-hour day: 24 hours earlier it was two dates back.
        let earlyAfterAShortDay = Date(timeIntervalSince1970: 1_774_823_400)
        XCTAssertEqual(DayKey.string(earlyAfterAShortDay, in: berlin), "2026-03-30")
        XCTAssertEqual(DayKey.string(earlyAfterAShortDay.addingTimeInterval(-86_400), in: berlin), "2026-03-28", "24 hours back skips a date")
        XCTAssertEqual(DayKey.dayBefore(DayKey.string(earlyAfterAShortDay, in: berlin)), "2026-03-29")

        XCTAssertEqual(DayKey.dayBefore("2026-03-01"), "2026-02-28")
        XCTAssertEqual(DayKey.dayBefore("2028-03-01"), "2028-02-29")
        XCTAssertEqual(DayKey.dayBefore("2027-01-01"), "2026-12-31")
        XCTAssertNil(DayKey.dayBefore("2026-02-30"), "a key naming no date has no day before")
        XCTAssertNil(DayKey.dayBefore("yesterday"))
    }
}
