/// A JSON object whose members are located in the raw bytes but decoded only on demand.
///
/// The broker uses it to read a message's few envelope fields and to copy the body through untouched.
public struct JSONObjectView {
    public let bytes: [UInt8]
    /// The members in document order; a linear scan beats hashing for the handful a message has.
    private var members: [(key: String, member: Member)] = []
    /// Built only for objects with many members, so that a hostile message cannot make the scan quadratic.
    private var index: [String: Int]?
    private static let scanLimit = 16

    struct Member {
        let kind: JSONKind
        let range: Range<Int>
        let isCompact: Bool
    }

    /// Validates `bytes` as one JSON object and indexes its members.
    public init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "{") else {
            if parser.index < bytes.count { _ = try parser.skipValue() }
            throw JSONSyntaxError(offset: 0, reason: "expected a JSON object")
        }
        parser.index += 1
        parser.skipWhitespace()
        if parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "}") {
            parser.index += 1
        } else {
            members.reserveCapacity(8)  // a message's members, without growing the list one step at a time
            while true {
                parser.skipWhitespace()
                guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "\"") else {
                    throw parser.fail("expected a string key")
                }
                let keyStart = parser.index
                let key = try parser.parseString()
                parser.skipWhitespace()
                try parser.expect(UInt8(ascii: ":"), "':' after an object key")
                parser.skipWhitespace()
                let start = parser.index
                parser.sawWhitespace = false
                let kind = try parser.skipValue(depth: 1)  // inside this object: it is the first level
                let member = Member(kind: kind, range: start..<parser.index, isCompact: !parser.sawWhitespace)
                guard position(of: key) == nil else { throw JSONSyntaxError.repeatedKey(key, at: keyStart) }
                members.append((key, member))
                if index != nil {
                    index![key] = members.count - 1
                } else if members.count > JSONObjectView.scanLimit {
                    index = Dictionary(uniqueKeysWithValues: members.enumerated().map { ($1.key, $0) })
                }
                parser.skipWhitespace()
                guard parser.index < bytes.count else { throw parser.fail("unterminated object") }
                if bytes[parser.index] == UInt8(ascii: ",") { parser.index += 1; continue }
                if bytes[parser.index] == UInt8(ascii: "}") { parser.index += 1; break }
                throw parser.fail("expected ',' or '}' in an object")
            }
        }
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.fail("unexpected data after the JSON object") }
    }

    /// The member names.
    public var keys: [String] { members.map(\.key) }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        return members.firstIndex { $0.key == key }
    }

    private func member(_ key: String) -> Member? {
        position(of: key).map { members[$0].member }
    }

    /// The kind of the member `key`, or nil when absent.
    public func kind(of key: String) -> JSONKind? { member(key)?.kind }

    /// The member's bytes, compact (insignificant whitespace removed), or nil when absent.
    public func compactBytes(of key: String) -> ArraySlice<UInt8>? {
        guard let member = member(key) else { return nil }
        let raw = bytes[member.range]
        return member.isCompact ? raw : ArraySlice(JSONWriter.minify(raw))
    }

    /// The member decoded as a value, or nil when absent.
    public func value(of key: String) -> JSONValue? {
        guard let member = member(key) else { return nil }
        var parser = JSONParser(bytes)  // shares the buffer: no copy of the member's bytes
        parser.index = member.range.lowerBound
        return try? parser.parseValue(depth: 1)
    }

    /// For a launch template's warm-up (ShieldBusSDK's `LaunchTemplateWarmUp`), which cannot name the members' type:
    /// room for one member reserved and released at once, so that the storage class of their array is made.
    package static func reserveMembers() -> Int {
        var members: [(key: String, member: Member)] = []
        members.reserveCapacity(1)
        return members.capacity
    }
}

extension JSONWriter {
    /// Removes insignificant whitespace from valid JSON bytes (whitespace inside strings is kept).
    public static func minify(_ raw: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var inString = false
        var escaped = false
        for byte in raw {
            if inString {
                out.append(byte)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case 0x20, 0x0A, 0x0D, 0x09: continue
            case UInt8(ascii: "\""): inString = true; out.append(byte)
            default: out.append(byte)
            }
        }
        return out
    }
}
