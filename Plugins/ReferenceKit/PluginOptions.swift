import Foundation
import ShieldBusSDK

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
        try PluginOptionsError.rejectUnknown(try container(keyedBy: AnyOptionKey.self).allKeys.map(\.stringValue), allowed: allowed, in: place)
    }
}

extension PluginOptionsError {
    /// Throws `unknownKey` for the first of `keys` (in sorted order) not in `allowed`.
    static func rejectUnknown(_ keys: [String], allowed: [String], in place: String) throws {
        if let unknown = keys.sorted().first(where: { !allowed.contains($0) }) {
            throw PluginOptionsError.unknownKey(unknown, in: place, allowed: allowed)
        }
    }
}

/// One object of a plugin's options, read member by member from the configuration's JSON (`JSONValue`) instead of
/// `Codable` (`JSONReadableOptions`): an unknown key is refused, a member of the wrong type is named by its key path
/// with what was expected, and an absent or null member reads as nil (as `decodeIfPresent` reads it).
public struct OptionsObject {
    private let members: [String: JSONValue]
    /// Where the object sits in the options, for errors: empty at the top, e.g. `focusHours[0]` inside.
    private let path: String

    /// The object `value`, whose keys must be among `allowed` (`place` names it in the error); nil allows any key.
    public init(_ value: JSONValue, path: String = "", in place: String, allowed: [String]?) throws {
        guard case .object(let members) = value else {
            throw PluginOptionsError.invalid(key: path.isEmpty ? "options" : path, problem: "expected an object, found \(value.kindName)")
        }
        if let allowed { try PluginOptionsError.rejectUnknown(Array(members.keys), allowed: allowed, in: place) }
        self.members = members
        self.path = path
    }

    /// The key path of member `key`, as errors name it.
    private func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func member(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    private func mismatch(_ key: String, expected: String, found: JSONValue) -> PluginOptionsError {
        .invalid(key: keyPath(key), problem: "expected \(expected), found \(found.kindName)")
    }

    /// The text of member `key`.
    public func string(_ key: String) throws -> String? {
        guard let value = member(key) else { return nil }
        guard case .string(let text) = value else { throw mismatch(key, expected: "a string", found: value) }
        return text
    }

    /// The whole number of member `key` (`integer(_:as:)`).
    public func int(_ key: String) throws -> Int? { try integer(key, as: Int.self) }

    /// The whole number of member `key` as `Integer`: the reader of every integer option. A number written with a
    /// fraction or an exponent is read when its value is a whole number `Integer` holds exactly (`35.0`, `3.5e1`), as
    /// `JSONDecoder` read it and as YAML and JSON authors write it; `35.5` or a number out of `Integer`'s range is
    /// refused, naming the key path and the number.
    public func integer<Integer: FixedWidthInteger>(_ key: String, as type: Integer.Type) throws -> Integer? {
        guard let value = member(key) else { return nil }
        let exact: Integer?, written: String
        switch value {
        case .int(let number): (exact, written) = (Integer(exactly: number), "\(number)")
        case .double(let number) where number.rounded(.towardZero) == number:
            (exact, written) = (Integer(exactly: number), "\(number)")
            // From 2^53 on a decimal is not read exactly: the whole number it gives may not be the one written.
            if exact != nil, number.magnitude >= 0x1p53 {
                throw PluginOptionsError.invalid(key: keyPath(key), problem: "expected a whole number from 2^53 on written without a fraction or an exponent, found \(number)")
            }
        case .double(let number): throw PluginOptionsError.invalid(key: keyPath(key), problem: "expected a whole number, found \(number)")
        default: throw mismatch(key, expected: "a whole number", found: value)
        }
        guard let exact else {
            throw PluginOptionsError.invalid(key: keyPath(key), problem: "expected a whole number from \(Integer.min) to \(Integer.max), found \(written)")
        }
        return exact
    }

    /// The true or false of member `key`.
    public func bool(_ key: String) throws -> Bool? {
        guard let value = member(key) else { return nil }
        guard case .bool(let flag) = value else { throw mismatch(key, expected: "true or false", found: value) }
        return flag
    }

    /// The texts by name of member `key`, an object whose every value is a string.
    public func strings(_ key: String) throws -> [String: String]? {
        guard let value = member(key) else { return nil }
        guard case .object(let members) = value else { throw mismatch(key, expected: "an object", found: value) }
        var texts: [String: String] = [:]
        for (name, item) in members {
            guard case .string(let text) = item else {
                throw PluginOptionsError.invalid(key: "\(keyPath(key)).\(name)", problem: "expected a string, found \(item.kindName)")
            }
            texts[name] = text
        }
        return texts
    }

    /// The object of member `key`, with keys among `allowed` (`place` names it in the error; nil allows any key).
    public func object(_ key: String, in place: String, allowed: [String]?) throws -> OptionsObject? {
        guard let value = member(key) else { return nil }
        return try OptionsObject(value, path: keyPath(key), in: place, allowed: allowed)
    }

    /// The case of `Value` that member `key`'s text names.
    public func choice<Value: RawRepresentable & CaseIterable>(_ key: String, of type: Value.Type) throws -> Value? where Value.RawValue == String {
        guard let text = try string(key) else { return nil }
        guard let value = Value(rawValue: text) else {
            throw PluginOptionsError.invalid(key: keyPath(key), problem: "'\(text)' is not one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// The time of day (`"HH:MM"`) of member `key`.
    public func clockTime(_ key: String) throws -> ClockTime? {
        guard let text = try string(key) else { return nil }
        guard let time = ClockTime(text) else { throw PluginOptionsError.invalid(key: keyPath(key), problem: ClockTime.notATimeOfDay(text)) }
        return time
    }

    /// The list of objects of member `key`, each with keys among `allowed` (`place` names them in the error; nil
    /// allows any key).
    public func objects(_ key: String, in place: String, allowed: [String]?) throws -> [OptionsObject]? {
        guard let value = member(key) else { return nil }
        guard case .array(let items) = value else { throw mismatch(key, expected: "a list", found: value) }
        return try items.enumerated().map { index, item in
            try OptionsObject(item, path: "\(keyPath(key))[\(index)]", in: place, allowed: allowed)
        }
    }

    /// The value `read` finds for member `key`, which must be there.
    public func required<T>(_ key: String, _ read: (String) throws -> T?) throws -> T {
        guard let value = try read(key) else { throw PluginOptionsError.invalid(key: keyPath(key), problem: "missing") }
        return value
    }
}

