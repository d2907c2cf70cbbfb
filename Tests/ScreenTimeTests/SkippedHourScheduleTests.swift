import Foundation
import XCTest
import CivilCalendar
@testable import ScreenTime

/// Schedules around daylight saving changes, as the OS plans them (issue #9: focus-window seeds 12, 34, 41, 107,
/// 123). A start and end that both fall in a skipped hour used to take the next day's end: a 15-minute schedule
/// became a 23-hour interval containing now, which started at once, and a monitor that planned the same check again
/// looped until `ack-timeout`.
final class SkippedHourScheduleTests: XCTestCase {
    let sydney = ScheduleCalendar(timeZone: zone("Australia/Sydney"))

    func schedule(_ start: Int, _ end: Int) -> DeviceActivitySchedule {
        func wall(_ second: Int) -> DateComponents {
            DateComponents(hour: second / 3600 % 24, minute: second / 60 % 60, second: second % 60)
        }
        return DeviceActivitySchedule(intervalStart: wall(start), intervalEnd: wall(end), repeats: true)
    }

    /// Seed 12 as found: Oct 5 01:20 Sydney (the day after spring-forward), a check planned 02:04:53–02:19:53. Oct 4's
    /// interval fell in the skipped hour; the interval is Oct 5's, 15 minutes long.
    func testAScheduleInsideASkippedHourHasNoIntervalThatDay() {
        let check = schedule(2 * 3600 + 4 * 60 + 53, 2 * 3600 + 19 * 60 + 53)
        let now = utc("2026-10-04T14:20:00Z")  // Oct 5 01:20 AEST
        XCTAssertEqual(sydney.nextInterval(for: check, at: now), utcInterval("2026-10-04T15:04:53Z", "2026-10-04T15:19:53Z"))
        let onTheDay = utc("2026-10-03T15:30:00Z")  // Oct 4 01:30 AEST, before the gap
        XCTAssertEqual(sydney.nextInterval(for: check, at: onTheDay), utcInterval("2026-10-04T15:04:53Z", "2026-10-04T15:19:53Z"),
                       "the skipped day has no interval: the next is Oct 5's")
        XCTAssertEqual(Array(sydney.intervals(for: check, from: utc("2026-10-02T12:00:00Z")).prefix(2)),
                       [utcInterval("2026-10-02T16:04:53Z", "2026-10-02T16:19:53Z"), utcInterval("2026-10-04T15:04:53Z", "2026-10-04T15:19:53Z")],
                       "the sequence steps over the skipped day")
    }

    /// Every DST change of 2026 in six zones (Lord Howe's is 30 minutes), schedules starting every 11 minutes from three
    /// hours before the change to three after, nine lengths, asked at instants from 36 hours before to 36 after: the
    /// interval is never over, never empty, never longer in real time than its schedule on the wall plus the change,
    /// its start and end show the schedule's wall times unless a skipped hour moved them to its end, and the next
    /// interval does not overlap it.
    func testIntervalsAroundEveryDaylightSavingChange() throws {
        let zones = ["Australia/Sydney", "Europe/London", "America/New_York", "Europe/Berlin", "America/Los_Angeles", "Australia/Lord_Howe"]
        var checked = 0
        for identifier in zones {
            let timeZone = zone(identifier)
            let calendar = ScheduleCalendar(timeZone: timeZone)
            let clock = ZonedClock(timeZone: timeZone)
            var after = utc("2026-01-01T00:00:00Z")
            while let change = timeZone.nextDaylightSavingTimeTransition(after: after), change < utc("2027-01-01T00:00:00Z") {
                after = change
                let shift = abs(timeZone.secondsFromGMT(for: change) - timeZone.secondsFromGMT(for: change.addingTimeInterval(-1)))
                let changeWall = clock.localSeconds(of: change.addingTimeInterval(-1)) + 1
                for startWall in stride(from: changeWall - 3 * 3600, through: changeWall + 3 * 3600, by: 11 * 60 + 1) {
                    for length in [15, 16, 20, 30, 45, 60, 95, 180, 1425].map({ $0 * 60 }) {
                        let tested = schedule(CivilCalendar.floorMod(startWall, 86_400), CivilCalendar.floorMod(startWall + length, 86_400))
                        for hours in stride(from: -36.0, through: 36.0, by: 6.7) {
                            let now = change.addingTimeInterval(hours * 3600)
                            try check(tested, length: length, shift: shift, at: now, calendar: calendar, clock: clock)
                            checked += 1
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 20_000)
    }

    private func check(_ schedule: DeviceActivitySchedule, length: Int, shift: Int, at now: Date,
                       calendar: ScheduleCalendar, clock: ZonedClock) throws {
        let context = "\(schedule.intervalStart.hour!):\(schedule.intervalStart.minute!):\(schedule.intervalStart.second!) for \(length / 60) min in \(calendar.timeZone.identifier) at \(now)"
        let interval = try XCTUnwrap(calendar.nextInterval(for: schedule, at: now), context)
        XCTAssertGreaterThan(interval.end, now, "never over: \(context)")
        XCTAssertGreaterThan(interval.duration, 0, "never empty: \(context)")
        XCTAssertLessThanOrEqual(interval.duration, TimeInterval(length + shift), "never longer than the schedule: \(context) gave \(interval)")
        func shows(_ instant: Date, _ wall: DateComponents) -> Bool {
            let second = CivilCalendar.floorMod(clock.localSeconds(of: instant), 86_400)
            let skipped = clock.offset(at: Int(instant.timeIntervalSince1970) - 1) < clock.offset(at: Int(instant.timeIntervalSince1970))
            return second == (wall.hour! * 60 + wall.minute!) * 60 + wall.second! || skipped
        }
        XCTAssertTrue(shows(interval.start, schedule.intervalStart), "the start shows the schedule's: \(context) gave \(interval)")
        XCTAssertTrue(shows(interval.end, schedule.intervalEnd), "the end shows the schedule's: \(context) gave \(interval)")
        let next = Array(calendar.intervals(for: schedule, from: now).prefix(2))
        XCTAssertEqual(next.first, interval)
        if next.count == 2 { XCTAssertGreaterThanOrEqual(next[1].start, interval.end, "no overlap: \(context)") }
    }
}
