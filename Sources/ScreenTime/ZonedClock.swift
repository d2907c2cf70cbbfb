import CivilCalendar
import Foundation


/// Converts between instants and wall-clock time in one time zone, to the second.
///
/// "Local seconds" are wall-clock seconds counted as if the zone were UTC: day number × 86,400
/// plus the second of the day. Going back to an instant follows the schedule rules for
/// daylight saving: a skipped wall time becomes the first instant after the gap, a repeated
/// wall time its first occurrence.
struct ZonedClock: Hashable, Sendable {
    let timeZone: TimeZone

    func offset(at instant: Int) -> Int {
        timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
    }

    /// The wall-clock seconds of an instant (fractions of a second dropped).
    func localSeconds(of date: Date) -> Int {
        let instant = Int(date.timeIntervalSince1970.rounded(.down))
        return instant + offset(at: instant)
    }

    /// The instant of a wall-clock time, resolving gaps and repeats as described above.
    func instant(ofLocalSeconds local: Int) -> Int {
        // Offsets that may apply around this wall time (at most one transition per day is assumed).
        let offsets = Set([offset(at: local - 86_400), offset(at: local), offset(at: local + 86_400)])
        let matching = offsets.map { local - $0 }.filter { offset(at: $0) == local - $0 }
        if let first = matching.min() {
            return first
        }
        // A gap: the offset changes between `low` (old offset, wall time before `local`) and
        // `high` (new offset, wall time after it). The change instant is the first valid one.
        var low = local - offsets.max()!
        var high = local - offsets.min()!
        let before = offset(at: low)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if offset(at: middle) == before { low = middle } else { high = middle }
        }
        return high
    }

    /// The first instant after `bound` whose wall-clock time is `local` or later, when the clock shows an earlier time at
    /// `bound`: where the offset in force reaches it, unless the offset changes first and the change jumps the clock to
    /// it or past it (a gap), or takes it back again (then from that change on).
    func firstInstant(reaching local: Int, after bound: Int) -> Int {
        var from = bound
        while true {
            let before = offset(at: from), reached = local - before
            if offset(at: reached) == before { return reached }
            // The first instant after `from` with another offset, by bisection: the offset holds at `low`, not at `high`.
            var low = from, high = reached
            while high - low > 1 {
                let middle = low + (high - low) / 2
                if offset(at: middle) == before { low = middle } else { high = middle }
            }
            if high + offset(at: high) >= local { return high }
            from = high
        }
    }

    /// The start of the wall-clock hour containing an instant.
    func startOfHour(containing date: Date) -> Date {
        let instant = Int(date.timeIntervalSince1970.rounded(.down))
        let local = instant + offset(at: instant)
        return Date(timeIntervalSince1970: TimeInterval(instant - CivilCalendar.floorMod(local, 3_600)))
    }
}

/// The wall-clock times that DateComponents match, as `Calendar.nextDate(matching:)` reads them.
///
/// Fields finer than the finest field set take their minimum (`{hour: 9}` is 09:00:00);
/// fields coarser than it that are not set are free (`{hour: 9}` matches every day).
struct ComponentPattern {
    private let year: Int?
    private let month: Int?
    private let day: Int?
    private let weekday: Int?
    /// Matching seconds of the day, ascending; empty when the components set nothing.
    let secondsOfDay: [Int]
    /// The day numbers of the year the components name, if they name one.
    let yearDayRange: ClosedRange<Int>?

    init(_ components: DateComponents) {
        // Levels: 0 year, 1 month, 2 day or weekday, 3 hour, 4 minute, 5 second.
        let levels = [components.year, components.month, components.day ?? components.weekday,
                      components.hour, components.minute, components.second]
        let finest = levels.lastIndex { $0 != nil } ?? -1
        func value(_ set: Int?, level: Int, minimum: Int) -> Int? {
            set ?? (level > finest ? minimum : nil)
        }
        year = components.year
        month = value(components.month, level: 1, minimum: 1)
        weekday = components.weekday
        day = components.weekday == nil ? value(components.day, level: 2, minimum: 1) : components.day
        func choices(_ set: Int?, level: Int, count: Int) -> [Int] {
            value(set, level: level, minimum: 0).map { [$0] } ?? Array(0..<count)
        }
        let hours = choices(components.hour, level: 3, count: 24)
        let minutes = choices(components.minute, level: 4, count: 60)
        let seconds = choices(components.second, level: 5, count: 60)
        secondsOfDay = finest < 0 ? [] : hours.flatMap { h in
            minutes.flatMap { m in seconds.map { s in (h * 60 + m) * 60 + s } }
        }
        yearDayRange = components.year.map { year in
            CivilCalendar.dayNumber(year: year, month: 1, day: 1)...(CivilCalendar.dayNumber(year: year + 1, month: 1, day: 1) - 1)
        }
    }

    func matches(dayNumber: Int) -> Bool {
        let date = CivilCalendar.date(dayNumber: dayNumber)
        return (year ?? date.year) == date.year
            && (month ?? date.month) == date.month
            && (day ?? date.day) == date.day
            && (weekday ?? CivilCalendar.weekday(dayNumber: dayNumber)) == CivilCalendar.weekday(dayNumber: dayNumber)
    }
}
