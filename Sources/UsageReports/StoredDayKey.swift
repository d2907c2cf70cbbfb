import Foundation

/// The keys under which the report builder keeps its days (and their monthly roll-ups) in its App-Group slice, so that
/// readers of the store (the `shieldbus report` command, a companion app) find them.
public enum StoredDayKey {
    /// The prefix of a day's key: `reports.day.2026-11-25` holds that day's `DayUsage`.
    public static let prefix = "reports.day."
    /// The prefix of a month's roll-up: `reports.month.2026-11` holds that month's `MonthRollup`.
    public static let monthPrefix = "reports.month."
    /// The last finished day's `DailyReport`.
    public static let latestDaily = "reports.daily.latest"

    /// The key of `day`.
    public static func key(_ day: LocalDay) -> String { prefix + day.description }

    /// The key of `month`'s roll-up.
    public static func key(_ month: LocalMonth) -> String { monthPrefix + month.description }

    /// The month whose roll-up a key holds; nil for any other key.
    public static func month(ofKey key: String) -> LocalMonth? {
        key.hasPrefix(monthPrefix) ? LocalMonth(String(key.dropFirst(monthPrefix.count))) : nil
    }

    /// The day a key names; nil for any other key.
    public static func day(ofKey key: String) -> LocalDay? {
        key.hasPrefix(prefix) ? LocalDay(String(key.dropFirst(prefix.count))) : nil
    }
}
