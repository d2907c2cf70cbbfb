// Errors of the SQLite wrapper, carrying SQLite's result codes and message.
import CSQLite
import Foundation

/// A failure reported by SQLite or by the wrapper's checks.
public enum SQLiteError: Error, CustomStringConvertible, LocalizedError {
    /// The file exists but is not a SQLite database (`SQLITE_NOTADB`); it was not modified.
    case notADatabase(path: String)
    /// Another connection held a conflicting lock for longer than the busy timeout (`SQLITE_BUSY`).
    case busy(path: String, timeout: TimeInterval, extendedCode: Int32, message: String, sql: String?)
    /// The file could not be opened: another connection keeps it to itself (`SQLiteConnection.Access.exclusive`,
    /// e.g. the process that owns the store is running) or held a lock past the busy timeout.
    case heldByAnotherConnection(path: String, timeout: TimeInterval)
    /// Any other failure: the primary and extended result codes, `sqlite3_errmsg` and the SQL that failed.
    case failed(code: Int32, extendedCode: Int32, message: String, sql: String?, path: String)
    /// A typed column read met a value of another storage class.
    case columnTypeMismatch(column: Int, name: String, expected: SQLiteValue.Kind, found: SQLiteValue.Kind, sql: String)
    /// `transaction` was called while a transaction was already open on the connection.
    case nestedTransaction(path: String)
    /// `PRAGMA journal_mode` left the database in another mode than the one requested.
    case journalModeRejected(requested: String, actual: String, path: String)

    /// `failed`, with what the system said of the failure. Where SQLite says only that it could not open a file
    /// (`SQLITE_CANTOPEN`, as when a store is made on a read-only or full file system, at its open or its first
    /// statement), that is the storage refusing, as a write there would be, and it is classified as that write.
    static func classified(code: Int32, extendedCode: Int32, systemError: Int32, makingFile: Bool, message: String, sql: String?, path: String) -> SQLiteError {
        guard code == SQLITE_CANTOPEN, extendedCode == SQLITE_CANTOPEN,
              let (storageCode, what) = storageRefusals[systemError] ?? (makingFile && couldNotBeMade(path, systemError) ? storageRefusals[EROFS] : nil) else {
            return .failed(code: code, extendedCode: extendedCode, message: message, sql: sql, path: path)
        }
        return .failed(code: storageCode, extendedCode: storageCode, message: "\(message) (\(what))", sql: sql, path: path)
    }

    /// Whether a file that was to be made is missing because its folder, which exists, is on a read-only file system.
    /// SQLite retries a refused open read-only, so such a file leaves ENOENT, not EROFS.
    private static func couldNotBeMade(_ path: String, _ systemError: Int32) -> Bool {
        guard systemError == ENOENT || systemError == 0, !FileManager.default.fileExists(atPath: path) else { return false }
        var status = statvfs()
        return statvfs((path as NSString).deletingLastPathComponent, &status) == 0 && status.f_flag & UInt(ST_RDONLY) != 0
    }

    /// A file operation of the wrapper's own on the store at `path` (`StoreCreation`) failed with `errno`: the
    /// storage refusing is classified as SQLite's own refusals are, anything else is an I/O error.
    static func making(_ path: String, errno: Int32, what: String) -> SQLiteError {
        let message = "\(what): \(String(cString: strerror(errno)))"
        guard let (code, refusal) = storageRefusals[errno] else {
            return .failed(code: SQLITE_IOERR, extendedCode: SQLITE_IOERR, message: message, sql: nil, path: path)
        }
        return .failed(code: code, extendedCode: code, message: "\(message) (\(refusal))", sql: nil, path: path)
    }

    /// The system's errors that mean the storage refused, and the result code SQLite gives a write that meets them.
    private static let storageRefusals: [Int32: (Int32, String)] = [
        EROFS: (SQLITE_READONLY, "read-only file system"), ENOSPC: (SQLITE_FULL, "no space left on the device"),
        EDQUOT: (SQLITE_FULL, "disk quota exceeded"),
    ]

    /// The primary SQLite result code (`SQLITE_MISUSE` for the wrapper's own checks).
    public var code: Int32 {
        switch self {
        case .notADatabase: return SQLITE_NOTADB
        case .busy, .heldByAnotherConnection: return SQLITE_BUSY
        case .failed(let code, _, _, _, _): return code
        case .columnTypeMismatch, .nestedTransaction: return SQLITE_MISUSE
        case .journalModeRejected: return SQLITE_ERROR
        }
    }

    /// The extended SQLite result code (equal to `code` where SQLite gave none).
    public var extendedCode: Int32 {
        switch self {
        case .busy(_, _, let extended, _, _), .failed(_, let extended, _, _, _): return extended
        default: return code
        }
    }

    /// True when the database stayed locked by another connection past the busy timeout.
    public var isBusy: Bool { code == SQLITE_BUSY }

    /// True when SQLite found the database file damaged (`SQLITE_CORRUPT`).
    public var isCorrupt: Bool { code == SQLITE_CORRUPT }

    /// True when the storage, not the database, refused: a full disk, a write or shared-memory file that could not be
    /// made or grown (as on a full disk), a read-only file system, another connection's lock held past the timeout.
    /// The same operation may succeed, unchanged, once the machine has room or the other connection is done. A
    /// damaged file, a database moved away, a lock conflict within one connection are not: they come back every time.
    public var isStorageUnavailable: Bool {
        switch code {
        case SQLITE_FULL, SQLITE_BUSY: return true
        case SQLITE_IOERR: return Self.ioErrorsOfStorage.contains(extendedCode >> 8)
        case SQLITE_READONLY: return Self.readOnlyOfStorage.contains(extendedCode >> 8)
        default: return false
        }
    }

    /// `SQLITE_IOERR_`'s subcodes (sqlite3.h; its macros are not imported) that a full or failing disk gives: WRITE,
    /// FSYNC, DIR_FSYNC, TRUNCATE, SHMOPEN, SHMSIZE, SHMMAP.
    private static let ioErrorsOfStorage: Set<Int32> = [3, 4, 5, 6, 18, 19, 21]
    /// `SQLITE_READONLY` itself and the subcodes a read-only file system gives: RECOVERY, CANTLOCK, ROLLBACK, CANTINIT
    /// (not DBMOVED or DIRECTORY, which a remount does not mend).
    private static let readOnlyOfStorage: Set<Int32> = [0, 1, 2, 3, 5]

    public var description: String {
        switch self {
        case .notADatabase(let path):
            return "'\(path)' is not a SQLite database (its header is not SQLite's); it was left untouched. "
                + "Check the path, or move the file aside if it should hold a database."
        case .busy(let path, let timeout, let extended, let message, let sql):
            return "database '\(path)' stayed locked by another connection for more than \(timeout) s "
                + "(SQLite \(extended): \(message))\(Self.sqlSuffix(sql)). "
                + "Retry later, or find the process that holds a long transaction."
        case .heldByAnotherConnection(let path, let timeout):
            return "database '\(path)' is held by another connection, which keeps it to itself while it runs "
                + "(waited \(timeout) s): one process owns this store at a time. Stop that process, or use another folder."
        case .failed(let code, let extended, let message, let sql, let path):
            return "SQLite error \(code) (extended \(extended)) on '\(path)': \(message)\(Self.sqlSuffix(sql))"
        case .columnTypeMismatch(let column, let name, let expected, let found, let sql):
            return "column \(column) ('\(name)') holds \(found.rawValue), not \(expected.rawValue), in: \(sql)"
        case .nestedTransaction(let path):
            return "a transaction is already open on '\(path)'; transactions do not nest, "
                + "so do this work inside the enclosing transaction."
        case .journalModeRejected(let requested, let actual, let path):
            return "'\(path)' stayed in journal mode '\(actual)' instead of '\(requested)' "
                + "(in-memory and some temporary databases cannot use WAL; use a file)."
        }
    }

    public var errorDescription: String? { description }

    private static func sqlSuffix(_ sql: String?) -> String {
        sql.map { " while running: \($0)" } ?? ""
    }
}
