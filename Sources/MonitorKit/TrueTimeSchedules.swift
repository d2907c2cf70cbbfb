// MonitorKit: the machinery that makes a DeviceActivity monitor survive iOS, as API any product uses — checks at
// true instants (short chained intervals, DST-safe wall times, the reserve slot at the activity limit, the loop
// guard), wall-clock windows, passes. The reference products are built on it; so can yours (docs/writing-a-product.md).

import DeviceActivity
import Foundation
import ScreenTime
import ShieldBusSDK

/// Schedules for instants in true time. DeviceActivity takes wall-clock components on the device clock, which the
/// person may set and which a DST change repeats or skips; these turn a true instant into the schedule that brings a
/// callback then.
public enum TrueTimeSchedules {
    /// The first whole minute strictly after `date` (10:30:45 → 10:31:00; 10:30:00 → 10:31:00).
    public static func minuteAfter(_ date: Date) -> Date {
        Date(timeIntervalSince1970: ((date.timeIntervalSince1970 / 60).rounded(.down) + 1) * 60)
    }

    /// A one-off 15-minute schedule starting at the true instant `date`, as DeviceActivity takes it: local time
    /// components of what the device clock will show then (the person may have set it; the OS runs on it).
    ///
    /// It ends 15 minutes on in wall time when 15 true minutes would cross a fall-back: the OS pairs a start with the
    /// first end after it *on the wall clock*, so a window from 02:55:22 in a repeated hour's first pass to 02:10:22 in
    /// its second would run overnight from the day before, and the OS would read it as begun long ago: a cooldown
    /// ending in the last quarter of the first pass would restart its count late
    /// (`testACooldownEndingAroundARepeatedHourCountsFromItsTrueEnd`).
    public static func window(at date: Date, repeats: Bool = false) -> DeviceActivitySchedule {
        let shown = BusClock.deviceClock(at: date)
        let start = DateComponents(wallTimeOf: shown, in: BusClock.timeZone)
        let wall = { (instant: Date) in instant.timeIntervalSince1970 + Double(BusClock.timeZone.secondsFromGMT(for: instant)) }
        var endShown = shown.addingTimeInterval(15 * 60)
        endShown.addTimeInterval(max(0, wall(shown) + 15 * 60 - wall(endShown)))  // the hour a fall-back repeats
        let end = DateComponents(wallTimeOf: endShown, in: BusClock.timeZone)
        return DeviceActivitySchedule(intervalStart: start, intervalEnd: end, repeats: repeats)
    }

    /// The schedule that brings a check at the true instant `date`: a one-off window starting then or, when none starts
    /// when due (the device clock shows `date` in a repeated DST hour's second pass), an interval whose end warning
    /// comes then (`warningWindow`), whose start means nothing.
    public static func checkSchedule(at date: Date) -> (schedule: DeviceActivitySchedule, atEndWarning: Bool) {
        warningWindow(checkingAt: date).map { ($0, true) } ?? (window(at: date), false)
    }

    /// A one-off schedule from the true instant `date` to the end of that device day (as `allDay` ends), or nil when it
    /// would not start at `date` or would be shorter than DeviceActivity's 15 minutes — or when `date` is on a later
    /// device day than now: the OS would read the window's wall times on today, where it already runs, and start it at
    /// once, and a window that plans itself again at its start would loop.
    public static func countingWindow(from date: Date) -> DeviceActivitySchedule? {
        guard startingWhenDue(date) == date,
              DayKey.string(BusClock.deviceClock(at: date), in: BusClock.timeZone) == DayKey.deviceToday() else { return nil }
        let start = DateComponents(wallTimeOf: BusClock.deviceClock(at: date), in: BusClock.timeZone)
        let end = DateComponents(hour: allDay.intervalEnd.hour, minute: allDay.intervalEnd.minute, second: 0)
        let minutesLeft = ((end.hour ?? 0) - (start.hour ?? 0)) * 60 + (end.minute ?? 0) - (start.minute ?? 0)
        guard minutesLeft > 15 else { return nil }
        return DeviceActivitySchedule(intervalStart: start, intervalEnd: end, repeats: false)
    }

    /// `date`, or the first quarter hour after it that a one-off schedule starts at as planned. In a repeated DST hour
    /// the device clock shows a time twice and the OS reads a schedule's start as the first: a check planned in the
    /// second would start at once, and a check that chains the next would loop.
    public static func startingWhenDue(_ date: Date) -> Date {
        let calendar = ScheduleCalendar(timeZone: BusClock.timeZone)
        let shownNow = BusClock.deviceClock(at: BusClock.absoluteNow)
        var candidate = date
        // The longest stretch a fall-back repeats in the tz database is three hours (Antarctica/Casey; Troll's is two):
        // sixteen quarters get past any of them.
        for _ in 0..<16 {
            let shown = BusClock.deviceClock(at: candidate)
            if let start = calendar.nextInterval(for: window(at: candidate), at: shownNow)?.start,
               abs(start.timeIntervalSince(shown)) < 1 { return candidate }  // the schedule holds whole seconds
            candidate.addTimeInterval(15 * 60)
        }
        return date
    }

    /// The whole day, every day.
    public static let allDay = DeviceActivitySchedule(intervalStart: DateComponents(hour: 0, minute: 0), intervalEnd: DateComponents(hour: 23, minute: 59), repeats: true)

    /// A schedule whose end warning comes at the true instant `date`, for a check that no one-off schedule can start
    /// when due: the device clock shows `date` in the second pass of a repeated DST hour, which the OS reads as the
    /// first, already over, so no check would come. The interval runs from the device clock's now (it starts at once) to the first quarter hour on
    /// that the OS reads as planned and that is 15 wall minutes on (DeviceActivity's minimum), and warns `date` before
    /// that end: the OS computes a warning in true time. Nil when a plain window starts when due.
    public static func warningWindow(checkingAt date: Date) -> DeviceActivitySchedule? {
        startingWhenDue(date) != date ? endWarningWindow(checkingAt: date) : nil
    }

    /// The interval from the device clock's now whose end warning comes at the true instant `date` (`warningWindow`).
    public static func endWarningWindow(checkingAt date: Date) -> DeviceActivitySchedule {
        let zone = BusClock.timeZone
        func wallSeconds(_ instant: Date) -> Double {
            let shown = BusClock.deviceClock(at: instant)
            return shown.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: shown))
        }
        let now = BusClock.absoluteNow
        var end = date
        repeat { end = startingWhenDue(end.addingTimeInterval(15 * 60)) } while wallSeconds(end) - wallSeconds(now) < 15 * 60
        let lead = Int(end.timeIntervalSince(date).rounded())
        return DeviceActivitySchedule(intervalStart: DateComponents(wallTimeOf: BusClock.deviceClock(at: now), in: zone),
                                      intervalEnd: DateComponents(wallTimeOf: BusClock.deviceClock(at: end), in: zone),
                                      repeats: false, warningTime: DateComponents(minute: lead / 60, second: lead % 60))
    }

    /// The true instant the device clock next shows midnight in the zone in force, after `now`: the end of the OS's
    /// daily interval (`ScheduleCalendar.dailyInterval`).
    public static func nextDeviceMidnight(after now: Date = BusClock.absoluteNow) -> Date {
        let shown = BusClock.deviceClock(at: now)
        return now.addingTimeInterval(ScheduleCalendar(timeZone: BusClock.timeZone).dailyInterval(containing: shown).end.timeIntervalSince(shown))
    }
}
