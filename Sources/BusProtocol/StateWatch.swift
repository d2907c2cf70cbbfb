// StateWatch: the App-Group keys a session's `state.changed` subscription is narrowed to (`watch` in its hello).

/// An App-Group key pattern, as a group's slices, a product's `shared:` keys and a hello's `watch` write it: an exact
/// key, or a prefix ending in `*` (`reports.*`; `*` alone matches every key).
public enum KeyPattern {
    /// Whether `pattern` matches `key`.
    @inline(__always)
    public static func matches(_ pattern: String, _ key: String) -> Bool {
        pattern.hasSuffix("*") ? key.hasPrefix(pattern.dropLast()) : key == pattern
    }

    /// Why `pattern` is no key pattern, if it is not: it is empty, or a `*` stands before its end.
    public static func problem(with pattern: String) -> String? {
        if pattern.isEmpty { return "the pattern is empty" }
        // A character, not a string: a string's `contains` is Foundation's search, which bridges to `NSString`.
        if pattern.dropLast().contains(Character("*")) { return "'*' may only end a pattern" }
        return nil
    }
}

/// The App-Group keys a session watches: its `state.changed` subscription delivers only the changes of these keys of
/// these groups — as an iOS process observes the `UserDefaults` keys it cares about (key-value observing) instead of
/// every write to the suite. Without one, a session gets every change. No other topic is narrowed.
public struct StateWatch: Equatable, Sendable {
    /// By App-Group name, the key patterns watched (`KeyPattern`). A group named with no pattern watches nothing.
    public let keys: [String: [String]]

    public init(_ keys: [String: [String]]) {
        self.keys = keys
    }

    /// The topic a watch narrows.
    public static let topic = "state.changed"

    /// Whether the change of `key` in `group` is one this watch delivers.
    @inline(__always)
    public func covers(group: String, key: String) -> Bool {
        guard let patterns = keys[group] else { return false }
        for pattern in patterns where KeyPattern.matches(pattern, key) { return true }
        return false
    }

    /// Whether it delivers the change a `state.changed` event announces; a body that names no group and key is no
    /// change of a watched key.
    public func covers(_ change: ChangedKey?) -> Bool {
        guard let change else { return false }
        return covers(group: change.group, key: change.key)
    }

    /// What is wrong with it, if anything: an empty group name, a malformed pattern, more than `HelloListSize` allows.
    public var problem: String? {
        var size = HelloListSize()
        for (group, patterns) in keys.sorted(by: { $0.key < $1.key }) {
            if group.isEmpty { return "a group's name is empty" }
            for pattern in patterns {
                if let problem = KeyPattern.problem(with: pattern) { return "'\(pattern)' of group '\(group)': \(problem)" }
                size.add(pattern)
            }
            size.add(group)
        }
        guard size.isWithinLimits else {
            return "it names \(size.count) groups and key patterns of \(size.bytes) bytes; a hello may name at most \(HelloListSize.countLimit), of \(HelloListSize.bytesLimit) bytes in all"
        }
        return nil
    }

    /// As the hello writes it: `{"group": ["key", "prefix.*"], …}`.
    public var jsonValue: JSONValue {
        .object(keys.mapValues { .array($0.map(JSONValue.string)) })
    }
}

/// The group and key a `state.changed` event's body names (`{"group", "key", "writer", "version", "removed"}`).
public struct ChangedKey: Equatable, Sendable {
    public let group: String
    public let key: String

    public init(group: String, key: String) {
        (self.group, self.key) = (group, key)
    }

    /// Read from a `state.changed` body; nil if it is not an object naming a group and a key (strings).
    public init?(body: [UInt8]) {
        guard let view = try? JSONObjectView(body), let group = view.value(of: "group")?.stringValue,
              let key = view.value(of: "key")?.stringValue else { return nil }
        self.init(group: group, key: key)
    }
}
