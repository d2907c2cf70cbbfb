import Foundation

/// Local hours in which notifications are held back, e.g. 22:00–07:00 (the device's time zone).
///
/// As a Focus does on iOS, quiet hours drop passive and active notifications — they are not delivered later,
/// since a nudge about a threshold crossed hours ago is stale — and, by default, let time-sensitive ones through.
public struct QuietHours: Equatable {
    public let start: ClockTime
    public let end: ClockTime
    /// Whether time-sensitive notifications break through (default true, like iOS's Time Sensitive Notifications).
    public let allowTimeSensitive: Bool

    enum Key: String, CaseIterable {
        case start, end, allowTimeSensitive
    }

    public init(start: ClockTime, end: ClockTime, allowTimeSensitive: Bool = true) {
        self.start = start
        self.end = end
        self.allowTimeSensitive = allowTimeSensitive
    }

    /// The quiet hours of the notifier's options (`quietHours:`).
    init(_ options: OptionsObject) throws {
        self.init(start: try options.required(Key.start.rawValue, options.clockTime), end: try options.required(Key.end.rawValue, options.clockTime),
                  allowTimeSensitive: try options.bool(Key.allowTimeSensitive.rawValue) ?? true)
        guard start != end else {
            throw PluginOptionsError.invalid(key: "quietHours", problem: "start and end are both \(start): give a range like 22:00 to 07:00")
        }
    }

    /// Whether `time` falls in the quiet hours: from `start` (included) to `end` (excluded), across midnight when
    /// `end` comes before `start`.
    public func contains(_ time: ClockTime) -> Bool {
        start < end ? (start <= time && time < end) : (time >= start || time < end)
    }
}
