// ScreenTime: the pure domain model of Apple's FamilyControls, ManagedSettings and DeviceActivity.
//
// Shared by the simulated OS (the broker) and the plugin SDK. Everything here is a value or
// a pure function: no I/O, no clock (every instant is passed in), no transport. Values travel
// as JSON on the bus, so every type is Codable with a stable, readable form (see NOTES.md).

import Foundation

/// A coding key made from any string, for JSON objects keyed by tokens or names.
struct StringCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int? = nil

    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

extension KeyedEncodingContainer {
    /// Encodes a set as a sorted array, so that equal sets always give identical JSON.
    mutating func encodeSorted<T: Encodable & Comparable>(_ set: Set<T>, forKey key: Key) throws {
        try encode(set.sorted(), forKey: key)
    }

    /// Encodes an optional set as a sorted array, leaving the key out when it is nil.
    mutating func encodeSortedIfPresent<T: Encodable & Comparable>(_ set: Set<T>?, forKey key: Key) throws {
        if let set { try encodeSorted(set, forKey: key) }
    }
}

/// Formats a length of time for error messages: "1 d 2 h", "14 min 59 s".
func describeDuration(_ seconds: TimeInterval) -> String {
    var rest = Int(seconds.rounded())
    if rest == 0 { return "0 s" }
    let sign = rest < 0 ? "-" : ""
    rest = abs(rest)
    let units: [(String, Int)] = [("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1)]
    var parts: [String] = []
    for (name, size) in units where rest >= size {
        parts.append("\(rest / size) \(name)")
        rest %= size
    }
    return sign + parts.joined(separator: " ")
}
