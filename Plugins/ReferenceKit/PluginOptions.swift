import Foundation

/// What is wrong with a plugin's `options` in a configuration.
public enum PluginOptionsError: Error, CustomStringConvertible, Equatable {
    /// A key the plugin does not know: a typo is never silently ignored.
    case unknownKey(String, in: String, allowed: [String])
    /// A value that does not fit, with what was expected.
    case invalid(key: String, problem: String)

    public var description: String {
        switch self {
        case let .unknownKey(key, place, allowed):
            return "unknown key '\(key)' in \(place) (allowed: \(allowed.joined(separator: ", ")))"
        case let .invalid(key, problem):
            return "'\(key)': \(problem)"
        }
    }
}

/// Any key of a JSON object, for finding the ones a type does not know.
struct AnyOptionKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// Throws `PluginOptionsError.unknownKey` for the first key (in sorted order) not in `allowed`.
    public func rejectUnknownKeys(allowed: [String], in place: String) throws {
        let keys = try container(keyedBy: AnyOptionKey.self).allKeys.map(\.stringValue).sorted()
        if let unknown = keys.first(where: { !allowed.contains($0) }) {
            throw PluginOptionsError.unknownKey(unknown, in: place, allowed: allowed)
        }
    }
}

/// A local wall-clock time of day, `"HH:MM"` in JSON, e.g. `"22:30"`.
public struct ClockTime: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Minutes since local midnight, 0…1439.
    public let minuteOfDay: Int

    /// Parses `"HH:MM"` (00:00 … 23:59); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let hour = Int(parts[0]), let minute = Int(parts[1]),
              (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        minuteOfDay = hour * 60 + minute
    }

    /// The local time of day of `date` in `timeZone`, to the minute.
    public init(of date: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        minuteOfDay = parts.hour! * 60 + parts.minute!
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let time = ClockTime(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a time of day; expected HH:MM like 22:30")
        }
        self = time
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// `"HH:MM"`.
    public var description: String {
        String(format: "%02d:%02d", minuteOfDay / 60, minuteOfDay % 60)
    }

    public static func < (lhs: ClockTime, rhs: ClockTime) -> Bool { lhs.minuteOfDay < rhs.minuteOfDay }
}
