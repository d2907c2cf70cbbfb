import Foundation

/// Why the ledger refused a record, a persisted day or a persisted ledger.
public enum UsageLedgerError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// A span's end lies before its start.
    case spanEndsBeforeStart(subject: String, start: Date, end: Date)
    /// A span is longer than `UsageLedger.maximumSpan`.
    case spanTooLong(subject: String, seconds: TimeInterval, maximum: TimeInterval)
    /// A name (app, category, domain, source or target) is empty or only whitespace.
    case emptyName(field: String)
    /// A persisted day belongs to another time zone than the ledger.
    case timeZoneMismatch(day: LocalDay, ledger: String, found: String)
    /// A persisted day does not have exactly 24 hourly values.
    case malformedDay(day: LocalDay, hourlyValues: Int)
    /// A persisted ledger names a time zone this system does not know.
    case unknownTimeZone(String)

    public var description: String {
        switch self {
        case let .spanEndsBeforeStart(subject, start, end):
            return "usage of \"\(subject)\" ends (\(end)) before it starts (\(start)); swap or fix the timestamps"
        case let .spanTooLong(subject, seconds, maximum):
            return "usage of \"\(subject)\" lasts \(Int(seconds)) s, more than the \(Int(maximum)) s maximum; "
                + "check the timestamps or split the span"
        case let .emptyName(field):
            return "the \(field) name is empty; map the token to a display name before ingesting"
        case let .timeZoneMismatch(day, ledger, found):
            return "day \(day) was recorded in time zone \(found) but the ledger uses \(ledger); "
                + "restore it into a ledger created with TimeZone(identifier: \"\(found)\")"
        case let .malformedDay(day, count):
            return "day \(day) has \(count) hourly values instead of 24; the persisted data is corrupt, drop that day"
        case let .unknownTimeZone(identifier):
            return "time zone \"\(identifier)\" is unknown on this system; install tzdata or re-create the ledger"
        }
    }

    public var errorDescription: String? { description }
}
