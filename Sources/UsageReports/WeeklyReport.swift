import Foundation

/// Seven local days ending on the report date (`ReportContext.weekly`).
public struct WeeklyReport: Codable, Hashable, Sendable {
    /// One day's line in a weekly report.
    public struct Day: Codable, Hashable, Sendable {
        /// The local day.
        public let day: LocalDay
        /// "Mon" … "Sun".
        public let weekday: String
        /// Foreground seconds of the day.
        public let totalSeconds: TimeInterval
        /// Pickups of the day.
        public let pickups: Int
        /// Grace passes used that day.
        public let gracePassesUsed: Int
    }

    /// Always `.weekly`.
    public let context: ReportContext
    /// The first of the 7 days.
    public let firstDay: LocalDay
    /// The last of the 7 days (the report date).
    public let lastDay: LocalDay
    /// The time zone of the ledger.
    public let timeZoneIdentifier: String
    /// The start of the first day.
    public let start: Date
    /// The end (exclusive) of the last day.
    public let end: Date
    /// The 7 days in order, oldest first.
    public let days: [Day]
    /// Foreground seconds of the week.
    public let totalSeconds: TimeInterval
    /// Seconds per app over the week.
    public let apps: [AppUsageEntry]
    /// Seconds per category over the week.
    public let categories: [UsageEntry]
    /// Seconds per web domain over the week.
    public let webDomains: [UsageEntry]
    /// `hourByDay[d][h]`: foreground seconds of day `d` (0 = oldest) in clock hour `h`; 7 × 24.
    public let hourByDay: [[TimeInterval]]
    /// Pickups over the week.
    public let pickups: Int
    /// Notifications over the week.
    public let notifications: Int
    /// Shield encounters over the week.
    public let shieldEncounters: Int
    /// Grace passes used over the week.
    public let gracePassesUsed: Int
    /// Nudges used over the week.
    public let nudgesUsed: Int
    /// Insights over the week.
    public let insights: Insights
}
