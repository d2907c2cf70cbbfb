import Configuration
import Foundation
import MonitorKit
import XCTest

/// The products' readings of the wall clock — a day's key, a time of day, a window's weekday, a schedule's wall time to
/// the second — are what `Calendar`'s Gregorian calendar reads for the same instant in the same zone, though they are
/// worked out from the zone's offset without making a calendar: around every offset change 1900–2100 (to the
/// millisecond either side), zones whose offsets are not whole hours or whose old offsets are not whole minutes,
/// instants before 1970, and dates before the Gregorian calendar's first day, which `Calendar` counts as Julian.
final class WallClockReadingTests: XCTestCase {
    private static let zones = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe",
                                "Asia/Kolkata", "Asia/Kathmandu", "Pacific/Kiritimati", "Pacific/Pago_Pago", "America/St_Johns",
                                "Europe/Dublin", "Africa/Casablanca", "America/Sao_Paulo", "Pacific/Chatham", "Europe/Amsterdam",
                                "Asia/Tehran", "America/Santiago"]

    /// 1900-01-01 and 2100-01-01, UTC.
    private static let first = Date(timeIntervalSince1970: -2_208_988_800)
    private static let last = Date(timeIntervalSince1970: 4_102_444_800)

    /// Each instant the zone's offset changes (as Foundation's time zone reports them), 1900–2100.
    private static func transitions(in zone: TimeZone) -> [Date] {
        var transitions: [Date] = []
        while let next = zone.nextDaylightSavingTimeTransition(after: transitions.last ?? first), next < last { transitions.append(next) }
        return transitions
    }

    /// Instants in `zone`: spread over 1900–2100 to the millisecond, and around each of its offset changes.
    private static func instants(in zone: TimeZone) -> [Date] {
        var generator = SeededRandom(seed: UInt64(truncatingIfNeeded: zone.identifier.utf8.reduce(7) { $0 &* 31 &+ Int($1) }))
        let dates = (0..<1_500).map { _ in
            Date(timeIntervalSince1970: Double(Int64(generator.next() % 6_311_390_400_000) - 2_208_988_800_000) / 1_000)
        }
        let aroundChanges = transitions(in: zone).flatMap { change in [-3_600, -1, -0.001, 0, 0.001, 1, 3_600].map { change.addingTimeInterval($0) } }
        return dates + aroundChanges + [-0.5, -1, -86_400.25, 0].map { Date(timeIntervalSince1970: $0) }
    }

    /// Every day on which Berlin's offset differs from the day before's, 1900–2100 (read a day at a time, apart from
    /// the transitions), holds one of the changes the readings are compared around.
    func testTheReadingsAreComparedAroundEveryOffsetChange() throws {
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        let changes = Self.transitions(in: berlin)
        var (day, offset, changedDays) = (Self.first, berlin.secondsFromGMT(for: Self.first), 0)
        while day < Self.last {
            let next = day.addingTimeInterval(86_400)
            let nextOffset = berlin.secondsFromGMT(for: next)
            if nextOffset != offset {
                changedDays += 1
                XCTAssertTrue(changes.contains { $0 > day && $0 <= next }, "Berlin's offset changes after \(day) and no instant is compared around it")
            }
            (day, offset) = (next, nextOffset)
        }
        XCTAssertGreaterThan(changedDays, 0, "Berlin's offset never changed 1900–2100: this host's zone data is missing")
    }

    func testDayKeysTimesOfDayAndWeekdaysAreTheCalendarsInEveryZone() throws {
        for identifier in Self.zones {
            let zone = try XCTUnwrap(TimeZone(identifier: identifier))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            for date in Self.instants(in: zone) {
                let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .weekday], from: date)
                let key = String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
                XCTAssertEqual(DayKey.string(date, in: zone), key, "\(identifier) \(date.timeIntervalSince1970)")
                XCTAssertEqual(ClockTime(of: date, in: zone).minuteOfDay, c.hour! * 60 + c.minute!, "\(identifier) \(date.timeIntervalSince1970)")
                // A schedule's wall time (`TrueTimeSchedules`), to the second, as the calendar gives it.
                XCTAssertEqual(DateComponents(wallTimeOf: date, in: zone), calendar.dateComponents([.hour, .minute, .second], from: date),
                               "\(identifier) \(date.timeIntervalSince1970)")
                // Midnight to midnight on one weekday: inside exactly on the days the calendar names so.
                let window = WallClockWindow(start: ClockTime(minuteOfDay: 0), end: ClockTime(minuteOfDay: 0), weekdays: [c.weekday!])
                XCTAssertTrue(window.contains(date, in: zone), "\(identifier) \(date.timeIntervalSince1970)")
                let otherDay = WallClockWindow(start: ClockTime(minuteOfDay: 0), end: ClockTime(minuteOfDay: 0), weekdays: [c.weekday! % 7 + 1])
                XCTAssertFalse(otherDay.contains(date, in: zone), "\(identifier) \(date.timeIntervalSince1970)")
            }
        }
    }

    /// Before 15 October 1582 `Calendar` counts Julian dates, and a day's key is its date; the weekdays run on unbroken.
    func testDatesBeforeTheGregorianCalendarAreTheCalendarsJulianDates() throws {
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = berlin
        // 1582-10-04 (Julian, Thursday), the day before 1582-10-15 (Gregorian, Friday); and dates in 1500.
        for date in [-12_219_292_800.0, -12_219_379_200.0, -14_831_769_600.0, -14_800_000_000.5].map(Date.init(timeIntervalSince1970:)) {
            let c = calendar.dateComponents([.year, .month, .day, .weekday], from: date)
            XCTAssertEqual(DayKey.string(date, in: berlin), String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!), "\(date.timeIntervalSince1970)")
            XCTAssertTrue(WallClockWindow(start: ClockTime(minuteOfDay: 0), end: ClockTime(minuteOfDay: 0), weekdays: [c.weekday!]).contains(date, in: berlin))
            XCTAssertEqual(DateComponents(wallTimeOf: date, in: berlin), calendar.dateComponents([.hour, .minute, .second], from: date), "\(date.timeIntervalSince1970)")
        }
        XCTAssertEqual(DayKey.string(Date(timeIntervalSince1970: -12_219_292_800), in: TimeZone(identifier: "UTC")!), "1582-10-15")
        XCTAssertEqual(DayKey.string(Date(timeIntervalSince1970: -12_219_292_801), in: TimeZone(identifier: "UTC")!), "1582-10-04")
    }
}

