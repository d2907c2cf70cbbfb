// LockInvariant: checks a run's journal against the lock invariant — once an unlock or pass ends, nothing
// selected is usable more than a minute after its end, and nothing is shielded that should not be.

import BusProtocol
import Configuration
import Foundation

/// A breach of the lock invariant, in words a person can act on.
public struct LockViolation: Equatable, CustomStringConvertible {
    public enum Kind: String, Equatable {
        /// Something selected was usable while it should have been locked (past the grace minute).
        case usableWhileLocked = "usable-while-locked"
        /// Something was shielded while it should have been usable (an unlock, a pass, or never selected).
        case shieldedWhileAllowed = "shielded-while-allowed"
    }

    public var kind: Kind
    public var target: String
    public var from: Date
    public var to: Date
    /// When the lock (or the permission) began, which the grace minute counts from.
    public var since: Date
    public var timeZone: TimeZone

    public var description: String {
        let minutes = Int((to.timeIntervalSince(from) / 60).rounded())
        let after = Int(from.timeIntervalSince(since).rounded())
        switch kind {
        case .usableWhileLocked:
            return "\(target) was usable from \(Self.clock(from, timeZone)) to \(Self.clock(to, timeZone)) (\(minutes) min), \(after) s after its lock began at \(Self.clock(since, timeZone))"
        case .shieldedWhileAllowed:
            return "\(target) was shielded at \(Self.clock(from, timeZone)) although it should have been usable since \(Self.clock(since, timeZone))"
        }
    }

    static func clock(_ date: Date, _ timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.day, .hour, .minute, .second], from: date)
        return String(format: "%02d:%02d:%02d", c.hour!, c.minute!, c.second!)
    }
}

/// A set of disjoint half-open time intervals.
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

    /// The interval containing `date`, if any.
    func containing(_ date: Date) -> DateInterval? {
        intervals.first { $0.start <= date && date < $0.end }
    }
}
