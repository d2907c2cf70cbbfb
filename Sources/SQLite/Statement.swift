// A compiled SQL statement: typed parameter binding, stepping and typed column reads.
import CSQLite
import Foundation

/// Tells SQLite to copy bound bytes before the bind call returns (`SQLITE_TRANSIENT`).
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A compiled statement of a `SQLiteConnection`; made by `SQLiteConnection.prepare`.
///
/// Parameters and columns are addressed as in SQLite: parameters from 1, columns from 0.
public final class Statement {
    /// The statement's SQL text.
    public let sql: String
    let handle: OpaquePointer
    /// The connection, which outlives the statement: held here, or — for a statement the connection keeps
    /// (`withStatement`) — holding it.
    unowned let connection: SQLiteConnection
    private let owner: SQLiteConnection?
    /// Whether `step` ran since the last reset; only a statement that has produced nothing can be retried.
    private var hasStepped = false
    /// Whether a `withStatement` body is running with it (a nested use of the same SQL then compiles its own).
    var isInUse = false

    init(handle: OpaquePointer, connection: SQLiteConnection, keptByConnection: Bool) {
        self.handle = handle
        self.connection = connection
        self.owner = keptByConnection ? nil : connection
        self.sql = String(cString: sqlite3_sql(handle))
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: Binding

    /// Binds `value` to parameter `index` (1-based).
    public func bind(_ value: SQLiteValue, at index: Int) throws {
        let position = Int32(index)
        let rc: Int32
        switch value {
        case .integer(let number):
            rc = sqlite3_bind_int64(handle, position, number)
        case .real(let number):
            rc = sqlite3_bind_double(handle, position, number)
        case .text(let text):
            rc = bindText(text, at: position)
        case .blob(let bytes) where bytes.isEmpty:
            // A zero-length blob pointer would bind NULL instead of an empty blob.
            rc = sqlite3_bind_zeroblob(handle, position, 0)
        case .blob(let bytes):
            rc = bytes.withUnsafeBytes { buffer in
                sqlite3_bind_blob64(handle, position, buffer.baseAddress, UInt64(buffer.count), transient)
            }
        case .null:
            rc = sqlite3_bind_null(handle, position)
        }
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    /// The text's UTF-8 bytes as they are stored (no C string made): SQLite copies them.
    private func bindText(_ text: String, at position: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { chars in
            // An empty buffer may have no address, which would bind NULL instead of empty text.
            guard let start = chars.baseAddress else { return sqlite3_bind_text64(handle, position, "", 0, transient, UInt8(SQLITE_UTF8)) }
            return start.withMemoryRebound(to: CChar.self, capacity: chars.count) {
                sqlite3_bind_text64(handle, position, $0, UInt64(chars.count), transient, UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Binds `values` to parameters 1...n in order.
    public func bind(_ values: [SQLiteValue]) throws {
        for (offset, value) in values.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    /// Binds an integer to parameter `index` (1-based).
    public func bind(_ value: Int64, at index: Int) throws { try bind(.integer(value), at: index) }
    /// Binds a floating-point number to parameter `index` (1-based).
    public func bind(_ value: Double, at index: Int) throws { try bind(.real(value), at: index) }
    /// Binds UTF-8 text to parameter `index` (1-based).
    public func bind(_ value: String, at index: Int) throws { try bind(.text(value), at: index) }
    /// Binds a blob to parameter `index` (1-based).
    public func bind(_ value: Data, at index: Int) throws { try bind(.blob(value), at: index) }
    /// Binds a blob to parameter `index` (1-based), its bytes copied by SQLite alone (no `Data` made).
    public func bind(_ value: [UInt8], at index: Int) throws {
        guard !value.isEmpty else { return try bind(.blob(Data()), at: index) }
        let rc = value.withUnsafeBytes { sqlite3_bind_blob64(handle, Int32(index), $0.baseAddress, UInt64($0.count), transient) }
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }
    /// Binds NULL to parameter `index` (1-based).
    public func bindNull(at index: Int) throws { try bind(.null, at: index) }

    // MARK: Stepping

    /// Advances the statement: true when a row is available, false when it has finished.
    ///
    /// A statement that runs outside a transaction is retried while the database is busy,
    /// up to the connection's busy timeout; inside a transaction BUSY is thrown at once,
    /// because only the whole transaction can be retried.
    public func step() throws -> Bool {
        try step(retryingBusy: !hasStepped && !connection.isInTransaction)
    }

    func step(retryingBusy: Bool) throws -> Bool {
        let rc = retryingBusy ? connection.retryingBusy { sqlite3_step(handle) } : sqlite3_step(handle)
        hasStepped = true
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc, sql: sql)
        }
    }

    /// Steps until the statement finishes, ignoring rows (for INSERT, UPDATE, DELETE, DDL).
    public func run() throws {
        while try step() {}
    }

    /// Rewinds the statement and clears its bindings so it can run again.
    public func reset() {
        // reset returns the last step's error, which step already reported.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        hasStepped = false
    }

    // MARK: Columns

    /// The number of columns in a row.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// The name of column `index` (0-based).
    public func columnName(at index: Int) -> String {
        sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? ""
    }

    /// The value of column `index` (0-based) of the current row, in its stored type.
    public func value(at index: Int) -> SQLiteValue {
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(handle, column))
            let text = sqlite3_column_text(handle, column)
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            // An empty blob comes back as a null pointer.
            guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default:
            return .null
        }
    }

    /// True when column `index` (0-based) is NULL.
    public func isNull(at index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }

    /// Column `index` as an integer; nil for NULL; throws for any other stored type.
    public func int64(at index: Int) throws -> Int64? {
        switch value(at: index) {
        case .integer(let number): return number
        case .null: return nil
        case let other: throw mismatch(at: index, expected: .integer, found: other.kind)
        }
    }

    /// Column `index` as a floating-point number (integers widen); nil for NULL; throws for text or blobs.
    public func double(at index: Int) throws -> Double? {
        switch value(at: index) {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        case .null: return nil
        case let other: throw mismatch(at: index, expected: .real, found: other.kind)
        }
    }

    /// Column `index` as text; nil for NULL; throws for any other stored type.
    public func string(at index: Int) throws -> String? {
        switch value(at: index) {
        case .text(let text): return text
        case .null: return nil
        case let other: throw mismatch(at: index, expected: .text, found: other.kind)
        }
    }

    /// Column `index` as a blob; nil for NULL; throws for any other stored type.
    public func data(at index: Int) throws -> Data? {
        switch value(at: index) {
        case .blob(let bytes): return bytes
        case .null: return nil
        case let other: throw mismatch(at: index, expected: .blob, found: other.kind)
        }
    }

    /// Column `index` as blob bytes; nil for NULL; throws for any other stored type.
    public func bytes(at index: Int) throws -> [UInt8]? {
        try data(at: index).map { [UInt8]($0) }
    }

    private func mismatch(at index: Int, expected: SQLiteValue.Kind, found: SQLiteValue.Kind) -> SQLiteError {
        .columnTypeMismatch(column: index, name: columnName(at: index), expected: expected, found: found, sql: sql)
    }
}
