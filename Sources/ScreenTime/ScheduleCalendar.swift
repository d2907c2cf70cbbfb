import CivilCalendar
import Foundation

/// Schedule math in one time zone with the Gregorian calendar: when a schedule's intervals
/// start and end, as exact instants.
///
/// Pure and deterministic: "now" is always passed in. Daylight saving follows these rules:
/// - a start or end in a skipped hour (spring forward) moves to the first valid instant after
///   it (02:30 on a day that jumps from 02:00 to 03:00 becomes 03:00), as `Calendar`'s
///   `matchingPolicy: .nextTime`;
/// - a repeated wall time (fall back) means its first occurrence;
/// - an interval ends at the first wall time matching its end after its start's wall time, so a
///   start and end that both fall in a skipped hour make an empty interval: the schedule has no
///   interval that day (a 15-minute schedule never becomes a 23-hour one);
/// - interval lengths are real elapsed time between the two instants.
public struct ScheduleCalendar: Hashable, Sendable {
    /// The device's time zone.
    public let timeZone: TimeZone
    private let clock: ZonedClock

    /// Calendar math in this time zone.
    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        self.clock = ZonedClock(timeZone: timeZone)
    }

    /// How far a search for matching dates looks: eight years, which holds a February 29
    /// even across a century year that isn't a leap year.
    private static let searchDays = 8 * 366 + 2

    /// The first instant strictly after `date` whose wall-clock time matches the components.
    ///
    /// Nil when nothing matches within eight years (for example `{month: 2, day: 30}`, or a
    /// year in the past). Components are read as by `Calendar.nextDate(after:matching:)`:
    /// `{hour: 9}` is 09:00:00 every day, `{weekday: 2, hour: 9}` Mondays at 09:00.
    public func nextDate(after date: Date, matching components: DateComponents) -> Date? {
        firstMatch(ComponentPattern(components), from: date, inclusive: false)?.instant
    }

    /// The interval of the schedule that contains `now`, or else the next one; nil if the
    /// schedule matches no date. As Apple's `DeviceActivitySchedule.nextInterval`.
    ///
    /// Intervals are half-open: at the instant an interval ends, that interval is over.
    /// For a non-repeating schedule this is its one interval (pass the instant monitoring started).
    public func nextInterval(for schedule: DeviceActivitySchedule, at now: Date) -> DateInterval? {
        if let pinned = pinned(schedule) { return pinned.nextInterval(for: schedule, at: now) }
        let start = ComponentPattern(schedule.intervalStart)
        let end = ComponentPattern(schedule.intervalEnd)
        if let lastStart = lastMatch(start, atOrBefore: now),
           let current = interval(from: lastStart, endingAt: end),
           current.end > now, current.duration > 0 {
            return current
        }
        return firstInterval(from: firstMatch(start, from: now, inclusive: false), start, end)
    }

    /// The schedule's intervals from the one containing `now` (or else the next) on, in order.
    ///
    /// A repeating schedule's sequence goes on as long as dates match (iterate lazily, e.g.
    /// with `prefix`); a non-repeating schedule has exactly one interval.
    public func intervals(for schedule: DeviceActivitySchedule, from now: Date) -> DeviceActivityIntervals {
        DeviceActivityIntervals(calendar: self, schedule: schedule, upcoming: nextInterval(for: schedule, at: now))
    }

    /// The interval following one of the schedule's intervals: the next start at or after its end.
    func interval(after interval: DateInterval, of schedule: DeviceActivitySchedule) -> DateInterval? {
        if let pinned = pinned(schedule) { return pinned.interval(after: interval, of: schedule) }
        let start = ComponentPattern(schedule.intervalStart)
        return firstInterval(from: firstMatch(start, from: interval.end, inclusive: true), start, ComponentPattern(schedule.intervalEnd))
    }

    /// The end of the schedule's interval that began at `start`, on the wall clock of this calendar's zone: the first
    /// wall time matching `intervalEnd` after the wall time `start` shows here; nil when none matches. How the OS reads a
    /// running interval's end after the device's zone changes: Apple's `nextInterval` "bases the interval's end date on
    /// wall-clock time, regardless of any time zone changes that occur during the interval" (the end components read in
    /// the zone in force, `Calendar.current`), while its start, and the activity counted since, stay where they were.
    /// A schedule whose components name a time zone is read in that zone, whatever the device's.
    public func end(ofIntervalStartedAt start: Date, of schedule: DeviceActivitySchedule) -> Date? {
        if let pinned = pinned(schedule) { return pinned.end(ofIntervalStartedAt: start, of: schedule) }
        return firstMatch(ComponentPattern(schedule.intervalEnd), afterWall: clock.localSeconds(of: start))?.instant
    }

    /// The calendar of the zone a schedule's components name, when it is not this one's: its wall times are that zone's
    /// (`DateComponents.timeZone`), not the device's.
    private func pinned(_ schedule: DeviceActivitySchedule) -> ScheduleCalendar? {
        guard let zone = schedule.timeZone, zone.identifier != timeZone.identifier else { return nil }
        return ScheduleCalendar(timeZone: zone)
    }

    /// The first non-empty interval from the start `first` on (an empty one is a day whose start and end both fell
    /// in a skipped hour); nil when no date matches.
    private func firstInterval(from first: Match?, _ start: ComponentPattern, _ end: ComponentPattern) -> DateInterval? {
        var candidate = first
        while let match = candidate {
            guard let interval = interval(from: match, endingAt: end) else { return nil }
            if interval.duration > 0 { return interval }
            candidate = firstMatch(start, afterWall: match.wall)
        }
        return nil
    }

    /// The interval from a start to the end's first wall time after the start's wall time. Paired on the wall clock,
    /// not by instants: a start moved to a skipped hour's end must not take an end on the next day.
    private func interval(from start: Match, endingAt end: ComponentPattern) -> DateInterval? {
        firstMatch(end, afterWall: start.wall).map { DateInterval(start: start.instant, end: $0.instant) }
    }

    /// The first instant of the wall-clock day that contains `date`: its midnight's first instant, or the instant after
    /// the gap when the zone skips midnight (America/Santiago, America/Havana). The day is the date the clock shows at
    /// `date`: in the second pass of a fall-back that took the clock back across midnight (America/St_Johns at 00:01
    /// until 2010) that is the day before again, which began at its own midnight. Foundation's `startOfDay(for:)` and
    /// `date(byAdding: .day, …)` are not used for this: on Linux they can be wrong across some transitions.
    public func startOfDay(containing date: Date) -> Date {
        let day = clock.wallReading(of: date).day
        return Date(timeIntervalSince1970: TimeInterval(clock.instant(ofLocalSeconds: day * 86_400)))
    }

    /// The first instant after `date` at which the clock shows the next date (its midnight, or the instant after the
    /// gap that skips it). After a fall-back that took the clock back across midnight, that is the midnight shown the
    /// second time: the first one is already past.
    public func startOfNextDay(after date: Date) -> Date {
        let bound = Int(date.timeIntervalSince1970.rounded(.down))
        let target = (clock.wallReading(of: date).day + 1) * 86_400
        let first = clock.instant(ofLocalSeconds: target)
        return Date(timeIntervalSince1970: TimeInterval(first > bound ? first : clock.firstInstant(reaching: target, after: bound)))
    }

    /// The interval of a schedule repeating from midnight to midnight that contains `date`: the day as the OS counts
    /// DeviceActivity in it. It is the wall-clock day (`startOfDay`, `startOfNextDay`) except where a fall-back takes
    /// the clock back across midnight: the second pass shows the day before again, but a schedule's midnight means its
    /// first occurrence, so the interval begun there runs on to the next date's midnight.
    public func dailyInterval(containing date: Date) -> DateInterval {
        // Every day has a midnight (or the instant after a gap that skips it), so a matching interval always exists.
        nextInterval(for: Self.midnightToMidnight, at: date)!
    }

    /// The end of the OS's daily interval begun at `start` (its midnight, perhaps in another zone), read on this zone's
    /// wall clock: the first midnight here after the wall time `start` shows here (`end(ofIntervalStartedAt:)`), where a
    /// day begun before a zone change ends.
    public func endOfDailyInterval(startedAt start: Date) -> Date {
        // Every day has a midnight (or the instant after a gap that skips it).
        end(ofIntervalStartedAt: start, of: Self.midnightToMidnight)!
    }

    private static let midnightToMidnight = DeviceActivitySchedule(intervalStart: DateComponents(hour: 0, minute: 0),
                                                                   intervalEnd: DateComponents(hour: 0, minute: 0), repeats: true)

    /// The start of the wall-clock hour that contains `date`.
    public func startOfHour(containing date: Date) -> Date {
        clock.startOfHour(containing: date)
    }

    /// The length of an interval in wall-clock time (what a clock on the wall shows between
    /// its start and end), which differs from its real length across a daylight saving change.
    func wallClockLength(of interval: DateInterval, of schedule: DeviceActivitySchedule) -> TimeInterval {
        if let pinned = pinned(schedule) { return pinned.wallClockLength(of: interval, of: schedule) }
        return TimeInterval(clock.localSeconds(of: interval.end) - clock.localSeconds(of: interval.start))
    }

    // MARK: Searching

    // Wall times of one day, in order, give instants in order (a gap maps several wall times to
    // the same instant; a repeat keeps the first occurrence), so the first hit is the earliest.

    /// A matching wall time (local seconds) and the instant it stands for.
    private struct Match {
        let wall: Int
        let instant: Date
    }

    private func firstMatch(_ pattern: ComponentPattern, from bound: Date, inclusive: Bool) -> Match? {
        // Start a day early: a wall time late the day before can land after `bound` across a gap.
        firstMatch(pattern, fromDay: clock.wallReading(of: bound).day - 1) {
            $0.instant > bound || (inclusive && $0.instant == bound)
        }
    }

    private func firstMatch(_ pattern: ComponentPattern, afterWall wall: Int) -> Match? {
        firstMatch(pattern, fromDay: CivilCalendar.floorDiv(wall, 86_400)) { $0.wall > wall }
    }

    private func firstMatch(_ pattern: ComponentPattern, fromDay day: Int, where accepts: (Match) -> Bool) -> Match? {
        guard !pattern.secondsOfDay.isEmpty else { return nil }
        var firstDay = day
        if let yearDays = pattern.yearDayRange {
            guard yearDays.upperBound >= firstDay else { return nil }
            firstDay = max(firstDay, yearDays.lowerBound - 1)
        }
        for dayNumber in firstDay...(firstDay + Self.searchDays) where pattern.matches(dayNumber: dayNumber) {
            for second in pattern.secondsOfDay {
                let match = self.match(dayNumber: dayNumber, second: second)
                if accepts(match) { return match }
            }
        }
        return nil
    }

    private func lastMatch(_ pattern: ComponentPattern, atOrBefore bound: Date) -> Match? {
        guard !pattern.secondsOfDay.isEmpty else { return nil }
        var lastDay = clock.wallReading(of: bound).day + 1
        if let yearDays = pattern.yearDayRange {
            guard yearDays.lowerBound <= lastDay else { return nil }
            lastDay = min(lastDay, yearDays.upperBound + 1)
        }
        for dayNumber in stride(from: lastDay, through: lastDay - Self.searchDays, by: -1) where pattern.matches(dayNumber: dayNumber) {
            for second in pattern.secondsOfDay.reversed() {
                let match = self.match(dayNumber: dayNumber, second: second)
                if match.instant <= bound { return match }
            }
        }
        return nil
    }

    private func match(dayNumber: Int, second: Int) -> Match {
        let wall = dayNumber * 86_400 + second
        return Match(wall: wall, instant: Date(timeIntervalSince1970: TimeInterval(clock.instant(ofLocalSeconds: wall))))
    }
}

/// A schedule's intervals in order, computed lazily (see `ScheduleCalendar.intervals(for:from:)`).
public struct DeviceActivityIntervals: Sequence, IteratorProtocol, Sendable {
    private let calendar: ScheduleCalendar
    private let schedule: DeviceActivitySchedule
    private var upcoming: DateInterval?

    init(calendar: ScheduleCalendar, schedule: DeviceActivitySchedule, upcoming: DateInterval?) {
        self.calendar = calendar
        self.schedule = schedule
        self.upcoming = upcoming
    }

    /// The next interval; nil once a non-repeating schedule's interval was given, or when no date matches.
    public mutating func next() -> DateInterval? {
        guard let current = upcoming else { return nil }
        upcoming = schedule.repeats ? calendar.interval(after: current, of: schedule) : nil
        return current
    }
}
