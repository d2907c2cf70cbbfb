// YAMLPlainScalar: the YAML 1.1 type of a plain scalar (true/false, a number, null), read by hand as Yams' default
// resolver reads it with regular expressions.
import Yams

/// What a plain (unquoted, untagged) scalar is, by the rules of Yams' `Resolver.default`, in its order: bool, int,
/// float, merge, null, timestamp, value, else text. Files are composed with `Resolver.basic` and their plain scalars
/// typed here: the default resolver compiles its patterns with ICU, whose first regular expression in a process sets
/// up ICU's regex tables — most of the configuration's reading, on the way to every run's start — and nothing else
/// of a run needs a regular expression. `YAMLPlainScalarTests` holds it to the resolver's own answers.
enum YAMLPlainScalar {
    /// The tag `scalar` has: its own when written (a quoted scalar's is `str`), else its plain scalar's type.
    /// Asked before anything else looks at the scalar's tag: Yams resolves a tag in place at its first use (its
    /// `==`, its hashing, `node.tag`), and under `Resolver.basic` an implicit one becomes `str`, after which a plain
    /// `3` or `on` would read here as text. Only keys are compared before (`YAMLValue`), and keys are text anyway.
    static func tagName(of scalar: Node.Scalar) -> Tag.Name {
        // The tag as written (Yams keeps its name to itself; its description is the name).
        let written = Tag.Name(rawValue: scalar.tag.description)
        return written == .implicit ? tagName(plain: scalar.string) : written
    }

    /// The tag Yams' default resolver gives a plain scalar written `text`.
    static func tagName(plain text: String) -> Tag.Name {
        let bytes = Array(text.utf8)
        if isBool(bytes) { return .bool }
        if isInt(bytes) { return .int }
        if isFloat(bytes) { return .float }
        if bytes == Array("<<".utf8) { return .merge }
        if isNull(bytes) { return .null }
        if isTimestamp(bytes) { return .timestamp }
        if bytes == Array("=".utf8) { return .value }
        return .str
    }

    private static let boolWords: Set<String> = ["yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
                                                 "on", "On", "ON", "off", "Off", "OFF"]

    private static func isBool(_ bytes: [UInt8]) -> Bool { bytes.count <= 5 && boolWords.contains(String(decoding: bytes, as: UTF8.self)) }

    private static func isNull(_ bytes: [UInt8]) -> Bool {
        bytes.isEmpty || [Array("~".utf8), Array("null".utf8), Array("Null".utf8), Array("NULL".utf8)].contains(bytes)
    }

    /// `[-+]?0b[0-1_]+ | [-+]?0o?[0-7_]+ | [-+]?(?:0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+`
    private static func isInt(_ bytes: [UInt8]) -> Bool {
        var reader = Reader(bytes)
        reader.skipSign()
        let body = reader.rest
        guard let first = body.first else { return false }
        if first == zero {
            if body.count == 1 { return true }
            if body[1] == UInt8(ascii: "b") { return body.count > 2 && body.dropFirst(2).allSatisfy { $0 == zero || $0 == one || $0 == underscore } }
            if body[1] == UInt8(ascii: "x") { return body.count > 2 && body.dropFirst(2).allSatisfy { isHexDigit($0) || $0 == underscore } }
            let octal = body[1] == UInt8(ascii: "o") ? body.dropFirst(2) : body.dropFirst()
            return !octal.isEmpty && octal.allSatisfy { ($0 >= zero && $0 <= UInt8(ascii: "7")) || $0 == underscore }
        }
        guard first >= one && first <= nine else { return false }
        // Decimal, or sexagesimal: digits and underscores, then `:` groups.
        var rest = Reader(body)
        rest.skip { isDigit($0) || $0 == underscore }
        return rest.isAtEnd || rest.skipSexagesimalGroups() && rest.isAtEnd
    }

    /// `[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)? | \.[0-9_]+(?:[eE][-+][0-9]+)? |
    /// [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)`
    private static func isFloat(_ bytes: [UInt8]) -> Bool {
        if [".nan", ".NaN", ".NAN"].contains(where: { bytes == Array($0.utf8) }) { return true }
        var reader = Reader(bytes)
        let signed = reader.skipSign()
        let body = reader.rest
        if [".inf", ".Inf", ".INF"].contains(where: { body == Array($0.utf8) }) { return true }
        guard let first = body.first else { return false }
        if first == dot {
            // Only unsigned, with digits after the point and an exponent's sign written.
            guard !signed, body.count > 1 else { return false }
            var rest = Reader(Array(body.dropFirst()))
            guard rest.skip({ isDigit($0) || $0 == underscore }) > 0 else { return false }
            if rest.isAtEnd { return true }
            guard rest.take({ $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }), rest.take({ $0 == plus || $0 == minus }) else { return false }
            return rest.skip(isDigit) > 0 && rest.isAtEnd
        }
        guard isDigit(first) else { return false }
        var rest = Reader(body)
        rest.skip { isDigit($0) || $0 == underscore }
        if rest.peek == colon {
            // Sexagesimal: its groups, then a point (with any digits after it) is required.
            guard rest.skipSexagesimalGroups(), rest.take({ $0 == dot }) else { return false }
            rest.skip { isDigit($0) || $0 == underscore }
            return rest.isAtEnd
        }
        if rest.take({ $0 == dot }) { rest.skip { isDigit($0) || $0 == underscore } }
        if rest.take({ $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            _ = rest.take { $0 == plus || $0 == minus }
            guard rest.skip(isDigit) > 0 else { return false }
        }
        return rest.isAtEnd
    }

    /// `[0-9]{4}-[0-9]{2}-[0-9]{2} | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?
    /// (?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?`
    private static func isTimestamp(_ bytes: [UInt8]) -> Bool {
        var date = Reader(bytes)
        guard date.digits(4...4), date.take({ $0 == minus }), date.digits(2...2), date.take({ $0 == minus }), date.digits(2...2) else {
            return isTimestampWithTime(bytes)
        }
        return date.isAtEnd || isTimestampWithTime(bytes)
    }

    private static func isTimestampWithTime(_ bytes: [UInt8]) -> Bool {
        var reader = Reader(bytes)
        guard reader.digits(4...4), reader.take({ $0 == minus }), reader.digits(1...2), reader.take({ $0 == minus }), reader.digits(1...2) else { return false }
        if !reader.take({ $0 == UInt8(ascii: "T") || $0 == UInt8(ascii: "t") }) {
            guard reader.skip(isBlank) > 0 else { return false }
        }
        guard reader.digits(1...2), reader.take({ $0 == colon }), reader.digits(2...2), reader.take({ $0 == colon }), reader.digits(2...2) else { return false }
        if reader.take({ $0 == dot }) { reader.skip(isDigit) }
        if reader.isAtEnd { return true }
        reader.skip(isBlank)
        if reader.take({ $0 == UInt8(ascii: "Z") }) { return reader.isAtEnd }
        guard reader.take({ $0 == plus || $0 == minus }), reader.digits(1...2) else { return false }
        if reader.take({ $0 == colon }) { guard reader.digits(2...2) else { return false } }
        return reader.isAtEnd
    }

    private static let zero = UInt8(ascii: "0"), one = UInt8(ascii: "1"), nine = UInt8(ascii: "9")
    private static let underscore = UInt8(ascii: "_"), dot = UInt8(ascii: "."), colon = UInt8(ascii: ":")
    private static let plus = UInt8(ascii: "+"), minus = UInt8(ascii: "-")
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= zero && byte <= nine }
    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }

    /// Reads bytes from the front.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { index == bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }
        var rest: [UInt8] { Array(bytes[index...]) }

        /// Takes one byte that passes `test`.
        mutating func take(_ test: (UInt8) -> Bool) -> Bool {
            guard let byte = peek, test(byte) else { return false }
            index += 1
            return true
        }

        /// Takes every byte that passes `test`; how many.
        @discardableResult
        mutating func skip(_ test: (UInt8) -> Bool) -> Int {
            let start = index
            while let byte = peek, test(byte) { index += 1 }
            return index - start
        }

        @discardableResult
        mutating func skipSign() -> Bool { take { $0 == YAMLPlainScalar.plus || $0 == YAMLPlainScalar.minus } }

        /// Takes `count` digits, as many as there are within it.
        mutating func digits(_ count: ClosedRange<Int>) -> Bool {
            let start = index
            while index - start < count.upperBound, let byte = peek, YAMLPlainScalar.isDigit(byte) { index += 1 }
            return count.contains(index - start)
        }

        /// `(?::[0-5]?[0-9])+`: at least one group.
        mutating func skipSexagesimalGroups() -> Bool {
            var groups = 0
            while peek == YAMLPlainScalar.colon {
                index += 1
                guard let first = peek, YAMLPlainScalar.isDigit(first) else { return false }
                index += 1
                // A second digit belongs to the group when the first is 0–5 (`[0-5]?[0-9]`).
                if first <= UInt8(ascii: "5"), let second = peek, YAMLPlainScalar.isDigit(second) { index += 1 }
                groups += 1
            }
            return groups > 0
        }
    }
}
