import Foundation

/// Aggregates usage records per local day as it ingests them, so memory grows with
/// apps × days and never with the number of records. Spans are split exactly at local
/// hour boundaries (and so at midnight), DST-correct, in the ledger's time zone.
///
/// Codable as `{"timeZone": "<identifier>", "days": [DayUsage…]}`; a caller may instead
/// persist single days (`days`, `usage(on:)`) and bring them back with `restore(_:)`.
public struct UsageLedger: Codable, Equatable, Sendable {
    /// The longest span accepted (7 days): longer ones are almost surely bad timestamps.
    public static let maximumSpan: TimeInterval = 7 * 24 * 3600

    /// The time zone whose wall clock defines days and hours.
    public let timeZone: TimeZone
    private let clock: LocalClock
    private var buckets: [LocalDay: DayUsage]

    /// An empty ledger for `timeZone`.
    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        self.clock = LocalClock(timeZone: timeZone)
        self.buckets = [:]
    }

    /// All days with data, oldest first.
    public var days: [DayUsage] {
        buckets.keys.sorted().map { buckets[$0]! }
    }

    /// The aggregates of `day`, or nil when nothing was recorded on it.
    public func usage(on day: LocalDay) -> DayUsage? {
        buckets[day]
    }

    /// The local day containing `date`.
    public func day(containing date: Date) -> LocalDay {
        clock.day(containing: date)
    }

    /// The absolute interval of a local day (23, 24 or 25 hours long).
    public func dateInterval(of day: LocalDay) -> DateInterval {
        clock.interval(of: day)
    }

    /// Adds one record to the aggregates and returns the days it changed (oldest first),
    /// so a caller that persists day by day knows what to write.
    ///
    /// A private web record changes nothing and returns no day; so does a zero-length span.
    /// - Throws: `UsageLedgerError` for an empty name, a reversed or an overlong span;
    ///   the ledger is then unchanged.
    @discardableResult
    public mutating func ingest(_ record: UsageRecord) throws -> [LocalDay] {
        switch record {
        case let .appUsage(app, category, start, end):
            try Self.requireName(app, field: "app")
            try Self.requireName(category, field: "category")
            return try addSpan(subject: app, start: start, end: end) { day, hour, seconds in
                day.addAppUsage(app: app, category: category, hour: hour, seconds: seconds)
            }
        case let .webUsage(domain, start, end, isPrivate):
            // Private browsing is never looked at, let alone stored.
            guard !isPrivate else { return [] }
            try Self.requireName(domain, field: "web domain")
            return try addSpan(subject: domain, start: start, end: end) { day, _, seconds in
                day.webDomainSeconds[domain, default: 0] += seconds
            }
        case let .pickup(app, date):
            try Self.requireName(app, field: "app")
            let clockTime = clock.clockTime(of: date)
            return update(at: date) { $0.recordPickup(app: app, at: date, clockTime: clockTime) }
        case let .notification(source, date):
            try Self.requireName(source, field: "notification source")
            return update(at: date) { $0.notifications[source, default: 0] += 1 }
        case let .shieldEncounter(target, date):
            try Self.requireName(target, field: "shield target")
            return update(at: date) { $0.shieldEncounters[target, default: 0] += 1 }
        case let .gracePassUsed(date):
            return update(at: date) { $0.gracePassesUsed += 1 }
        case let .nudgeUsed(date):
            return update(at: date) { $0.nudgesUsed += 1 }
        }
    }

    /// Ingests records in order. Stops at the first invalid record and throws its error;
    /// the records before it stay ingested.
    public mutating func ingest<Records: Sequence>(contentsOf records: Records) throws
    where Records.Element == UsageRecord {
        for record in records {
            try ingest(record)
        }
    }

    /// Puts a persisted day back, replacing whatever the ledger holds for that day.
    /// - Throws: `UsageLedgerError.timeZoneMismatch` or `.malformedDay`.
    public mutating func restore(_ usage: DayUsage) throws {
        guard usage.timeZoneIdentifier == timeZone.identifier else {
            throw UsageLedgerError.timeZoneMismatch(
                day: usage.day, ledger: timeZone.identifier, found: usage.timeZoneIdentifier)
        }
        guard usage.hourlySeconds.count == 24 else {
            throw UsageLedgerError.malformedDay(day: usage.day, hourlyValues: usage.hourlySeconds.count)
        }
        buckets[usage.day] = usage
    }

    /// Keeps the `days` local days ending with the day of `asOf` (and any later ones) and
    /// drops older days. `retain(days: 7, asOf: sunday)` keeps Monday…Sunday;
    /// `days == 0` keeps only days after `asOf`'s day.
    public mutating func retain(days: Int, asOf: Date) {
        precondition(days >= 0, "retain(days:) needs a non-negative number of days, got \(days)")
        let oldestKept = clock.day(containing: asOf).adding(days: 1 - days)
        buckets = buckets.filter { $0.key >= oldestKept }
    }

    // MARK: - Codable

    private enum CodingKeys: String, CodingKey {
        case timeZone
        case days
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let identifier = try container.decode(String.self, forKey: .timeZone)
        guard let timeZone = TimeZone(identifier: identifier) else {
            throw UsageLedgerError.unknownTimeZone(identifier)
        }
        self.init(timeZone: timeZone)
        for usage in try container.decode([DayUsage].self, forKey: .days) {
            try restore(usage)
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(timeZone.identifier, forKey: .timeZone)
        try container.encode(days, forKey: .days)
    }

    public static func == (lhs: UsageLedger, rhs: UsageLedger) -> Bool {
        lhs.timeZone.identifier == rhs.timeZone.identifier && lhs.buckets == rhs.buckets
    }

    // MARK: - Aggregation

    private static func requireName(_ name: String, field: String) throws {
        // What trimming would leave, without building it (a record names its app, category or target).
        let blank = CharacterSet.whitespacesAndNewlines
        guard name.unicodeScalars.contains(where: { !blank.contains($0) }) else {
            throw UsageLedgerError.emptyName(field: field)
        }
    }

    private mutating func update(at date: Date, _ change: (inout DayUsage) -> Void) -> [LocalDay] {
        let day = clock.day(containing: date)
        change(&buckets[day, default: DayUsage(day: day, timeZoneIdentifier: timeZone.identifier)])
        return [day]
    }

    /// Splits `[start, end)` at every local hour boundary and hands each piece to `add`.
    private mutating func addSpan(
        subject: String, start: Date, end: Date,
        add: (inout DayUsage, _ hour: Int, _ seconds: TimeInterval) -> Void
    ) throws -> [LocalDay] {
        guard end >= start else {
            throw UsageLedgerError.spanEndsBeforeStart(subject: subject, start: start, end: end)
        }
        guard end.timeIntervalSince(start) <= Self.maximumSpan else {
            throw UsageLedgerError.spanTooLong(
                subject: subject, seconds: end.timeIntervalSince(start), maximum: Self.maximumSpan)
        }
        var touched: [LocalDay] = []
        var cursor = start
        while cursor < end {
            let slot = clock.hourSlot(containing: cursor)
            let pieceEnd = min(slot.end, end)
            add(&buckets[slot.day, default: DayUsage(day: slot.day, timeZoneIdentifier: timeZone.identifier)],
                slot.hour, pieceEnd.timeIntervalSince(cursor))
            if touched.last != slot.day { touched.append(slot.day) }
            cursor = pieceEnd
        }
        return touched
    }
}
