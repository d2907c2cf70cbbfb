// The stored scalars read on every shield and notification, read from their text without `JSONDecoder`.
import Foundation

/// Flags, whole numbers, timestamps and plain strings as `ValueCoding` stores them (`true`, `3`, `1764543600.5`,
/// `"Instagram"`), read from the stored text: a `JSONDecoder` set up per read costs more than the store's read itself.
/// It reads what `JSONDecoder` would and nil from any other text (a string with escapes, a number out of range, another
/// type), which then goes to `JSONDecoder`, which reads it or says what is wrong.
enum StoredScalarReading {
    static func value<T>(_ type: T.Type, json: String) -> T? {
        if T.self == Bool.self { return read(bool(json), as: T.self) }
        if T.self == Double.self { return read(double(json), as: T.self) }
        if T.self == Int.self { return read(int(json), as: T.self) }
        if T.self == String.self { return read(string(json), as: T.self) }
        // `ValueCoding` stores dates as seconds since 1970, as `JSONDecoder`'s `.secondsSince1970` reads them.
        if T.self == Date.self { return read(double(json).map(Date.init(timeIntervalSince1970:)), as: T.self) }
        if T.self == [String].self { return read(strings(json), as: T.self) }
        return nil
    }

    /// `value` as the `T` its caller found it is by comparing the metatypes: in this unspecialized code `as? T` would
    /// be a dynamic cast at run time, at every read.
    private static func read<Value, T>(_ value: Value?, as _: T.Type) -> T? {
        precondition(Value.self == T.self)
        return unsafeBitCast(value, to: T?.self)
    }

    static func bool(_ json: String) -> Bool? {
        switch json {
        case "true": return true
        case "false": return false
        default: return nil
        }
    }

    /// A JSON number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`) whose value is finite.
    static func double(_ json: String) -> Double? {
        var utf8 = json.utf8[...]
        func digits() -> Int {
            let count = utf8.prefix(while: { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }).count
            utf8 = utf8.dropFirst(count)
            return count
        }
        if utf8.first == UInt8(ascii: "-") { utf8 = utf8.dropFirst() }
        let leading = utf8.first
        let whole = digits()
        guard whole > 0, leading != UInt8(ascii: "0") || whole == 1 else { return nil }
        if utf8.first == UInt8(ascii: ".") {
            utf8 = utf8.dropFirst()
            guard digits() > 0 else { return nil }
        }
        if utf8.first == UInt8(ascii: "e") || utf8.first == UInt8(ascii: "E") {
            utf8 = utf8.dropFirst()
            if utf8.first == UInt8(ascii: "+") || utf8.first == UInt8(ascii: "-") { utf8 = utf8.dropFirst() }
            guard digits() > 0 else { return nil }
        }
        // A zero is left to JSONDecoder too: a non-zero text that underflows reads as 0 here, and JSONDecoder refuses it.
        guard utf8.isEmpty, let value = Double(json), value.isFinite, value != 0 else { return nil }
        return value
    }

    /// A JSON integer as stored (`-?(0|[1-9][0-9]*)`) that fits an `Int`; a fraction or an exponent, which `JSONDecoder`
    /// also reads as a whole number, and a number out of range, which it refuses, are left to it.
    static func int(_ json: String) -> Int? {
        var digits = json.utf8[...]
        if digits.first == UInt8(ascii: "-") { digits = digits.dropFirst() }
        guard let first = digits.first, first != UInt8(ascii: "0") || digits.count == 1,
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(json)
    }

    /// A JSON array of strings with nothing escaped, as stored (no space between the elements): with no quote inside
    /// a string, each `","` is a boundary between two.
    static func strings(_ json: String) -> [String]? {
        guard json.utf8.first == UInt8(ascii: "["), json.utf8.last == UInt8(ascii: "]") else { return nil }
        let inner = json.utf8.dropFirst().dropLast()
        guard !inner.isEmpty else { return [] }
        var found: [String] = []
        var rest = inner[...]
        while true {
            guard rest.first == UInt8(ascii: "\""), let close = rest.dropFirst().firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            let text = rest[rest.index(after: rest.startIndex)..<close]
            guard !text.contains(where: { $0 == UInt8(ascii: "\\") || $0 < 0x20 }) else { return nil }
            found.append(String(decoding: text, as: UTF8.self))
            rest = rest[rest.index(after: close)...]
            if rest.isEmpty { return found }
            guard rest.first == UInt8(ascii: ",") else { return nil }
            rest = rest.dropFirst()
        }
    }

    /// A JSON string with nothing escaped: quotes around text with no quote, backslash or control character.
    static func string(_ json: String) -> String? {
        let utf8 = json.utf8
        guard utf8.count >= 2, utf8.first == UInt8(ascii: "\""), utf8.last == UInt8(ascii: "\"") else { return nil }
        let inner = utf8.dropFirst().dropLast()
        guard !inner.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }) else { return nil }
        // Cut by bytes, not characters: a combining mark after the opening quote is one character with it.
        return String(decoding: inner, as: UTF8.self)
    }
}
