import Foundation

/// The keys under which the report builder keeps its days in its App-Group slice, so that
/// readers of the store (the `shieldbus report` command, a companion app) find them.
public enum StoredDayKey {
    /// The prefix of a day's key: `reports.day.2026-11-25` holds that day's `DayUsage`.
    public static let prefix = "reports.day."
    /// The last finished day's `DailyReport`.
    public static let latestDaily = "reports.daily.latest"

    /// The key of `day`.
    public static func key(_ day: LocalDay) -> String { prefix + day.description }

    /// The day a key names; nil for any other key.
    public static func day(ofKey key: String) -> LocalDay? {
        key.hasPrefix(prefix) ? LocalDay(String(key.dropFirst(prefix.count))) : nil
    }
}
