import Foundation

/// A set of disjoint half-open time intervals; touching intervals merge.
struct Periods: Equatable {
    private(set) var intervals: [DateInterval] = []

    init(_ intervals: [DateInterval] = []) {
        for interval in intervals { insert(interval) }
    }

    mutating func insert(_ interval: DateInterval) {
        guard interval.duration > 0 else { return }
        var merged = interval
        var kept: [DateInterval] = []
        for existing in intervals {
            if existing.end < merged.start || existing.start > merged.end {
                kept.append(existing)
            } else {
                merged = DateInterval(start: min(existing.start, merged.start), end: max(existing.end, merged.end))
            }
        }
        kept.append(merged)
        intervals = kept.sorted { $0.start < $1.start }
    }

    func union(_ other: Periods) -> Periods {
        var result = self
        for interval in other.intervals { result.insert(interval) }
        return result
    }

    func subtracting(_ other: Periods) -> Periods {
        var result: [DateInterval] = []
        for interval in intervals {
            var pieces = [interval]
            for cut in other.intervals {
                pieces = pieces.flatMap { piece -> [DateInterval] in
                    guard cut.end > piece.start && cut.start < piece.end else { return [piece] }
                    var parts: [DateInterval] = []
                    if cut.start > piece.start { parts.append(DateInterval(start: piece.start, end: cut.start)) }
                    if cut.end < piece.end { parts.append(DateInterval(start: cut.end, end: piece.end)) }
                    return parts
                }
            }
            result += pieces
        }
        return Periods(result)
    }

    /// The complement within `range`.
    func complement(in range: DateInterval) -> Periods {
        Periods([range]).subtracting(self)
    }
}

/// When a target must be locked, and the lock starts whose grace is not the product's one minute.
struct Locks {
    var periods = Periods()
    /// The grace of a lock beginning at that instant, where it differs from `ProductRules.grace`.
    var graces: [Date: TimeInterval] = [:]
}
