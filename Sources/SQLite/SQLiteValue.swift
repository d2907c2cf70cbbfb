// A value as SQLite stores it: one of its five storage classes.
import Foundation

/// A value in one of SQLite's storage classes, for binding parameters and reading columns.
public enum SQLiteValue: Equatable, Sendable {
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A 64-bit floating-point number.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Raw bytes.
    case blob(Data)
    /// SQL NULL.
    case null

    /// A storage class without its value, for describing type mismatches.
    public enum Kind: String, Sendable {
        case integer, real, text, blob, null
    }

    /// The storage class of this value.
    public var kind: Kind {
        switch self {
        case .integer: return .integer
        case .real: return .real
        case .text: return .text
        case .blob: return .blob
        case .null: return .null
        }
    }
}
