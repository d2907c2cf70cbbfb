import Foundation

/// One local day of usage (`ReportContext.daily`). All lists are sorted largest first,
/// ties by name.
public struct DailyReport: Codable, Hashable, Sendable {
    /// Always `.daily`.
    public let context: ReportContext
    /// The local day reported.
    public let day: LocalDay
    /// The time zone of the ledger.
    public let timeZoneIdentifier: String
    /// The start of the day (local midnight or the first instant after it).
    public let start: Date
    /// The end of the day (exclusive): `end - start` is 23 h, 24 h or 25 h.
    public let end: Date
    /// Foreground seconds of the day.
    public let totalSeconds: TimeInterval
    /// Seconds per app.
    public let apps: [AppUsageEntry]
    /// Seconds per category.
    public let categories: [UsageEntry]
    /// Seconds per web domain (private browsing excluded; not part of `totalSeconds`).
    public let webDomains: [UsageEntry]
    /// All pickups.
    public let pickups: Int
    /// Pickups per first-opened app.
    public let pickupsByApp: [CountEntry]
    /// The first pickup, if any.
    public let firstPickup: FirstPickup?
    /// All notifications.
    public let notifications: Int
    /// Notifications per source.
    public let notificationsBySource: [CountEntry]
    /// All shield encounters.
    public let shieldEncounters: Int
    /// Shield encounters per app or domain.
    public let shieldEncountersByTarget: [CountEntry]
    /// Grace passes used.
    public let gracePassesUsed: Int
    /// Nudges used.
    public let nudgesUsed: Int
    /// Foreground seconds per local clock hour, 24 values.
    public let hourlySeconds: [TimeInterval]
    /// Insights over the 7 days ending on this day.
    public let insights: Insights
}
