// ZonedClock: instants and wall-clock seconds in one time zone, from the zone's offsets alone (never a calendar routine).

import Foundation

/// Converts between instants and wall-clock time in one time zone, to the second.
///
/// "Local seconds" are wall-clock seconds counted as if the zone were UTC: day number × 86,400
/// plus the second of the day. Going back to an instant follows the schedule rules for
/// daylight saving: a skipped wall time becomes the first instant after the gap, a repeated
/// wall time its first occurrence.
public struct ZonedClock: Hashable, Sendable {
    public let timeZone: TimeZone

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    /// The zone's offset at an instant, in seconds (`secondsFromGMT(for:)`'s, kept for the stretch it holds over:
    /// `ZoneOffsets`).
    public func offset(at instant: Int) -> Int {
        ZoneOffsets.offset(of: timeZone, at: instant)
    }

    /// The wall-clock seconds of an instant (fractions of a second dropped).
    public func localSeconds(of date: Date) -> Int {
        let instant = Int(date.timeIntervalSince1970.rounded(.down))
        return instant + offset(at: instant)
    }

    /// The wall-clock day of an instant (days since 1970-01-01, proleptic Gregorian) and the second of that day.
    public func wallReading(of date: Date) -> (day: Int, second: Int) {
        let local = localSeconds(of: date)
        return (CivilCalendar.floorDiv(local, 86_400), CivilCalendar.floorMod(local, 86_400))
    }

    /// The instant of a wall-clock time, resolving gaps and repeats as described above.
    public func instant(ofLocalSeconds local: Int) -> Int {
        let offsets = offsets(around: local)
        if let first = instants(ofLocalSeconds: local, offsets: offsets).min() {
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

    /// The instants at which the clock shows a wall-clock time: none in a gap, two in a repeated hour, else one.
    public func instants(ofLocalSeconds local: Int) -> [Int] {
        instants(ofLocalSeconds: local, offsets: offsets(around: local))
    }

    /// The distinct offsets that may apply around a wall time (at most one transition per day is assumed).
    private func offsets(around local: Int) -> [Int] {
        var offsets = [offset(at: local - 86_400)]
        for other in [offset(at: local), offset(at: local + 86_400)] where !offsets.contains(other) { offsets.append(other) }
        return offsets
    }

    private func instants(ofLocalSeconds local: Int, offsets: [Int]) -> [Int] {
        offsets.map { local - $0 }.filter { offset(at: $0) == local - $0 }
    }

    /// The first instant after `bound` whose wall-clock time is `local` or later, when the clock shows an earlier time at
    /// `bound`: where the offset in force reaches it, unless the offset changes first and the change jumps the clock to
    /// it or past it (a gap), or takes it back again (then from that change on).
    public func firstInstant(reaching local: Int, after bound: Int) -> Int {
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
    public func startOfHour(containing date: Date) -> Date {
        let instant = Int(date.timeIntervalSince1970.rounded(.down))
        let local = instant + offset(at: instant)
        return Date(timeIntervalSince1970: TimeInterval(instant - CivilCalendar.floorMod(local, 3_600)))
    }

    /// The first instant after `date` at which the wall clock leaves the hour it shows at `date`: the next whole hour
    /// under the offset in force, or the change of offset before it (a jump forward, or back into an hour shown again).
    public func endOfHour(containing date: Date) -> Date {
        let instant = Int(date.timeIntervalSince1970.rounded(.down))
        let before = offset(at: instant)
        let reached = instant + 3_600 - CivilCalendar.floorMod(instant + before, 3_600)
        guard offset(at: reached) == before else {
            // The first instant with another offset, by bisection: the offset holds at `low`, not at `high`.
            var low = instant, high = reached
            while high - low > 1 {
                let middle = low + (high - low) / 2
                if offset(at: middle) == before { low = middle } else { high = middle }
            }
            return Date(timeIntervalSince1970: TimeInterval(high))
        }
        return Date(timeIntervalSince1970: TimeInterval(reached))
    }
}
