import Foundation

/// A run of local days, first and last included (`ReportContext.monthly` for a calendar
/// month, `.range` for any other run): totals, per-day lines for the calendar heatmap and
/// the daily bars, and the lists of the whole run. All lists are sorted largest first,
/// ties by name.
public struct RangeReport: Codable, Hashable, Sendable {
    /// One day's line.
    public struct Day: Codable, Hashable, Sendable {
        /// The local day.
        public let day: LocalDay
        /// "Mon" … "Sun".
        public let weekday: String
        /// Foreground seconds of the day.
        public let totalSeconds: TimeInterval
        /// Web seconds of the day (not part of `totalSeconds`).
        public let webSeconds: TimeInterval
        /// Pickups of the day.
        public let pickups: Int
        /// Notifications of the day.
        public let notifications: Int
        /// Shield encounters of the day.
        public let shieldEncounters: Int
        /// Grace passes used that day.
        public let gracePassesUsed: Int
    }

    /// `.monthly` or `.range`.
    public let context: ReportContext
    /// The first day.
    public let firstDay: LocalDay
    /// The last day (included).
    public let lastDay: LocalDay
    /// The time zone of the ledger.
    public let timeZoneIdentifier: String
    /// The start of the first day.
    public let start: Date
    /// The end (exclusive) of the last day.
    public let end: Date
    /// Every day of the run in order, days without data included (as zeros).
    public let days: [Day]
    /// Foreground seconds of the run.
    public let totalSeconds: TimeInterval
    /// `totalSeconds` divided by the number of days of the run, days without data counting as
    /// 0 (the insights' rule, applied to the run instead of a week).
    public let averageSecondsPerDay: TimeInterval
    /// How many days of the run have any record.
    public let daysWithData: Int
    /// Seconds per app over the run.
    public let apps: [AppUsageEntry]
    /// Seconds per category over the run.
    public let categories: [UsageEntry]
    /// Seconds per web domain over the run.
    public let webDomains: [UsageEntry]
    /// Pickups over the run.
    public let pickups: Int
    /// Notifications over the run.
    public let notifications: Int
    /// Shield encounters over the run.
    public let shieldEncounters: Int
    /// Shield encounters per app or domain over the run.
    public let shieldEncountersByTarget: [CountEntry]
    /// Grace passes used over the run.
    public let gracePassesUsed: Int
    /// Nudges used over the run.
    public let nudgesUsed: Int
}

/// Why a monthly or range report cannot be made.
public enum ReportRangeError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The last day lies before the first.
    case endsBeforeStart(from: LocalDay, to: LocalDay)
    /// The run is longer than `UsageLedger.maximumReportDays`.
    case tooLong(from: LocalDay, to: LocalDay, days: Int, maximum: Int)

    public var description: String {
        switch self {
        case let .endsBeforeStart(from, to):
            return "the range ends (\(to)) before it starts (\(from)); swap --from and --to"
        case let .tooLong(from, to, days, maximum):
            return "\(from) … \(to) is \(days) days; a report covers at most \(maximum) days"
        }
    }

    public var errorDescription: String? { description }
}

/// A Gregorian calendar month, e.g. `2026-11`.
public struct LocalMonth: Hashable, Sendable, CustomStringConvertible {
    /// The first day of the month.
    public let firstDay: LocalDay

    /// Parses `"YYYY-MM"`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let year = Int(parts[0]), let month = Int(parts[1]),
              let first = LocalDay(year: year, month: month, day: 1) else { return nil }
        firstDay = first
    }

    /// The month containing `day`.
    public init(containing day: LocalDay) {
        firstDay = day.adding(days: 1 - day.day)
    }

    /// The last day of the month.
    public var lastDay: LocalDay {
        (28...31).reversed().lazy.compactMap { LocalDay(year: firstDay.year, month: firstDay.month, day: $0) }.first!
    }

    /// E.g. "November 2026".
    public var title: String { firstDay.monthTitle }

    /// `"YYYY-MM"`.
    public var description: String { String(firstDay.description.prefix(7)) }
}

extension RangeReport.Day {
    /// The line of a day.
    init(_ usage: DayUsage) {
        self.init(day: usage.day, weekday: usage.day.shortWeekdayName, totalSeconds: usage.totalSeconds,
                  webSeconds: usage.webDomainSeconds.values.reduce(0, +), pickups: usage.totalPickups,
                  notifications: usage.totalNotifications, shieldEncounters: usage.totalShieldEncounters,
                  gracePassesUsed: usage.gracePassesUsed)
    }

    /// The line of a day without data.
    init(empty day: LocalDay) {
        self.init(day: day, weekday: day.shortWeekdayName, totalSeconds: 0, webSeconds: 0, pickups: 0, notifications: 0,
                  shieldEncounters: 0, gracePassesUsed: 0)
    }
}

extension UsageLedger {
    /// The longest run a monthly or range report covers: a leap year and a bit.
    public static let maximumReportDays = 400

    /// The report of the calendar month `month`.
    public func monthlyReport(for month: LocalMonth) -> RangeReport {
        report(of: month.firstDay...month.lastDay, context: .monthly) { UsageTotals(days(in: $0)) }
    }

    /// The report of the local days `from` … `to`, both included.
    /// - Throws: `ReportRangeError` when `to` is before `from` or the run is too long.
    public func rangeReport(from first: LocalDay, to last: LocalDay, context: ReportContext = .range) throws -> RangeReport {
        try rangeReport(from: first, to: last, context: context) { UsageTotals(days(in: $0)) }
    }

    /// The report of `from` … `to` from the totals of each month's part of the run, which `totals` gives (oldest
    /// first; a part is the days of one calendar month inside the run). The ledger's own days are not looked at:
    /// this ledger only tells the time zone's days apart, so a reader of stored days and roll-ups can use it.
    /// - Throws: `ReportRangeError` when `to` is before `from` or the run is too long; whatever `totals` throws.
    public func rangeReport(from first: LocalDay, to last: LocalDay, context: ReportContext,
                            totals: (ClosedRange<LocalDay>) throws -> UsageTotals) throws -> RangeReport {
        guard first <= last else { throw ReportRangeError.endsBeforeStart(from: first, to: last) }
        let count = last.dayNumber - first.dayNumber + 1
        guard count <= Self.maximumReportDays else {
            throw ReportRangeError.tooLong(from: first, to: last, days: count, maximum: Self.maximumReportDays)
        }
        return try report(of: first...last, context: context, totals: totals)
    }

    /// The days with data in `run`, oldest first.
    func days(in run: ClosedRange<LocalDay>) -> [DayUsage] {
        (0...(run.upperBound.dayNumber - run.lowerBound.dayNumber)).compactMap { usage(on: run.lowerBound.adding(days: $0)) }
    }

    private func report(of run: ClosedRange<LocalDay>, context: ReportContext,
                        totals partTotals: (ClosedRange<LocalDay>) throws -> UsageTotals) rethrows -> RangeReport {
        let first = run.lowerBound, last = run.upperBound
        var totals = UsageTotals([])
        var partStart = first
        while partStart <= last {
            let partEnd = min(LocalMonth(containing: partStart).lastDay, last)
            totals.add(try partTotals(partStart...partEnd))
            partStart = partEnd.adding(days: 1)
        }
        let count = last.dayNumber - first.dayNumber + 1
        let recorded = totals.days
        let lines = Dictionary(recorded.map { ($0.day, $0) }, uniquingKeysWith: { $1 })
        let total = recorded.map(\.totalSeconds).reduce(0, +)
        return RangeReport(
            context: context,
            firstDay: first,
            lastDay: last,
            timeZoneIdentifier: timeZone.identifier,
            start: dateInterval(of: first).start,
            end: dateInterval(of: last).end,
            days: (0..<count).map { offset in
                let day = first.adding(days: offset)
                return lines[day] ?? RangeReport.Day(empty: day)
            },
            totalSeconds: total,
            averageSecondsPerDay: total / Double(count),
            daysWithData: recorded.count,
            apps: Ranking.apps(seconds: totals.appSeconds, categories: totals.appCategories),
            categories: Ranking.usage(totals.categorySeconds),
            webDomains: Ranking.usage(totals.webDomainSeconds),
            pickups: recorded.map(\.pickups).reduce(0, +),
            notifications: recorded.map(\.notifications).reduce(0, +),
            shieldEncounters: recorded.map(\.shieldEncounters).reduce(0, +),
            shieldEncountersByTarget: Ranking.counts(totals.shieldEncounters),
            gracePassesUsed: recorded.map(\.gracePassesUsed).reduce(0, +),
            nudgesUsed: totals.nudgesUsed
        )
    }
}
