import BusTools
import Foundation
import XCTest

/// Where `shieldbus clock jump` and the Studio's *Jump* go, as written: forward by a duration, the next time of day on
/// the device (in its zone), or a local date-time; anything else is refused with what to write.
final class ClockTargetTests: XCTestCase {
    private let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2026-11-24 10:00 in Berlin (UTC+1).
    private let now: Int64 = 1_795_510_800_000

    func testDurationsGoForwardFromNow() throws {
        XCTAssertEqual(try ClockTarget(parsing: "+30m", now: now, timeZone: berlin), .forward(milliseconds: 1_800_000))
        XCTAssertEqual(try ClockTarget(parsing: " +1h30m ", now: now, timeZone: berlin), .forward(milliseconds: 5_400_000))
        XCTAssertEqual(try ClockTarget(parsing: "+90s", now: now, timeZone: berlin).requestFields, ["by": 90_000])
    }

    func testATimeOfDayIsTheNextOneOnTheDevice() throws {
        XCTAssertEqual(try ClockTarget(parsing: "11:00", now: now, timeZone: berlin), .at(now + 3_600_000), "later today")
        XCTAssertEqual(try ClockTarget(parsing: "07:00", now: now, timeZone: berlin), .at(now + 21 * 3_600_000), "passed today: tomorrow's")
        XCTAssertEqual(try ClockTarget(parsing: "10:00", now: now, timeZone: berlin), .at(now + 24 * 3_600_000), "now itself is not ahead")
        XCTAssertEqual(try ClockTarget(parsing: "2026-11-24T07:00", now: now, timeZone: berlin).requestFields, ["time": now - 3 * 3_600_000],
                       "a date-time is taken as written (the broker refuses it when it is not ahead)")
    }

    func testAnythingElseSaysWhatToWrite() {
        for text in ["soon", "+0m", "+30", "25:00", "-30m", ""] {
            XCTAssertThrowsError(try ClockTarget(parsing: text, now: now, timeZone: berlin), text) { error in
                XCTAssertTrue("\(error)".contains("give +30m, +2h, +1h30m"), "\(error)")
            }
        }
    }
}
