import Foundation

/// A value that is just a string: a token or a name. Encodes as a plain JSON string, and as a
/// JSON object key when it keys a dictionary. Ordered by the string, so sets encode stably.
public protocol StringIdentifier: RawRepresentable, Hashable, Comparable, Sendable, Codable, CodingKeyRepresentable, CustomStringConvertible where RawValue == String {
    /// Makes the value from its string.
    init(rawValue: String)
}

extension StringIdentifier {
    /// Orders by the string.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The string, for logs.
    public var description: String { rawValue }

    /// Decodes a plain JSON string.
    public init(from decoder: Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes a plain JSON string.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The value as a JSON object key.
    public var codingKey: CodingKey { StringCodingKey(rawValue) }

    /// Reads the value from a JSON object key.
    public init?<T: CodingKey>(codingKey: T) {
        self.init(rawValue: codingKey.stringValue)
    }
}

/// The name of a monitored activity (DeviceActivity's `DeviceActivityName`). JSON: a plain string.
///
/// Starting to monitor a name that is already monitored replaces it.
public struct DeviceActivityName: StringIdentifier {
    /// The name.
    public let rawValue: String

    /// A name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A name, as Apple's `init(_:)`.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}

extension DeviceActivityEvent {
    /// The unique name of an event within an activity (`DeviceActivityEvent.Name`). JSON: a plain string.
    public struct Name: StringIdentifier {
        /// The name.
        public let rawValue: String

        /// A name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// A name, as Apple's `init(_:)`.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
        }
    }
}
