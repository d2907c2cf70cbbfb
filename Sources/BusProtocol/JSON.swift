// A small, strict, fast JSON reader and writer over bytes.
//
// The broker validates every body that crosses the bus and copies it into the event envelope without
// re-encoding it, so it needs to validate and locate values in raw bytes; Foundation's JSONSerialization
// can do neither cheaply. Output is deterministic (object keys sorted) so journals compare byte for byte.
//
// A key written twice in one object is refused, by the validator as by the reader: RFC 8259 leaves what it means to
// each reader (`JSONDecoder` keeps the first, `JSONSerialization` and a dictionary the last), so bytes that two readers
// could read differently never pass the broker, and are never read one way here and another there.
//
// Why one file past 500 lines: the reader, the validator that locates values in raw bytes and the writer share one
// byte-level grammar (escapes, numbers, nesting limits); apart, each would restate it.

/// A JSON value.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The member `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e15: return Int64(d)
        default: return nil
        }
    }
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }

    /// The kind of value, as JSON names it (for error messages).
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// Parses one JSON text.
    public init(parsing bytes: [UInt8]) throws {
        var parser = JSONParser(bytes)
        self = try parser.parseDocument()
    }

    /// Parses one JSON text that may write a key twice in one object, keeping `kept` of its values: only for naming
    /// what refused bytes were about (a refused hello's plugin), never for acting on them — two readers would differ.
    public init(parsingLeniently bytes: [UInt8], keeping kept: JSONParser.RepeatedKeys) throws {
        var parser = JSONParser(bytes)
        parser.repeatedKeys = kept
        self = try parser.parseDocument()
    }

    /// Parses one JSON text given as a string.
    public init(parsing text: String) throws {
        try self.init(parsing: Array(text.utf8))
    }

    /// Compact JSON, object keys sorted: the same value always gives the same bytes.
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        JSONWriter.write(self, into: &out)
        return out
    }

    /// Compact JSON text, object keys sorted.
    public var jsonText: String { String(decoding: jsonBytes, as: UTF8.self) }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}

/// Why some bytes are not JSON, and where.
public struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "not valid JSON at byte \(offset): \(reason)" }

    /// `key` written a second time in one object, at `offset` (its opening quote).
    static func repeatedKey(_ key: String, at offset: Int) -> JSONSyntaxError {
        let shown = key.unicodeScalars.count > 40 ? String(String.UnicodeScalarView(key.unicodeScalars.prefix(40))) + "…" : key
        return JSONSyntaxError(offset: offset, reason: "the key '\(TerminalText.escaped(shown))' appears twice in one object; a key may appear only once")
    }
}

/// The type of a JSON value found while scanning, without building it.
public enum JSONKind: Sendable { case null, bool, number, string, array, object }

/// A recursive-descent JSON parser over bytes (RFC 8259, strict: no trailing commas, no comments, UTF-8 checked).
public struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    /// Set when insignificant whitespace was seen inside a scanned value (the value is not compact).
    var sawWhitespace = false
    /// Set when a scanned string held a character past ASCII.
    var sawNonASCII = false
    /// The most objects and arrays that may enclose one another, the outermost included (protocol.md § 3).
    public static let maximumNesting = 128

    /// What a key written twice in one object does: refused everywhere the bytes are acted on (protocol.md § 3).
    public enum RepeatedKeys: Sendable { case refused, firstKept, lastKept }
    /// Changed only by `JSONValue(parsingLeniently:keeping:)`.
    var repeatedKeys = RepeatedKeys.refused

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, reason: reason) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1; sawWhitespace = true
            default: return
            }
        }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws {
        guard index < bytes.count, bytes[index] == byte else { throw fail("expected \(what)") }
        index += 1
    }

    /// Steps into an object or array with `depth` containers around it; scalars add no level.
    private mutating func enterContainer(_ depth: Int) throws {
        guard depth < JSONParser.maximumNesting else { throw fail("nested deeper than \(JSONParser.maximumNesting) levels of objects and arrays") }
        index += 1
    }

    /// Parses a whole document: one value and nothing but whitespace after it.
    public mutating func parseDocument() throws -> JSONValue {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
        return value
    }

    mutating func parseValue(depth: Int) throws -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            try enterContainer(depth)
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            // Room for a body's usual members at once: grown one step at a time, the table is rebuilt three times.
            members.reserveCapacity(8)
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let keyStart = index
                let key = try parseString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':' after an object key")
                skipWhitespace()
                let value = try parseValue(depth: depth + 1)
                if let earlier = members.updateValue(value, forKey: key) {
                    switch repeatedKeys {
                    case .refused: throw JSONSyntaxError.repeatedKey(key, at: keyStart)
                    case .firstKept: members[key] = earlier
                    case .lastKept: break
                    }
                }
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw fail("expected ',' or '}' in an object")
            }
        case UInt8(ascii: "["):
            try enterContainer(depth)
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw fail("expected ',' or ']' in an array")
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default:
            let start = index
            let isInteger = try scanNumber()
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let int = Int64(text) { return .int(int) }
            guard let double = Double(text) else { throw JSONSyntaxError(offset: start, reason: "number out of range") }
            return .double(double)
        }
    }

    mutating func literal(_ word: String) throws {
        for expected in word.utf8 {
            guard index < bytes.count else { throw fail("unexpected end of input") }
            guard bytes[index] == expected else { throw fail("unexpected character") }
            index += 1
        }
    }

    /// Scans a number per the JSON grammar; returns whether it is an integer (no fraction or exponent).
    mutating func scanNumber() throws -> Bool {
        let start = index
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else {
            index = start
            throw fail("unexpected character")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected a digit in the exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return isInteger
    }

    @inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// Parses a string starting at its opening quote and returns its unescaped value.
    mutating func parseString() throws -> String {
        let start = index + 1
        let hasEscapes = try scanString()
        let raw = bytes[start..<(index - 1)]
        if !hasEscapes { return String(decoding: raw, as: UTF8.self) }
        return try unescape(raw)
    }

    /// Moves past a string starting at its opening quote, validating escapes and UTF-8.
    /// Returns whether it contains escapes.
    mutating func scanString() throws -> Bool {
        index = plainRunEnd(from: index + 1)  // past the opening quote and the plain bytes after it
        var hasEscapes = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { index += 1; return hasEscapes }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                index += 1
                guard index < bytes.count else { break }
                switch bytes[index] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                     UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                case UInt8(ascii: "u"):
                    guard index + 4 < bytes.count,
                          (1...4).allSatisfy({ hexValue(bytes[index + $0]) != nil }) else {
                        throw fail("invalid \\u escape")
                    }
                    index += 5
                default:
                    throw fail("invalid escape in a string")
                }
            } else if byte < 0x20 {
                throw fail("control character in a string (must be escaped)")
            } else if byte < 0x80 {
                index += 1
            } else {
                sawNonASCII = true
                try skipUTF8Sequence()
            }
        }
        throw fail("unterminated string")
    }

    /// Where the run of plain string bytes from `start` on ends — printable ASCII other than `"` and `\`, the
    /// bulk of most strings — tested eight bytes at a time. What ends it is for the byte-by-byte check.
    @inline(__always)
    func plainRunEnd(from start: Int) -> Int {
        bytes.withUnsafeBytes { raw in
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            /// Whether some byte of `word` is 0 (the classic test: exact for "any", whatever the byte order).
            func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
            var at = start
            while at + 8 <= raw.count {
                let word = raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)
                let below0x20 = (word &- ones &* 0x20) & ~word & highs != 0
                if below0x20 || word & highs != 0 || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C)) { break }
                at += 8
            }
            return at
        }
    }

    mutating func skipUTF8Sequence() throws {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: throw fail("invalid UTF-8")
        }
        guard index + length <= bytes.count else { throw fail("truncated UTF-8 sequence") }
        for offset in 1..<length where bytes[index + offset] & 0xC0 != 0x80 {
            throw fail("invalid UTF-8")
        }
        let second = bytes[index + 1]
        if (lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F)
            || (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F) {
            throw fail("invalid UTF-8 (overlong or surrogate)")
        }
        index += length
    }

    func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: return UInt32(byte - 0x30)
        case 0x41...0x46: return UInt32(byte - 0x41 + 10)
        case 0x61...0x66: return UInt32(byte - 0x61 + 10)
        default: return nil
        }
    }

    func unescape(_ raw: ArraySlice<UInt8>) throws -> String {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = raw.startIndex
        func hex4(_ at: Int) -> UInt32 {
            (0..<4).reduce(UInt32(0)) { $0 << 4 | hexValue(raw[at + $1])! }
        }
        while i < raw.endIndex {
            let byte = raw[i]
            guard byte == UInt8(ascii: "\\") else { out.append(byte); i += 1; continue }
            let code = raw[i + 1]
            i += 2
            switch code {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar), i + 5 < raw.endIndex,
                   raw[i] == UInt8(ascii: "\\"), raw[i + 1] == UInt8(ascii: "u") {
                    let low = hex4(i + 2)
                    if (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                guard let unicode = Unicode.Scalar(scalar) else {
                    throw JSONSyntaxError(offset: i, reason: "\\u escape is a lone surrogate")
                }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: out.append(code)  // \" \\ \/
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Checks that `bytes` are one JSON text as `JSONValue(parsing:)` takes it — strict, each key once in its object —
    /// without building it: for what another reader (`JSONDecoder`) is to read as this one would.
    public static func check(_ bytes: [UInt8]) throws {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        _ = try parser.skipValue()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.fail("unexpected data after the JSON value") }
    }

    /// Moves past one value without building it, and says what kind it was.
    public mutating func skipValue(depth: Int = 0) throws -> JSONKind {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            try enterContainer(depth)
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object }
            var keys = ObjectKeys()
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let keyStart = index
                sawNonASCII = false
                let hasEscapes = try scanString()
                try keys.add(keyStart..<index, plain: !hasEscapes && !sawNonASCII, of: self)
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':' after an object key")
                skipWhitespace()
                _ = try skipValue(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object }
                throw fail("expected ',' or '}' in an object")
            }
        case UInt8(ascii: "["):
            try enterContainer(depth)
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array }
            while true {
                skipWhitespace()
                _ = try skipValue(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw fail("unterminated array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array }
                throw fail("expected ',' or ']' in an array")
            }
        case UInt8(ascii: "\""): _ = try scanString(); return .string
        case UInt8(ascii: "t"): try literal("true"); return .bool
        case UInt8(ascii: "f"): try literal("false"); return .bool
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: _ = try scanNumber(); return .number
        }
    }
}

/// The keys of one object met so far while it is scanned, to refuse one written twice without building the object.
///
/// Keys are the same when Swift's strings are equal — by Unicode canonical equivalence, as the dictionaries of
/// `JSONValue` and `JSONDecoder` compare them (`"é"` is `"e\u0301"`, `"\u212A"` the Kelvin sign is `"K"`), so that
/// what passes here every reader takes. An object's first keys written plainly (ASCII, no escapes: the usual ones)
/// are kept as where they stand in the bytes, on the stack, and compared byte by byte, which is that equality for
/// them; from a key written otherwise, or past the first few, all are kept as strings.
struct ObjectKeys {
    /// The first keys' bounds in the bytes (from the opening quote past the closing one): start and end, in turn.
    private var bounds = InlineArray<16, Int>(repeating: 0)
    /// How many keys `bounds` holds; past its room once the keys are kept as `strings`.
    private var count = 0
    /// A bit for each length of key in `bounds` (modulo 64): a key of a length not met needs no comparing.
    private var lengths: UInt64 = 0
    /// Every key as a string, once `bounds` no longer serves.
    private var strings: Set<String>?

    /// Notes the key at `range`, `plain` when written in ASCII without escapes; throws when the object has it already.
    @inline(__always)
    mutating func add(_ range: Range<Int>, plain: Bool, of parser: JSONParser) throws {
        if plain, 2 * count < bounds.count {
            let lengthBit: UInt64 = 1 << (range.count & 63)
            if lengths & lengthBit != 0 { try compare(range, of: parser) }
            lengths |= lengthBit
            bounds[2 * count] = range.lowerBound
            bounds[2 * count + 1] = range.upperBound
            count += 1
            return
        }
        if strings == nil {
            strings = Set((0..<min(count, bounds.count / 2)).map { Self.string(bounds[2 * $0]..<bounds[2 * $0 + 1], of: parser) })
            count = bounds.count
        }
        let key = Self.string(range, of: parser)
        guard strings!.insert(key).inserted else { throw JSONSyntaxError.repeatedKey(key, at: range.lowerBound) }
    }

    /// Throws when a key in `bounds` is written as the key at `range` is. (Mutating only to read `bounds` in place: a
    /// method given a copy of `self` copies them at each read.)
    private mutating func compare(_ range: Range<Int>, of parser: JSONParser) throws {
        let bytes = parser.bytes, length = range.count
        for key in 0..<count where bounds[2 * key + 1] - bounds[2 * key] == length {
            let earlier = bounds[2 * key]
            var offset = 1
            while offset < length - 1, bytes[earlier + offset] == bytes[range.lowerBound + offset] { offset += 1 }
            if offset == length - 1 { throw JSONSyntaxError.repeatedKey(Self.string(range, of: parser), at: range.lowerBound) }
        }
    }

    /// A key as a string. A lone surrogate escape, which the scan lets pass in any string, keeps its written form
    /// here: `JSONValue` and `JSONDecoder` refuse such a key anyway.
    private static func string(_ range: Range<Int>, of parser: JSONParser) -> String {
        let raw = parser.bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]
        return (try? parser.unescape(raw)) ?? String(decoding: raw, as: UTF8.self)
    }
}

/// Writes JSON values and JSON fragments as compact bytes.
public enum JSONWriter {
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): writeInteger(i, into: &out)
        case .double(let d):
            if d.isFinite, d.rounded() == d, abs(d) < 1e15 {
                out.append(contentsOf: String(Int64(d)).utf8)
            } else if d.isFinite {
                out.append(contentsOf: "\(d)".utf8)
            } else {
                out.append(contentsOf: "null".utf8)  // JSON has no NaN or infinity
            }
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (n, element) in elements.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (n, key) in members.keys.sorted().enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(members[key]!, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Writes `s` as a JSON string literal, escaping quotes, backslashes and control characters as `JSONEncoder`
    /// does (the short forms where JSON has one, `\u00XX` for the rest): the wire and the App Group's stored values
    /// (`SortedJSONEncoder`) write strings alike.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Names and topics need no escape: copied in one go rather than byte by byte.
            if !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                out.append(contentsOf: bytes)
            } else {
                writeEscaped(bytes, into: &out)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                HexDigits.append(byte, to: &out)
            default: out.append(byte)
            }
        }
    }

    /// An integer in decimal, as `String(value)` writes it, without making the string.
    public static func writeInteger(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        writeInteger(value.magnitude, into: &out)
    }

    public static func writeInteger(_ value: UInt64, into out: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for UInt64.max's 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            let start = writeDigits(of: value, endingAt: buffer.count, in: buffer)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Writes `value`'s decimal digits into `buffer` so that they end just before `end`; returns where they start.
    @inline(__always)
    static func writeDigits(of value: UInt64, endingAt end: Int, in buffer: UnsafeMutableRawBufferPointer) -> Int {
        var rest = value
        var start = end
        repeat {
            start -= 1
            buffer[start] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        } while rest > 0
        return start
    }
}
