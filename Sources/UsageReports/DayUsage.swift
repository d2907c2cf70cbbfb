import Foundation

/// The first pickup of a day: when, which app, and the local clock time ("07:45").
public struct FirstPickup: Codable, Hashable, Sendable {
    /// The app opened first.
    public let app: String
    /// The instant of the pickup.
    public let at: Date
    /// The wall-clock time of `at` in the ledger's time zone, "HH:mm".
    public let clockTime: String

    /// Creates a first-pickup value.
    public init(app: String, at: Date, clockTime: String) {
        self.app = app
        self.at = at
        self.clockTime = clockTime
    }
}

/// Everything the ledger knows about one local day: aggregates only, so its size grows
/// with the number of distinct apps, categories, domains and senders, never with the
/// number of records. Codable, so a caller can persist the ledger day by day.
///
/// Screen time (`totalSeconds`, `hourlySeconds`) is app foreground time. Web time is a
/// breakdown by domain and is not added to it: a page is shown inside a browser whose
/// foreground time is already counted, as in Screen Time.
public struct DayUsage: Codable, Hashable, Sendable {
    /// The local day.
    public let day: LocalDay
    /// The identifier of the time zone the day belongs to (e.g. "Europe/Berlin").
    public let timeZoneIdentifier: String
    /// Foreground seconds per local clock hour 0...23. On a 25-hour day both occurrences
    /// of the repeated hour add up in its slot; on a 23-hour day the skipped hour stays 0.
    public internal(set) var hourlySeconds: [TimeInterval]
    /// Foreground seconds per app.
    public internal(set) var appSeconds: [String: TimeInterval]
    /// The category of each app (the smallest name when records disagree, so the result
    /// does not depend on record order).
    public internal(set) var appCategories: [String: String]
    /// Foreground seconds per category.
    public internal(set) var categorySeconds: [String: TimeInterval]
    /// Seconds per web domain (private browsing excluded).
    public internal(set) var webDomainSeconds: [String: TimeInterval]
    /// Pickups per first-opened app.
    public internal(set) var pickups: [String: Int]
    /// The earliest pickup of the day.
    public internal(set) var firstPickup: FirstPickup?
    /// Notifications per source.
    public internal(set) var notifications: [String: Int]
    /// Shield encounters per shielded app or domain.
    public internal(set) var shieldEncounters: [String: Int]
    /// Grace passes used.
    public internal(set) var gracePassesUsed: Int
    /// Nudges used.
    public internal(set) var nudgesUsed: Int

    /// An empty day.
    public init(day: LocalDay, timeZoneIdentifier: String) {
        self.day = day
        self.timeZoneIdentifier = timeZoneIdentifier
        self.hourlySeconds = Array(repeating: 0, count: 24)
        self.appSeconds = [:]
        self.appCategories = [:]
        self.categorySeconds = [:]
        self.webDomainSeconds = [:]
        self.pickups = [:]
        self.firstPickup = nil
        self.notifications = [:]
        self.shieldEncounters = [:]
        self.gracePassesUsed = 0
        self.nudgesUsed = 0
    }

    /// Total foreground seconds of the day.
    public var totalSeconds: TimeInterval { hourlySeconds.reduce(0, +) }

    /// Total pickups of the day.
    public var totalPickups: Int { pickups.values.reduce(0, +) }

    /// Total notifications of the day.
    public var totalNotifications: Int { notifications.values.reduce(0, +) }

    /// Total shield encounters of the day.
    public var totalShieldEncounters: Int { shieldEncounters.values.reduce(0, +) }

    mutating func addAppUsage(app: String, category: String, hour: Int, seconds: TimeInterval) {
        hourlySeconds[hour] += seconds
        appSeconds[app, default: 0] += seconds
        categorySeconds[category, default: 0] += seconds
        if let known = appCategories[app], known <= category { return }
        appCategories[app] = category
    }

    mutating func recordPickup(app: String, at date: Date, clockTime: String) {
        pickups[app, default: 0] += 1
        if let first = firstPickup, (first.at, first.app) <= (date, app) { return }
        firstPickup = FirstPickup(app: app, at: date, clockTime: clockTime)
    }
}
