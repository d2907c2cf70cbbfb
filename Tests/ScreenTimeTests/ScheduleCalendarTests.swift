import XCTest
import CivilCalendar
@testable import ScreenTime

/// New York is UTC-5 (EST) and UTC-4 (EDT, 2026-03-08 to 2026-11-01); Berlin is UTC+1 (CET)
/// and UTC+2 (CEST, 2026-03-29 to 2026-10-25). Expected instants are written in UTC.
final class ScheduleCalendarTests: XCTestCase {
    func daily(_ startHour: Int, _ startMinute: Int, _ endHour: Int, _ endMinute: Int,
               repeats: Bool = true, warning: DateComponents? = nil) -> DeviceActivitySchedule {
        DeviceActivitySchedule(intervalStart: DateComponents(hour: startHour, minute: startMinute),
                               intervalEnd: DateComponents(hour: endHour, minute: endMinute),
                               repeats: repeats, warningTime: warning)
    }

    // MARK: Plain schedules

    func testDailyNextIntervalBeforeStart() {
        let interval = newYork.nextInterval(for: daily(9, 0, 17, 0), at: utc("2026-06-10T12:00:00Z"))
        XCTAssertEqual(interval, utcInterval("2026-06-10T13:00:00Z", "2026-06-10T21:00:00Z"))
    }

    func testDailyCurrentIntervalWhenInside() {
        let interval = newYork.nextInterval(for: daily(9, 0, 17, 0), at: utc("2026-06-10T14:00:00Z"))
        XCTAssertEqual(interval, utcInterval("2026-06-10T13:00:00Z", "2026-06-10T21:00:00Z"))
    }

    func testIntervalBoundariesAreHalfOpen() {
        let schedule = daily(9, 0, 17, 0)
        XCTAssertEqual(newYork.nextInterval(for: schedule, at: utc("2026-06-10T13:00:00Z")),
                       utcInterval("2026-06-10T13:00:00Z", "2026-06-10T21:00:00Z"), "at the start instant the interval has begun")
        XCTAssertEqual(newYork.nextInterval(for: schedule, at: utc("2026-06-10T21:00:00Z")),
                       utcInterval("2026-06-11T13:00:00Z", "2026-06-11T21:00:00Z"), "at the end instant the interval is over")
        XCTAssertEqual(newYork.nextInterval(for: schedule, at: utc("2026-06-10T20:59:59Z")),
                       utcInterval("2026-06-10T13:00:00Z", "2026-06-10T21:00:00Z"))
    }

    func testCrossingMidnightEndsNextDay() {
        let night = daily(22, 0, 6, 0)
        XCTAssertEqual(newYork.nextInterval(for: night, at: utc("2026-06-10T12:00:00Z")),
                       utcInterval("2026-06-11T02:00:00Z", "2026-06-11T10:00:00Z"))
        XCTAssertEqual(newYork.nextInterval(for: night, at: utc("2026-06-11T05:00:00Z")),
                       utcInterval("2026-06-11T02:00:00Z", "2026-06-11T10:00:00Z"), "01:00 local is inside the night that began at 22:00")
    }

    func testWeekdaySchedules() {
        // 2026-06-10 is a Wednesday. Weekdays: 1 Sunday ... 7 Saturday.
        let mondays = DeviceActivitySchedule(intervalStart: DateComponents(hour: 9, minute: 0, weekday: 2),
                                             intervalEnd: DateComponents(hour: 17, minute: 0, weekday: 2), repeats: true)
        XCTAssertEqual(newYork.nextInterval(for: mondays, at: utc("2026-06-10T12:00:00Z")),
                       utcInterval("2026-06-15T13:00:00Z", "2026-06-15T21:00:00Z"))
        let weekend = DeviceActivitySchedule(intervalStart: DateComponents(hour: 18, minute: 0, weekday: 6),
                                             intervalEnd: DateComponents(hour: 8, minute: 0, weekday: 2), repeats: true)
        XCTAssertEqual(newYork.nextInterval(for: weekend, at: utc("2026-06-10T12:00:00Z")),
                       utcInterval("2026-06-12T22:00:00Z", "2026-06-15T12:00:00Z"), "Friday evening to the next Monday")
        XCTAssertEqual(newYork.nextInterval(for: weekend, at: utc("2026-06-14T12:00:00Z")),
                       utcInterval("2026-06-12T22:00:00Z", "2026-06-15T12:00:00Z"), "Sunday is inside it")
        XCTAssertEqual(Array(newYork.intervals(for: weekend, from: utc("2026-06-10T12:00:00Z")).prefix(2)).last,
                       utcInterval("2026-06-19T22:00:00Z", "2026-06-22T12:00:00Z"))
    }

    func testRepeatingSequenceAndNonRepeatingSingleInterval() {
        let now = utc("2026-06-10T12:00:00Z")
        let repeating = Array(newYork.intervals(for: daily(22, 0, 6, 0), from: now).prefix(3))
        XCTAssertEqual(repeating, [
            utcInterval("2026-06-11T02:00:00Z", "2026-06-11T10:00:00Z"),
            utcInterval("2026-06-12T02:00:00Z", "2026-06-12T10:00:00Z"),
            utcInterval("2026-06-13T02:00:00Z", "2026-06-13T10:00:00Z"),
        ])
        let once = Array(newYork.intervals(for: daily(22, 0, 6, 0, repeats: false), from: now))
        XCTAssertEqual(once, [utcInterval("2026-06-11T02:00:00Z", "2026-06-11T10:00:00Z")])
    }

    func testBackToBackIntervalsWhenStartEqualsEnd() {
        let allDay = daily(0, 0, 0, 0)
        let intervals = Array(utcCalendar.intervals(for: allDay, from: utc("2026-06-10T12:00:00Z")).prefix(2))
        XCTAssertEqual(intervals, [utcInterval("2026-06-10T00:00:00Z", "2026-06-11T00:00:00Z"),
                                   utcInterval("2026-06-11T00:00:00Z", "2026-06-12T00:00:00Z")])
    }

    func testWarnings() {
        let schedule = daily(10, 0, 11, 0, warning: DateComponents(minute: 5))
        let interval = utcCalendar.nextInterval(for: schedule, at: utc("2026-06-10T08:00:00Z"))!
        XCTAssertEqual(schedule.intervalWillStartWarning(for: interval), utc("2026-06-10T09:55:00Z"))
        XCTAssertEqual(schedule.intervalWillEndWarning(for: interval), utc("2026-06-10T10:55:00Z"))
        XCTAssertNil(daily(10, 0, 11, 0).intervalWillStartWarning(for: interval))
        XCTAssertNil(daily(10, 0, 11, 0).intervalWillEndWarning(for: interval))
        let long = daily(10, 0, 11, 0, warning: DateComponents(hour: 2))
        XCTAssertEqual(long.intervalWillStartWarning(for: interval), utc("2026-06-10T08:00:00Z"))
        XCTAssertEqual(long.intervalWillEndWarning(for: interval), interval.start, "an end warning longer than the interval comes at its start")
    }

    func testNextDateMatching() {
        let after = utc("2026-06-10T12:00:00Z")
        XCTAssertEqual(utcCalendar.nextDate(after: after, matching: DateComponents(hour: 9)), utc("2026-06-11T09:00:00Z"))
        XCTAssertEqual(utcCalendar.nextDate(after: after, matching: DateComponents(minute: 30)), utc("2026-06-10T12:30:00Z"))
        XCTAssertEqual(utcCalendar.nextDate(after: after, matching: DateComponents(month: 2, day: 29, hour: 0)), utc("2028-02-29T00:00:00Z"))
        XCTAssertEqual(utcCalendar.nextDate(after: after, matching: DateComponents(day: 1)), utc("2026-07-01T00:00:00Z"))
        XCTAssertEqual(utcCalendar.nextDate(after: after, matching: DateComponents(year: 2027, month: 1, day: 2, hour: 3)), utc("2027-01-02T03:00:00Z"))
        XCTAssertNil(utcCalendar.nextDate(after: after, matching: DateComponents(month: 2, day: 30, hour: 0)))
        XCTAssertNil(utcCalendar.nextDate(after: after, matching: DateComponents(year: 2020, month: 1, day: 1, hour: 0)))
        XCTAssertNil(utcCalendar.nextDate(after: after, matching: DateComponents()))
    }

    /// The schedules `mixed-components-never-start` reacts to: one end with a date, the other a time of day only.
    func testASchedulesEndsMixTimeOnlyAndFullDateComponents() {
        XCTAssertFalse(daily(10, 0, 11, 0).mixesTimeOnlyAndDateComponents)
        let dated = DateComponents(year: 2026, month: 6, day: 10, hour: 11, minute: 0)
        XCTAssertFalse(DeviceActivitySchedule(intervalStart: DateComponents(year: 2026, month: 6, day: 10, hour: 10), intervalEnd: dated, repeats: false)
            .mixesTimeOnlyAndDateComponents)
        XCTAssertTrue(DeviceActivitySchedule(intervalStart: DateComponents(hour: 10, minute: 0), intervalEnd: dated, repeats: false).mixesTimeOnlyAndDateComponents)
        XCTAssertTrue(DeviceActivitySchedule(intervalStart: dated, intervalEnd: DateComponents(hour: 23, minute: 0), repeats: false).mixesTimeOnlyAndDateComponents)
        XCTAssertFalse(DeviceActivitySchedule(intervalStart: DateComponents(hour: 10, weekday: 2), intervalEnd: DateComponents(hour: 11, weekday: 2), repeats: true)
            .mixesTimeOnlyAndDateComponents, "a weekday is no date")
    }

    func testOneOffScheduleWithFullDate() {
        let schedule = DeviceActivitySchedule(intervalStart: DateComponents(year: 2026, month: 12, day: 24, hour: 18, minute: 0),
                                              intervalEnd: DateComponents(year: 2026, month: 12, day: 26, hour: 9, minute: 0), repeats: false)
        XCTAssertEqual(berlin.nextInterval(for: schedule, at: utc("2026-06-10T12:00:00Z")),
                       utcInterval("2026-12-24T17:00:00Z", "2026-12-26T08:00:00Z"))
        XCTAssertNil(berlin.nextInterval(for: schedule, at: utc("2027-01-01T00:00:00Z")))
    }

    // MARK: Daylight saving, New York

    func testNewYorkSpringForwardStartInSkippedHourMovesToFirstValidInstant() {
        let interval = newYork.nextInterval(for: daily(2, 30, 3, 30), at: utc("2026-03-08T05:00:00Z"))
        XCTAssertEqual(interval, utcInterval("2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z"), "02:30 doesn't exist: 03:00 EDT")
        XCTAssertEqual(interval?.duration, 30 * 60)
        let next = Array(newYork.intervals(for: daily(2, 30, 3, 30), from: utc("2026-03-08T05:00:00Z")).prefix(2)).last
        XCTAssertEqual(next, utcInterval("2026-03-09T06:30:00Z", "2026-03-09T07:30:00Z"), "the next day is normal again")
    }

    func testNewYorkSpringForwardLengthsAreRealTime() {
        XCTAssertEqual(newYork.nextInterval(for: daily(1, 0, 4, 0), at: utc("2026-03-08T05:00:00Z")),
                       utcInterval("2026-03-08T06:00:00Z", "2026-03-08T08:00:00Z"), "three wall hours, two real ones")
        let night = newYork.nextInterval(for: daily(22, 0, 6, 0), at: utc("2026-03-07T12:00:00Z"))
        XCTAssertEqual(night, utcInterval("2026-03-08T03:00:00Z", "2026-03-08T10:00:00Z"))
        XCTAssertEqual(night?.duration, 7 * 3600)
    }

    func testNewYorkFallBackTakesFirstOccurrence() {
        let interval = newYork.nextInterval(for: daily(1, 30, 2, 30), at: utc("2026-11-01T04:00:00Z"))
        XCTAssertEqual(interval, utcInterval("2026-11-01T05:30:00Z", "2026-11-01T07:30:00Z"), "01:30 EDT to 02:30 EST")
        XCTAssertEqual(interval?.duration, 2 * 3600)
        let night = newYork.nextInterval(for: daily(22, 0, 6, 0), at: utc("2026-10-31T12:00:00Z"))
        XCTAssertEqual(night?.duration, 9 * 3600)
        XCTAssertEqual(newYork.nextDate(after: utc("2026-11-01T05:45:00Z"), matching: DateComponents(hour: 1, minute: 30)),
                       utc("2026-11-02T06:30:00Z"), "the second 01:30 of the fall-back night doesn't match again")
    }

    // MARK: Daylight saving, Berlin

    func testBerlinSpringForward() {
        let interval = berlin.nextInterval(for: daily(2, 15, 4, 0), at: utc("2026-03-28T12:00:00Z"))
        XCTAssertEqual(interval, utcInterval("2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"), "02:15 doesn't exist: 03:00 CEST")
        let day = berlin.nextInterval(for: daily(0, 0, 12, 0), at: utc("2026-03-28T23:30:00Z"))
        XCTAssertEqual(day?.duration, 11 * 3600)
    }

    func testBerlinFallBack() {
        let interval = berlin.nextInterval(for: daily(2, 30, 3, 30), at: utc("2026-10-24T12:00:00Z"))
        XCTAssertEqual(interval, utcInterval("2026-10-25T00:30:00Z", "2026-10-25T02:30:00Z"), "02:30 CEST to 03:30 CET")
        XCTAssertEqual(interval?.duration, 2 * 3600)
    }

    func testStartOfHour() {
        XCTAssertEqual(newYork.startOfHour(containing: utc("2026-06-10T13:47:12Z")), utc("2026-06-10T13:00:00Z"))
        let kolkata = ScheduleCalendar(timeZone: zone("Asia/Kolkata"))
        XCTAssertEqual(kolkata.startOfHour(containing: utc("2026-06-10T13:47:12Z")), utc("2026-06-10T13:30:00Z"), "19:17 IST starts at 19:00 IST")
    }

    // MARK: Cross-checks

    func testDailyIntervalsOverAYearAgreeWithFoundationsCalendar() {
        var foundation = Calendar(identifier: .gregorian)
        foundation.timeZone = zone("America/New_York")
        let intervals = Array(newYork.intervals(for: daily(9, 0, 17, 30), from: utc("2026-01-01T00:00:00Z")).prefix(400))
        for (index, interval) in intervals.enumerated() {
            let start = foundation.dateComponents([.year, .month, .day, .hour, .minute, .second], from: interval.start)
            let end = foundation.dateComponents([.hour, .minute, .second], from: interval.end)
            XCTAssertEqual([start.hour, start.minute, start.second], [9, 0, 0], "start of \(interval)")
            XCTAssertEqual([end.hour, end.minute, end.second], [17, 30, 0], "end of \(interval)")
            XCTAssertEqual(interval.duration, 8.5 * 3600)
            let expectedDay = foundation.date(byAdding: .day, value: index, to: foundation.date(from: DateComponents(year: 2026, month: 1, day: 1))!)!
            XCTAssertTrue(foundation.isDate(interval.start, inSameDayAs: expectedDay), "interval \(index) is on consecutive day")
        }
    }

    func testCivilCalendarRoundTripsAndKnownDates() {
        for dayNumber in stride(from: -800_000, through: 800_000, by: 997) {
            let date = CivilCalendar.date(dayNumber: dayNumber)
            XCTAssertEqual(CivilCalendar.dayNumber(year: date.year, month: date.month, day: date.day), dayNumber)
        }
        XCTAssertEqual(CivilCalendar.dayNumber(year: 1970, month: 1, day: 1), 0)
        XCTAssertEqual(CivilCalendar.dayNumber(year: 2000, month: 3, day: 1), 11_017)
        XCTAssertEqual(CivilCalendar.weekday(dayNumber: CivilCalendar.dayNumber(year: 2026, month: 6, day: 10)), 4, "a Wednesday")
        XCTAssertEqual(CivilCalendar.weekday(dayNumber: -1), 4, "1969-12-31 was a Wednesday")
    }

    // MARK: Zone changes and schedules in a zone of their own

    /// After the device's zone changes, a running interval's end is read on the new zone's wall clock from the wall
    /// time its start shows there (`end(ofIntervalStartedAt:)`): a 09:00–17:00 interval begun in New York (13:00 UTC)
    /// ends at 17:00 in Berlin (15:00 UTC), at 17:00 in Los Angeles (00:00 UTC), and in Tokyo (22:00 there at its
    /// start) at 17:00 the next day.
    func testARunningIntervalsEndReadInAnotherZone() {
        let started = utc("2026-06-10T13:00:00Z")
        XCTAssertEqual(berlin.end(ofIntervalStartedAt: started, of: daily(9, 0, 17, 0)), utc("2026-06-10T15:00:00Z"))
        XCTAssertEqual(ScheduleCalendar(timeZone: zone("America/Los_Angeles")).end(ofIntervalStartedAt: started, of: daily(9, 0, 17, 0)),
                       utc("2026-06-11T00:00:00Z"))
        XCTAssertEqual(ScheduleCalendar(timeZone: zone("Asia/Tokyo")).end(ofIntervalStartedAt: started, of: daily(9, 0, 17, 0)),
                       utc("2026-06-11T08:00:00Z"))
        XCTAssertEqual(newYork.end(ofIntervalStartedAt: started, of: daily(9, 0, 17, 0)),
                       newYork.nextInterval(for: daily(9, 0, 17, 0), at: started)?.end, "in its own zone, its planned end")
        // The OS's day begun at New York's midnight (04:00 UTC) ends at the first midnight Los Angeles shows after it.
        XCTAssertEqual(ScheduleCalendar(timeZone: zone("America/Los_Angeles")).endOfDailyInterval(startedAt: utc("2026-06-10T04:00:00Z")),
                       utc("2026-06-10T07:00:00Z"))
    }

    /// A schedule whose components name a time zone is read in that zone whatever the device's: Tokyo's 09:00–17:00
    /// is 00:00–08:00 UTC on a device in New York or in Berlin.
    func testASchedulePinnedToAZoneIgnoresTheDevicesZone() {
        var start = DateComponents(hour: 9, minute: 0), end = DateComponents(hour: 17, minute: 0)
        start.timeZone = zone("Asia/Tokyo")
        let pinned = DeviceActivitySchedule(intervalStart: start, intervalEnd: end, repeats: true)
        let tokyoDay = utcInterval("2026-06-11T00:00:00Z", "2026-06-11T08:00:00Z")
        XCTAssertEqual(newYork.nextInterval(for: pinned, at: utc("2026-06-10T20:00:00Z")), tokyoDay)
        XCTAssertEqual(berlin.nextInterval(for: pinned, at: utc("2026-06-10T20:00:00Z")), tokyoDay)
        XCTAssertEqual(Array(berlin.intervals(for: pinned, from: utc("2026-06-10T20:00:00Z")).prefix(2)).last,
                       utcInterval("2026-06-12T00:00:00Z", "2026-06-12T08:00:00Z"))
        XCTAssertEqual(berlin.end(ofIntervalStartedAt: tokyoDay.start, of: pinned), tokyoDay.end)
    }
}

