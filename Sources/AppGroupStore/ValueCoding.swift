// How values become stored JSON text with a type tag, and back.
import BusProtocol
import Foundation
import SortedJSON

/// JSON encoding of stored values.
///
/// Keys are sorted so equal values give identical bytes (runs stay byte-for-byte
/// deterministic); dates are seconds since 1970, as the seeds store timestamps.
enum ValueCoding {
    /// Encodes `value` for `key` as JSON text and its type tag: `JSONEncoder`'s bytes with sorted keys, unescaped
    /// slashes and dates as seconds, written by `SortedJSONEncoder` (every App-Group write goes through here).
    static func encode<T: Encodable>(_ value: T, forKey key: String) throws -> (json: String, typeTag: String) {
        try encodedByEncoder(value, forKey: key)
    }

    /// The same text, which the value writes itself unless it leaves it to the encoder.
    static func encode<T: StoredJSONWritable>(_ value: T, forKey key: String) throws -> (json: String, typeTag: String) {
        guard let bytes = value.storedJSON else { return try encodedByEncoder(value, forKey: key) }
        return (String(decoding: bytes, as: UTF8.self), typeTag(T.self))
    }

    private static func encodedByEncoder<T: Encodable>(_ value: T, forKey key: String) throws -> (json: String, typeTag: String) {
        do {
            let bytes = try SortedJSONEncoder(dates: .secondsSince1970).encode(value)
            return (String(decoding: bytes, as: UTF8.self), typeTag(T.self))
        } catch {
            throw AppGroupStoreError.encodeFailed(key: key, type: typeTag(T.self), underlying: error)
        }
    }

    /// Decodes `entry` as `T`, throwing `decodeFailed` (never substituting a default) when it does not fit. A value
    /// that writes a key twice in one object (put in the store by a process that bypassed the API) is refused as the
    /// bus refuses it: `JSONDecoder` would keep one of the two, where the broker's reading of the group refuses it.
    static func decode<T: Decodable>(_ type: T.Type, from entry: StoredEntry) throws -> T {
        if let read = StoredScalarReading.value(type, json: entry.rawJSON) { return read }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        // From the text's bytes, not `Data(_: some Sequence)`, which first casts its argument to `ContiguousBytes` at
        // run time (a scan of the conformance records at a launch's first read).
        var json = entry.rawJSON
        let data = json.withUTF8 { Data(buffer: $0) }
        do {
            try JSONParser.check(Array(data))
            return try decoder.decode(T.self, from: data)
        } catch {
            throw AppGroupStoreError.decodeFailed(key: entry.key, expectedType: typeTag(T.self),
                                                  storedType: entry.typeTag, underlying: error)
        }
    }

    /// The tag stored with a value: the Swift type's name, unqualified — the text `String(describing: type)` gives,
    /// without its way there: `String(describing:)` first asks the metatype for `TextOutputStreamable`,
    /// `CustomStringConvertible` and `CustomDebugStringConvertible` and reflects it, and each first ask for a type
    /// scans every protocol conformance record of the program (at a monitor's start, at every write of a new
    /// type; docs/benchmarks.md, "Explore and launches").
    static func typeTag<T>(_ type: T.Type) -> String { _typeName(type, qualified: false) }
}

/// A value stored at every event (the report builder's day and recorder), which writes its own JSON text: the very
/// bytes `ValueCoding.encode` writes for it through `SortedJSONEncoder` (keys sorted, dates as seconds), without
/// `Codable`'s containers. `SharedDefaultsTransaction.set` takes it by its static type.
public protocol StoredJSONWritable: Encodable {
    /// The encoder's bytes for this value; nil leaves it to the encoder (a value it refuses, such as NaN, says so).
    var storedJSON: [UInt8]? { get }
}
