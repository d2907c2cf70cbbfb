import BusProtocol
import Foundation

/// A `Codable` encoder that writes the very bytes Foundation's `JSONEncoder` writes with
/// `[.sortedKeys, .withoutEscapingSlashes]` and default strategies (dates aside), more cheaply.
///
/// Why: every event the device OS emits, every body a plugin sends and every App-Group value is encoded to JSON, so
/// the encoder's cost is paid on every event (docs/benchmarks.md, "Turns and commits"). The bytes must
/// stay Foundation's — they are in the journal, which is compared byte for byte — so the rules below are
/// swift-foundation's, and `SortedJSONEncoderTests` compares the two on every device API body and on the edge
/// cases (escapes, doubles, nested and keyed-by-integer dictionaries):
/// - object keys sorted by their UTF-8 bytes; a key encoded twice keeps its last value;
/// - strings escape `"` and `\`, and control characters as `\b \f \n \r \t` or `\u00xx` (lowercase hex);
///   `/` and everything from 0x20 up are written as they are;
/// - integers in decimal; a double as its `description` without a trailing `.0`; NaN and infinity are errors;
/// - `URL` as its absolute string, `Data` as Base64, `Decimal` as its description, a value that encodes nothing
///   as `{}`, and `Date` as the given strategy says.
public struct SortedJSONEncoder {
    /// How a `Date` is written.
    public enum DateStrategy {
        /// Integer milliseconds since the Unix epoch, rounded (bus time).
        case millisecondsSince1970
        /// Seconds since the Unix epoch, as a double (`JSONEncoder`'s `.secondsSince1970`).
        case secondsSince1970
    }

    public let dates: DateStrategy

    /// A date as `.millisecondsSince1970` writes it: whole milliseconds, rounded.
    public static func milliseconds(since1970 date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    public init(dates: DateStrategy) {
        self.dates = dates
    }

    /// The value as compact JSON bytes.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        guard let node = try ValueEncoder(dates: dates).boxIfEncoded(value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        var out: [UInt8] = []
        out.reserveCapacity(256)
        Self.write(node, into: &out)
        return out
    }

    // MARK: Writing

    static func write(_ node: Node, into out: inout [UInt8]) {
        switch node {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let text): writeString(text, into: &out)
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (index, element) in array.elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (index, member) in inKeyOrder(object.members).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ text: String, into out: inout [UInt8]) {
        JSONWriter.writeString(text, into: &out)
    }

    /// A floating-point number as this encoder writes it: its `description` without a trailing `.0`; nil for NaN and
    /// infinity, which JSON cannot hold.
    public static func numberText<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F) -> String? {
        guard value.isFinite else { return nil }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// A dictionary keyed by strings as this encoder writes it: an object, its keys in the order of their UTF-8 bytes,
    /// each value written by `write`. For the values that write their own text (`StoredJSONWritable`).
    public static func writeObject<Value>(_ members: [String: Value], into out: inout [UInt8], value write: (Value, inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: "{"))
        for (index, member) in inKeyOrder(members).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(member.key, into: &out)
            out.append(UInt8(ascii: ":"))
            write(member.value, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// An object's members in the order this encoder writes them: by their keys' UTF-8 bytes.
    static func inKeyOrder<Value>(_ members: some Sequence<(key: String, value: Value)>) -> [(key: String, value: Value)] {
        members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// Writes `numberText(value)`; false (nothing written) for NaN and infinity. A whole number below 2^53 is written
    /// from its digits, without making its description: what `description` gives for it, less the `.0`.
    public static func writeNumber(_ value: Double, into out: inout [UInt8]) -> Bool {
        if value == value.rounded(.towardZero), value.magnitude < 9_007_199_254_740_992, !(value == 0 && value.sign == .minus) {
            JSONWriter.writeInteger(Int64(value), into: &out)
            return true
        }
        guard let text = numberText(value) else { return false }
        out.append(contentsOf: text.utf8)
        return true
    }
}

// MARK: The encoded tree

extension SortedJSONEncoder {
    /// An encoded value; containers are references because `Codable` fills a nested container after handing it out.
    enum Node {
        case null
        case bool(Bool)
        case number(String)
        case string(String)
        case object(ObjectNode)
        case array(ArrayNode)
    }

    final class ObjectNode {
        private(set) var members: [(key: String, value: Node)] = []
        /// Each key's place in `members`, built once the object is large (a dictionary of many entries): below
        /// that, looking for a key encoded twice costs less than hashing.
        private var places: [String: Int]?

        func set(_ value: Node, for key: String) {
            if let index = place(of: key) {
                members[index].value = value
                return
            }
            places?[key] = members.count
            members.append((key, value))
            if places == nil && members.count > 16 {
                places = Dictionary(uniqueKeysWithValues: members.enumerated().map { ($0.element.key, $0.offset) })
            }
        }

        func value(for key: String) -> Node? { place(of: key).map { members[$0].value } }

        private func place(of key: String) -> Int? {
            if let places { return places[key] }
            return members.firstIndex { $0.key == key }
        }
    }

    final class ArrayNode {
        var elements: [Node] = []
    }

    /// Where an encoder puts what it encodes: the top level, a key of an object, or a place in an array.
    enum Slot {
        case top
        case member(ObjectNode, String)
        case element(ArrayNode, Int)
    }

    /// The `Encoder` handed to each value's `encode(to:)`.
    final class ValueEncoder: Encoder, SingleValueEncodingContainer {
        let dates: DateStrategy
        let slot: Slot
        private(set) var node: Node?
        var codingPath: [CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(dates: DateStrategy, slot: Slot = .top) {
            self.dates = dates
            self.slot = slot
        }

        /// Records what this encoder encoded, and writes it through to its place in the parent container.
        func settle(_ value: Node) {
            node = value
            switch slot {
            case .top: break
            case .member(let object, let key): object.set(value, for: key)
            case .element(let array, let index): array.elements[index] = value
            }
        }

        /// Encodes one value as a node; one that encodes nothing is an empty object, as in Foundation.
        func box<T: Encodable>(_ value: T) throws -> Node {
            try boxIfEncoded(value) ?? .object(ObjectNode())
        }

        /// Encodes one value as a node (nil if it encodes nothing): Foundation's special cases first, then the
        /// value's own `encode(to:)`.
        func boxIfEncoded<T: Encodable>(_ value: T) throws -> Node? {
            // Comparing metatypes, not casting: a dynamic cast per encoded value would cost more than the rest.
            if T.self == Date.self {
                let date = value as! Date
                switch dates {
                case .millisecondsSince1970: return .number(String(SortedJSONEncoder.milliseconds(since1970: date)))
                case .secondsSince1970: return try Self.number(date.timeIntervalSince1970)
                }
            }
            if T.self == URL.self { return .string((value as! URL).absoluteString) }
            if T.self == Data.self { return .string((value as! Data).base64EncodedString()) }
            if T.self == Decimal.self { return .number((value as! Decimal).description) }
            let encoder = ValueEncoder(dates: dates)
            try value.encode(to: encoder)
            return encoder.node
        }

        static func number<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F) throws -> Node {
            guard let text = SortedJSONEncoder.numberText(value) else {
                throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "Unable to encode \(F.self).\(value) directly in JSON."))
            }
            return .number(text)
        }

        // MARK: Encoder

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            let object: ObjectNode
            if case .object(let existing)? = node {
                object = existing
            } else {
                object = ObjectNode()
                settle(.object(object))
            }
            return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self, object: object))
        }

        func unkeyedContainer() -> UnkeyedEncodingContainer {
            let array: ArrayNode
            if case .array(let existing)? = node {
                array = existing
            } else {
                array = ArrayNode()
                settle(.array(array))
            }
            return UnkeyedContainer(encoder: self, array: array)
        }

        func singleValueContainer() -> SingleValueEncodingContainer { self }

        // MARK: SingleValueEncodingContainer

        func encodeNil() throws { settle(.null) }
        func encode(_ value: Bool) throws { settle(.bool(value)) }
        func encode(_ value: String) throws { settle(.string(value)) }
        func encode(_ value: Double) throws { settle(try Self.number(value)) }
        func encode(_ value: Float) throws { settle(try Self.number(value)) }
        func encode(_ value: Int) throws { settle(.number(String(value))) }
        func encode(_ value: Int8) throws { settle(.number(String(value))) }
        func encode(_ value: Int16) throws { settle(.number(String(value))) }
        func encode(_ value: Int32) throws { settle(.number(String(value))) }
        func encode(_ value: Int64) throws { settle(.number(String(value))) }
        func encode(_ value: UInt) throws { settle(.number(String(value))) }
        func encode(_ value: UInt8) throws { settle(.number(String(value))) }
        func encode(_ value: UInt16) throws { settle(.number(String(value))) }
        func encode(_ value: UInt32) throws { settle(.number(String(value))) }
        func encode(_ value: UInt64) throws { settle(.number(String(value))) }
        func encode<T: Encodable>(_ value: T) throws { settle(try box(value)) }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ValueEncoder
        let object: ObjectNode
        var codingPath: [CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { object.set(.null, for: key.stringValue) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { object.set(.bool(value), for: key.stringValue) }
        mutating func encode(_ value: String, forKey key: Key) throws { object.set(.string(value), for: key.stringValue) }
        mutating func encode(_ value: Double, forKey key: Key) throws { object.set(try ValueEncoder.number(value), for: key.stringValue) }
        mutating func encode(_ value: Float, forKey key: Key) throws { object.set(try ValueEncoder.number(value), for: key.stringValue) }
        mutating func encode(_ value: Int, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { object.set(.number(String(value)), for: key.stringValue) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { object.set(try encoder.box(value), for: key.stringValue) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            let nested: ObjectNode
            if case .object(let existing)? = object.value(for: key.stringValue) {
                nested = existing
            } else {
                nested = ObjectNode()
                object.set(.object(nested), for: key.stringValue)
            }
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, object: nested))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
            let nested: ArrayNode
            if case .array(let existing)? = object.value(for: key.stringValue) {
                nested = existing
            } else {
                nested = ArrayNode()
                object.set(.array(nested), for: key.stringValue)
            }
            return UnkeyedContainer(encoder: encoder, array: nested)
        }

        mutating func superEncoder() -> Encoder { superEncoder(named: "super") }
        mutating func superEncoder(forKey key: Key) -> Encoder { superEncoder(named: key.stringValue) }

        /// An encoder whose value lands under `name` (an empty object until it encodes something, as Foundation's).
        private func superEncoder(named name: String) -> Encoder {
            object.set(.object(ObjectNode()), for: name)
            return ValueEncoder(dates: encoder.dates, slot: .member(object, name))
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoder: ValueEncoder
        let array: ArrayNode
        var codingPath: [CodingKey] { [] }
        var count: Int { array.elements.count }

        mutating func encodeNil() throws { array.elements.append(.null) }
        mutating func encode(_ value: Bool) throws { array.elements.append(.bool(value)) }
        mutating func encode(_ value: String) throws { array.elements.append(.string(value)) }
        mutating func encode(_ value: Double) throws { array.elements.append(try ValueEncoder.number(value)) }
        mutating func encode(_ value: Float) throws { array.elements.append(try ValueEncoder.number(value)) }
        mutating func encode(_ value: Int) throws { array.elements.append(.number(String(value))) }
        mutating func encode(_ value: Int8) throws { array.elements.append(.number(String(value))) }
        mutating func encode(_ value: Int16) throws { array.elements.append(.number(String(value))) }
        mutating func encode(_ value: Int32) throws { array.elements.append(.number(String(value))) }
        mutating func encode(_ value: Int64) throws { array.elements.append(.number(String(value))) }
        mutating func encode(_ value: UInt) throws { array.elements.append(.number(String(value))) }
        mutating func encode(_ value: UInt8) throws { array.elements.append(.number(String(value))) }
        mutating func encode(_ value: UInt16) throws { array.elements.append(.number(String(value))) }
        mutating func encode(_ value: UInt32) throws { array.elements.append(.number(String(value))) }
        mutating func encode(_ value: UInt64) throws { array.elements.append(.number(String(value))) }
        mutating func encode<T: Encodable>(_ value: T) throws { array.elements.append(try encoder.box(value)) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let nested = ObjectNode()
            array.elements.append(.object(nested))
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, object: nested))
        }

        mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
            let nested = ArrayNode()
            array.elements.append(.array(nested))
            return UnkeyedContainer(encoder: encoder, array: nested)
        }

        mutating func superEncoder() -> Encoder {
            array.elements.append(.object(ObjectNode()))
            return ValueEncoder(dates: encoder.dates, slot: .element(array, array.elements.count - 1))
        }
    }
}
