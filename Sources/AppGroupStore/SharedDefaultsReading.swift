// Typed reads shared by SharedDefaults and its transactions, shaped like UserDefaults' getters.
import Foundation

/// Typed reads over stored entries.
///
/// Every getter returns nil only when the key has no value; a value that does not decode
/// as the requested type throws `AppGroupStoreError.decodeFailed` (a missing
/// `quotaEndTimestamp` must not read as 1970, nor a damaged token list as an empty one).
public protocol SharedDefaultsReading {
    /// The stored entry of `key` with its bookkeeping; nil when absent.
    func entry(forKey key: String) throws -> StoredEntry?
}

extension SharedDefaultsReading {
    /// The value of `key` decoded as `type`; nil when absent; throws `decodeFailed` when it does not fit.
    public func value<T: Decodable>(_ type: T.Type, forKey key: String) throws -> T? {
        try entry(forKey: key).map { try ValueCoding.decode(type, from: $0) }
    }

    /// The string value of `key`.
    public func string(forKey key: String) throws -> String? { try value(String.self, forKey: key) }
    /// The integer value of `key`.
    public func integer(forKey key: String) throws -> Int? { try value(Int.self, forKey: key) }
    /// The floating-point value of `key` (integers read as doubles).
    public func double(forKey key: String) throws -> Double? { try value(Double.self, forKey: key) }
    /// The Boolean value of `key`.
    public func bool(forKey key: String) throws -> Bool? { try value(Bool.self, forKey: key) }
    /// The date value of `key`.
    public func date(forKey key: String) throws -> Date? { try value(Date.self, forKey: key) }
    /// The data value of `key`.
    public func data(forKey key: String) throws -> Data? { try value(Data.self, forKey: key) }
}

extension StoredEntry {
    /// The value decoded as `type`, as `value(_:forKey:)` would: for readers of many keys at once, who list them with
    /// one `dictionaryRepresentation()` instead of one read per key.
    public func value<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueCoding.decode(type, from: self)
    }
}
