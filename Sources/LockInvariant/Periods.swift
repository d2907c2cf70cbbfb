import Foundation

/// A set of disjoint half-open time intervals, kept sorted; touching intervals merge. Every operation is a merge
/// of sorted lists or a binary search: a year's journal holds tens of thousands of spans, each asking about its locks.
struct Periods: Equatable {
    private(set) var intervals: [DateInterval] = []

    init(_ intervals: [DateInterval] = []) {
        self.intervals = Self.merged(intervals.filter { $0.duration > 0 }.sorted { $0.start < $1.start })
    }

    private init(sortedDisjoint intervals: [DateInterval]) {
        self.intervals = intervals
    }

    mutating func insert(_ interval: DateInterval) {
        guard interval.duration > 0 else { return }
        // The first interval that ends at or after the new one starts, and the first that starts after it ends:
        // everything between them touches it and merges into it.
        let first = firstIndex { $0.end >= interval.start }
        var last = first
        var merged = interval
        while last < intervals.count, intervals[last].start <= interval.end {
            merged = DateInterval(start: min(intervals[last].start, merged.start), end: max(intervals[last].end, merged.end))
            last += 1
        }
        intervals.replaceSubrange(first..<last, with: [merged])
    }

    func union(_ other: Periods) -> Periods {
        var all: [DateInterval] = []
        all.reserveCapacity(intervals.count + other.intervals.count)
        var mine = 0, theirs = 0
        while mine < intervals.count || theirs < other.intervals.count {
            if theirs == other.intervals.count || (mine < intervals.count && intervals[mine].start <= other.intervals[theirs].start) {
                all.append(intervals[mine]); mine += 1
            } else {
                all.append(other.intervals[theirs]); theirs += 1
            }
        }
        return Periods(sortedDisjoint: Self.merged(all))
    }

    func subtracting(_ other: Periods) -> Periods {
        var result: [DateInterval] = []
        var cutIndex = 0
        for interval in intervals {
            // Cuts that end before this interval starts cannot touch it nor any later one.
            while cutIndex < other.intervals.count, other.intervals[cutIndex].end <= interval.start { cutIndex += 1 }
            var start = interval.start
            var cut = cutIndex
            while cut < other.intervals.count, other.intervals[cut].start < interval.end {
                if other.intervals[cut].start > start { result.append(DateInterval(start: start, end: other.intervals[cut].start)) }
                start = max(start, other.intervals[cut].end)
                cut += 1
            }
            if start < interval.end { result.append(DateInterval(start: start, end: interval.end)) }
        }
        return Periods(sortedDisjoint: result)
    }

    /// The complement within `range`.
    func complement(in range: DateInterval) -> Periods {
        Periods([range]).subtracting(self)
    }

    /// The intervals that end after `from` and start before `to` (`orAt`: or at `to` itself, for an instant's span).
    func overlapping(from: Date, to: Date, orAt: Bool = false) -> ArraySlice<DateInterval> {
        let first = firstIndex { $0.end > from }
        var last = first
        while last < intervals.count, intervals[last].start < to || (orAt && intervals[last].start == to) { last += 1 }
        return intervals[first..<last]
    }

    /// The index of the first interval for which `isAtOrAfter` holds (it holds for all from some index on).
    private func firstIndex(where isAtOrAfter: (DateInterval) -> Bool) -> Int {
        var low = 0, high = intervals.count
        while low < high {
            let middle = (low + high) / 2
            if isAtOrAfter(intervals[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Sorted intervals of positive length with those that overlap or touch merged.
    private static func merged(_ sorted: [DateInterval]) -> [DateInterval] {
        var result: [DateInterval] = []
        result.reserveCapacity(sorted.count)
        for interval in sorted where interval.duration > 0 {
            if let last = result.last, interval.start <= last.end {
                result[result.count - 1] = DateInterval(start: last.start, end: max(last.end, interval.end))
            } else {
                result.append(interval)
            }
        }
        return result
    }
}

/// When a target must be locked, and the lock starts whose grace is not the product's one minute.
struct Locks {
    var periods = Periods()
    /// The grace of a lock beginning at that instant, where it differs from `ProductRules.grace`.
    var graces: [Date: TimeInterval] = [:]
    /// Outside the locks, where a shield is no fault either: the product cannot tell the target from the others (a
    /// ruling in docs/explore.md names each case).
    var mayBeShielded = Periods()
}
