import Foundation

/// What a monthly or range report needs of some days of one calendar month: the lines of the days with data and
/// the sums of their lists. A run of days is reported as the totals of each month's part of it, added oldest month
/// first, so that a reader may take a stored `MonthRollup` for a whole month instead of decoding its days and get
/// the very same numbers.
public struct UsageTotals: Codable, Hashable, Sendable {
    /// The lines of the days with data, oldest first.
    public private(set) var days: [RangeReport.Day]
    var appSeconds: [String: TimeInterval]
    var appCategories: [String: String]
    var categorySeconds: [String: TimeInterval]
    var webDomainSeconds: [String: TimeInterval]
    var shieldEncounters: [String: Int]
    var nudgesUsed: Int

    /// The totals of `usages`, days with data of one month, oldest first.
    public init(_ usages: [DayUsage]) {
        days = usages.map(RangeReport.Day.init)
        appSeconds = Ranking.sum(usages.map(\.appSeconds))
        appCategories = Ranking.categories(usages.map(\.appCategories))
        categorySeconds = Ranking.sum(usages.map(\.categorySeconds))
        webDomainSeconds = Ranking.sum(usages.map(\.webDomainSeconds))
        shieldEncounters = Ranking.sum(usages.map(\.shieldEncounters))
        nudgesUsed = usages.map(\.nudgesUsed).reduce(0, +)
    }

    private enum CodingKeys: String, CodingKey {
        case days, appSeconds, appCategories, categorySeconds, webDomainSeconds, shieldEncounters, nudgesUsed
    }

    /// The day lines stored as columns, one array per field: a month's 31 lines decode faster as a few arrays than as
    /// 31 objects, and decoding is most of what a report over stored months costs.
    private struct DayColumns: Codable {
        var day: [LocalDay]
        var totalSeconds: [TimeInterval]
        var webSeconds: [TimeInterval]
        var pickups: [Int]
        var notifications: [Int]
        var shieldEncounters: [Int]
        var gracePassesUsed: [Int]
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let columns = try container.decode(DayColumns.self, forKey: .days)
        let count = columns.day.count
        guard [columns.totalSeconds.count, columns.webSeconds.count, columns.pickups.count, columns.notifications.count,
               columns.shieldEncounters.count, columns.gracePassesUsed.count].allSatisfy({ $0 == count }) else {
            throw DecodingError.dataCorruptedError(forKey: .days, in: container, debugDescription: "the day columns differ in length")
        }
        days = (0..<count).map { index in
            RangeReport.Day(day: columns.day[index], weekday: columns.day[index].shortWeekdayName, totalSeconds: columns.totalSeconds[index],
                            webSeconds: columns.webSeconds[index], pickups: columns.pickups[index], notifications: columns.notifications[index],
                            shieldEncounters: columns.shieldEncounters[index], gracePassesUsed: columns.gracePassesUsed[index])
        }
        appSeconds = try container.decode([String: TimeInterval].self, forKey: .appSeconds)
        appCategories = try container.decode([String: String].self, forKey: .appCategories)
        categorySeconds = try container.decode([String: TimeInterval].self, forKey: .categorySeconds)
        webDomainSeconds = try container.decode([String: TimeInterval].self, forKey: .webDomainSeconds)
        shieldEncounters = try container.decode([String: Int].self, forKey: .shieldEncounters)
        nudgesUsed = try container.decode(Int.self, forKey: .nudgesUsed)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(DayColumns(day: days.map(\.day), totalSeconds: days.map(\.totalSeconds), webSeconds: days.map(\.webSeconds),
                                        pickups: days.map(\.pickups), notifications: days.map(\.notifications),
                                        shieldEncounters: days.map(\.shieldEncounters), gracePassesUsed: days.map(\.gracePassesUsed)),
                             forKey: .days)
        try container.encode(appSeconds, forKey: .appSeconds)
        try container.encode(appCategories, forKey: .appCategories)
        try container.encode(categorySeconds, forKey: .categorySeconds)
        try container.encode(webDomainSeconds, forKey: .webDomainSeconds)
        try container.encode(shieldEncounters, forKey: .shieldEncounters)
        try container.encode(nudgesUsed, forKey: .nudgesUsed)
    }

    /// Adds the totals of a later part of the run.
    mutating func add(_ later: UsageTotals) {
        days += later.days
        appSeconds.merge(later.appSeconds, uniquingKeysWith: +)
        appCategories = Ranking.categories([appCategories, later.appCategories])
        categorySeconds.merge(later.categorySeconds, uniquingKeysWith: +)
        webDomainSeconds.merge(later.webDomainSeconds, uniquingKeysWith: +)
        shieldEncounters.merge(later.shieldEncounters, uniquingKeysWith: +)
        nudgesUsed += later.nudgesUsed
    }
}

/// The report builder's roll-up of one calendar month's stored days (`reports.month.YYYY-MM`), written when a day
/// finishes, so that a report over a year reads a dozen roll-ups rather than decoding 366 days. It names the stored
/// version of every day it sums: a reader takes it only while the month's stored days are exactly those (a day
/// written or dropped since, and the days are read instead), so it can never make a report differ from its days.
public struct MonthRollup: Codable, Hashable, Sendable {
    /// The month, `YYYY-MM`.
    public let month: String
    /// The time zone of the days.
    public let timeZoneIdentifier: String
    /// The stored version of each day summed, by day (`YYYY-MM-DD`).
    public let dayVersions: [String: Int64]
    /// The days' totals.
    public let totals: UsageTotals

    /// The roll-up of `days`, the stored days of `month` with their store versions.
    public init(month: LocalMonth, timeZoneIdentifier: String, days: [(usage: DayUsage, version: Int64)]) {
        let ordered = days.filter { LocalMonth(containing: $0.usage.day) == month }.sorted { $0.usage.day < $1.usage.day }
        self.month = month.description
        self.timeZoneIdentifier = timeZoneIdentifier
        dayVersions = Dictionary(ordered.map { ($0.usage.day.description, $0.version) }, uniquingKeysWith: max)
        totals = UsageTotals(ordered.map(\.usage))
    }

    /// Whether this roll-up sums exactly `stored`, the versions of the month's days in the store now.
    public func sums(_ stored: [LocalDay: Int64], timeZoneIdentifier zone: String) -> Bool {
        zone == timeZoneIdentifier && stored.count == dayVersions.count
            && stored.allSatisfy { dayVersions[$0.key.description] == $0.value }
    }
}
