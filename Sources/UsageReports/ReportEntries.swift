import Foundation

/// An app's foreground time in a report.
public struct AppUsageEntry: Codable, Hashable, Sendable {
    /// The app's display name.
    public let app: String
    /// The app's category name.
    public let category: String
    /// Foreground seconds.
    public let seconds: TimeInterval

    /// Creates an entry.
    public init(app: String, category: String, seconds: TimeInterval) {
        self.app = app
        self.category = category
        self.seconds = seconds
    }
}

/// Time spent on one named thing (a category or a web domain) in a report.
public struct UsageEntry: Codable, Hashable, Sendable {
    /// The category or domain name.
    public let name: String
    /// Seconds.
    public let seconds: TimeInterval

    /// Creates an entry.
    public init(name: String, seconds: TimeInterval) {
        self.name = name
        self.seconds = seconds
    }
}

/// How often something happened for one name (pickups per app, notifications per source…).
public struct CountEntry: Codable, Hashable, Sendable {
    /// The app, source or target name.
    public let name: String
    /// The count.
    public let count: Int

    /// Creates an entry.
    public init(name: String, count: Int) {
        self.name = name
        self.count = count
    }
}

/// Sums per-day aggregates and ranks them: largest first, ties by name, so every list in
/// a report has one deterministic order.
enum Ranking {
    static func sum<Value: AdditiveArithmetic>(_ maps: [[String: Value]]) -> [String: Value] {
        var total: [String: Value] = [:]
        for map in maps {
            total.merge(map, uniquingKeysWith: +)
        }
        return total
    }

    static func ordered<Value: Comparable>(_ map: [String: Value]) -> [(name: String, value: Value)] {
        map.map { (name: $0.key, value: $0.value) }
            .sorted { $0.value != $1.value ? $0.value > $1.value : $0.name < $1.name }
    }

    static func usage(_ map: [String: TimeInterval]) -> [UsageEntry] {
        ordered(map).map { UsageEntry(name: $0.name, seconds: $0.value) }
    }

    static func counts(_ map: [String: Int]) -> [CountEntry] {
        ordered(map).map { CountEntry(name: $0.name, count: $0.value) }
    }

    /// Each app's category across maps: the smallest name when they disagree (so order does not matter).
    static func categories(_ maps: [[String: String]]) -> [String: String] {
        var categories: [String: String] = [:]
        for map in maps {
            categories.merge(map) { min($0, $1) }
        }
        return categories
    }

    static func apps(_ days: [DayUsage]) -> [AppUsageEntry] {
        apps(seconds: sum(days.map(\.appSeconds)), categories: categories(days.map(\.appCategories)))
    }

    static func apps(seconds: [String: TimeInterval], categories: [String: String]) -> [AppUsageEntry] {
        ordered(seconds).map { AppUsageEntry(app: $0.name, category: categories[$0.name] ?? "", seconds: $0.value) }
    }
}
