// A thin, general Swift wrapper over the SQLite C API: connections, statements, transactions.
import CSQLite
import Foundation

/// One open SQLite database connection.
///
/// Use a connection from one thread at a time (wrap it in a lock to share it); open one
/// connection per thread or process for concurrency, as SQLite intends. Statements keep
/// their connection alive; the connection closes when the last reference goes away.
public final class SQLiteConnection {
    /// How to open the database file (`SQLITE_OPEN_*`).
    public struct OpenFlags: OptionSet, Sendable {
        public let rawValue: Int32

        /// Creates flags from raw `SQLITE_OPEN_*` bits.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// Open for reading only.
        public static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        /// Open for reading and writing.
        public static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        /// Create the file when it does not exist (with `.readWrite`).
        public static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
        /// Refuse to open the file through a symbolic link.
        public static let noFollow = OpenFlags(rawValue: SQLITE_OPEN_NOFOLLOW)
    }

    /// How a checkpoint treats the other connections to the store (`checkpoint`).
    public enum CheckpointMode: Sendable {
        /// Waits for them (up to the busy timeout), copies the whole log and empties it.
        case emptying
        /// Waits for nobody.
        case passive

        var code: Int32 { self == .emptying ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE }
    }

    /// The locking mode of `BEGIN`.
    public enum TransactionKind: String, Sendable {
        /// Locks are taken by the first read or write (`BEGIN DEFERRED`).
        case deferred = "DEFERRED"
        /// The write lock is taken at once, so the transaction's reads cannot go stale (`BEGIN IMMEDIATE`).
        case immediate = "IMMEDIATE"
        /// Like `.immediate`; in rollback-journal mode it also keeps readers out (`BEGIN EXCLUSIVE`).
        case exclusive = "EXCLUSIVE"

        var begin: String { "BEGIN \(rawValue)" }
    }

    /// Whether other connections may use the database while this one is open.
    public enum Access: Sendable {
        /// Any number of connections, in this process and others: each transaction takes POSIX locks (`fcntl`) on
        /// the file and, in WAL mode, on its shared-memory index (`-shm`) — two to six system calls a transaction.
        case shared
        /// This connection alone, from open to close (`PRAGMA locking_mode = EXCLUSIVE`, the file claimed at
        /// open): its lock is taken once, and in WAL mode the index lives in the process's memory, so a
        /// transaction costs no locking system call. For a store one process owns while it runs. Commits are as
        /// durable as in `.shared` (the WAL file holds them); the lock goes with the process, so its successor
        /// opens the file as usual. Another opener meanwhile gets `SQLiteError.heldByAnotherConnection`.
        case exclusive
    }

    /// The path the connection was opened with.
    public let path: String
    /// Whether other connections may use the database meanwhile.
    public let access: Access
    /// How long an operation keeps retrying while another connection holds a lock (none inside `withoutWaiting`).
    public private(set) var busyTimeout: TimeInterval
    /// Whether it was opened to make the file if missing (what a refusal to open means depends on it).
    private let makesFile: Bool
    let handle: OpaquePointer
    /// What `onCommitToLog` set, kept alive for SQLite's hook (which holds it unretained).
    private var logHook: LogHook?
    /// Statements compiled once and kept for the connection's life, by SQL text (`withStatement`). They do not keep
    /// the connection alive (it owns them), so there is no cycle and the connection still closes when released.
    private var kept: [String: Statement] = [:]
    /// The kept `BEGIN` of each kind and `COMMIT`, which every transaction runs (`transaction`). Three properties, not
    /// an array: an array of optional statements is a generic type the runtime would make at every process's first open.
    private var beginDeferred: Statement?, beginImmediate: Statement?, beginExclusive: Statement?
    private var commit: Statement?

    /// Made once per process, before its first connection (`SQLiteLibrary.setUp`; a launch template has made it already).
    private static let setUp: Void = SQLiteLibrary.setUp()

    /// Opens (or, with `.create`, creates) the database at `path`.
    ///
    /// The file is read once before this returns, so a file that is not a database fails
    /// here with `SQLiteError.notADatabase` and is left untouched.
    /// - Parameters:
    ///   - path: a file path, or `":memory:"`.
    ///   - flags: how to open it; `[.readWrite, .create]` by default.
    ///   - access: `.exclusive` keeps the file to this connection until it closes (needs `.readWrite`).
    ///   - busyTimeout: how long to wait for another connection's lock before `SQLiteError.busy`
    ///     (`SQLiteError.heldByAnotherConnection` when the file cannot even be opened).
    ///   - pageSize: the page size of a file made here (a power of two from 512 to 65,536 bytes); a file made earlier
    ///     keeps its own. SQLite's default (4,096) when nil.
    ///   - writeAheadLog: switched to WAL at open (`enableWAL`), before an `.exclusive` connection claims the file: a
    ///     new file's header is then written once, by the switch, instead of by the claim's commit and again by the
    ///     switch (each a rollback-journal commit and its flushes).
    public init(path: String, flags: OpenFlags = [.readWrite, .create], access: Access = .shared, busyTimeout: TimeInterval = 5,
                pageSize: Int? = nil, writeAheadLog: Bool = false) throws {
        Self.setUp
        var db: OpaquePointer?
        // FULLMUTEX: a misuse from two threads is serialized instead of corrupting memory.
        let rc = sqlite3_open_v2(path, &db, flags.rawValue | SQLITE_OPEN_FULLMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            let extended = db.map { sqlite3_extended_errcode($0) } ?? rc
            let systemError = db.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close_v2(db)
            throw SQLiteError.classified(code: rc & 0xFF, extendedCode: extended, systemError: systemError, makingFile: flags.contains(.create),
                                     message: message, sql: nil, path: path)
        }
        self.handle = db
        self.path = path
        self.access = access
        self.busyTimeout = busyTimeout
        self.makesFile = flags.contains(.create)
        sqlite3_busy_timeout(db, Int32(clamping: Int((busyTimeout * 1000).rounded())))
        do {
            // Before the first read: once the file is read (or, for an empty file, locked) the size is fixed.
            if let pageSize { try execute("PRAGMA page_size = \(pageSize)") }
            // Before the first read, so a WAL index is never made in shared memory.
            if access == .exclusive { try execute("PRAGMA locking_mode = EXCLUSIVE") }
            // SQLite opens lazily: reading the schema now turns a foreign file into an error
            // before anything could be written to it.
            try readSchema()
            if writeAheadLog { try enableWAL() }
            // A write lock, kept from now on: a second opener is refused now, not at its first write.
            if access == .exclusive { try execute("BEGIN EXCLUSIVE; COMMIT") }
        } catch let error as SQLiteError where error.isBusy {
            throw SQLiteError.heldByAnotherConnection(path: path, timeout: busyTimeout)
        }
    }

    deinit {
        if logHook != nil { sqlite3_wal_hook(handle, nil, nil) }
        // close_v2 defers the close until every statement is finalized.
        sqlite3_close_v2(handle)
    }

    /// Tells `body`, after each commit of this connection in WAL mode, how many frames (pages) the write-ahead log then
    /// holds (`sqlite3_wal_hook`). While it is set SQLite's own automatic checkpoint is off — it is a hook of the same
    /// kind — and the one told decides when to checkpoint (`LogCheckpoints`); nil gives the checkpoints back to SQLite.
    /// `body` runs on the committing thread, inside the commit's call: it may checkpoint this connection (`checkpoint`,
    /// which runs no statement), as SQLite's own hook does, and must run no statement on it.
    public func onCommitToLog(_ body: ((Int) -> Void)?) {
        guard let body else {
            sqlite3_wal_autocheckpoint(handle, 1000)  // SQLite's default
            logHook = nil
            return
        }
        let hook = LogHook(body)
        logHook = hook
        sqlite3_wal_hook(handle, { context, _, _, frames in
            if let context { Unmanaged<LogHook>.fromOpaque(context).takeUnretainedValue().body(Int(frames)) }
            return SQLITE_OK
        }, Unmanaged.passUnretained(hook).toOpaque())
    }

    /// True while a transaction is open on this connection.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs one or more `;`-separated statements without parameters, discarding any rows.
    public func execute(_ sql: String) throws {
        try sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let current = next, current.pointee != 0 {
                var tail: UnsafePointer<CChar>?
                if let statement = try prepareFirst(current, tail: &tail) {
                    while try statement.step() {}
                }
                next = tail
            }
        }
    }

    /// Compiles exactly one statement and binds `bindings` to its parameters `?1...?n`.
    public func prepare(_ sql: String, bindings: [SQLiteValue] = []) throws -> Statement {
        let statement = try prepare(sql, keptByConnection: false)
        try statement.bind(bindings)
        return statement
    }

    private func prepare(_ sql: String, keptByConnection: Bool) throws -> Statement {
        try sql.withCString { start in
            var tail: UnsafePointer<CChar>?
            guard let statement = try prepareFirst(start, tail: &tail, keptByConnection: keptByConnection) else {
                throw SQLiteError.failed(code: SQLITE_MISUSE, extendedCode: SQLITE_MISUSE,
                                         message: "the text holds no SQL statement", sql: sql, path: path)
            }
            let rest = tail.map { String(cString: $0) } ?? ""
            guard rest.allSatisfy({ $0.isWhitespace || $0 == ";" }) else {
                throw SQLiteError.failed(code: SQLITE_MISUSE, extendedCode: SQLITE_MISUSE,
                                         message: "prepare takes one statement; use execute(_:) for several",
                                         sql: sql, path: path)
            }
            return statement
        }
    }

    /// Runs `body` with the statement for `sql` (one statement), `bindings` bound to `?1...?n`: compiled on first use
    /// and kept, so SQL that runs per event or per commit is not parsed again each time (compiling is most of the cost
    /// of a small statement). The statement is reset when `body` returns, so no read stays open between uses; `body`
    /// must not keep it. A use of the same SQL inside `body` compiles a statement of its own.
    public func withStatement<T>(_ sql: String, bindings: [SQLiteValue] = [], _ body: (Statement) throws -> T) throws -> T {
        try withStatement(keptStatement(sql), bindings: bindings, body)
    }

    /// The statement `withStatement` keeps for `sql` (compiled now if it was not yet), for an owner that runs it so
    /// often that it keeps it too: `withStatement(_:Statement…)` then skips the look-up by the SQL text (hashing the
    /// text is a noticeable part of a small statement's run). It belongs to this connection and must not outlive it.
    public func keptStatement(_ sql: String) throws -> Statement {
        if let held = kept[sql] { return held }
        let statement = try prepare(sql, keptByConnection: true)
        kept[sql] = statement
        return statement
    }

    /// `withStatement` for a statement this connection keeps (`keptStatement`).
    public func withStatement<T>(_ kept: Statement, bindings: [SQLiteValue] = [], _ body: (Statement) throws -> T) throws -> T {
        precondition(kept.connection === self, "a statement of another connection")
        // Marked busy while `body` runs instead of being taken out and put back; a use inside `body` gets its own.
        let statement = kept.isInUse ? try prepare(kept.sql, keptByConnection: true) : kept
        statement.isInUse = true
        defer {
            statement.reset()
            statement.isInUse = false
        }
        try statement.bind(bindings)
        return try body(statement)
    }

    /// Switches the database to write-ahead logging, so readers never block the writer, with
    /// `synchronous = NORMAL`: a commit is in the WAL file when it returns, so it survives the process being
    /// killed, and the WAL is synced only at a checkpoint. Only an operating-system crash or power cut can lose
    /// the last commits (never the database's consistency) — the price of not waiting for the disk on every
    /// commit (docs/benchmarks.md, "Turns and commits").
    /// Throws `SQLiteError.journalModeRejected` where WAL is impossible (e.g. `:memory:`).
    public func enableWAL() throws {
        let statement = try prepare("PRAGMA journal_mode=WAL")
        let mode = try statement.step() ? try statement.string(at: 0) : nil
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError.journalModeRejected(requested: "wal", actual: mode ?? "none", path: path)
        }
        try execute("PRAGMA synchronous = NORMAL")
    }

    /// The rows the last statement that wrote inserted, updated or deleted.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `body` with no wait for another connection's lock: what meets one throws `SQLiteError.busy` at once.
    public func withoutWaiting<T>(_ body: () throws -> T) rethrows -> T {
        let kept = busyTimeout
        busyTimeout = 0
        sqlite3_busy_timeout(handle, 0)
        defer {
            busyTimeout = kept
            sqlite3_busy_timeout(handle, Int32(clamping: Int((kept * 1000).rounded())))
        }
        return try body()
    }

    /// The schema version the file records (`PRAGMA user_version`; 0 for a new file).
    public func userVersion() throws -> Int64 {
        try withStatement("PRAGMA user_version") { try $0.step() ? try $0.int64(at: 0) ?? 0 : 0 }
    }

    /// Sets up a database whose schema this program keeps at `version` in `PRAGMA user_version`, and returns the
    /// version the file recorded on opening. A file at `version` is used as it is: WAL mode belongs to the file, set
    /// when it was made, so only this connection's own setting (`synchronous = NORMAL`) is made, and no schema
    /// statement runs — a short-lived extension opens its stores at every launch. An older file (a new one is 0) is
    /// switched to WAL (`enableWAL`) and given `schema`, which must create what is missing (`IF NOT EXISTS`) and set
    /// `user_version` to `version`; under the write lock and checked again, since another process may be doing the
    /// same at once. A newer file is left untouched: the caller refuses it.
    @discardableResult
    public func setUpSchema(version: Int64, _ schema: String) throws -> Int64 {
        let found = try userVersion()
        if found == version { try execute("PRAGMA synchronous = NORMAL") }
        guard found < version else { return found }
        try enableWAL()
        try transaction(.immediate) {
            if try userVersion() < version { try execute(schema) }
        }
        return found
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    ///
    /// `BEGIN` and `COMMIT` are retried while the database is busy, up to `busyTimeout`.
    /// Transactions do not nest: calling this inside one throws `SQLiteError.nestedTransaction`.
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        guard !isInTransaction else { throw SQLiteError.nestedTransaction(path: path) }
        let begin: Statement
        switch kind {
        case .deferred:
            begin = try beginDeferred ?? keptStatement(kind.begin)
            beginDeferred = begin
        case .immediate:
            begin = try beginImmediate ?? keptStatement(kind.begin)
            beginImmediate = begin
        case .exclusive:
            begin = try beginExclusive ?? keptStatement(kind.begin)
            beginExclusive = begin
        }
        try withStatement(begin) { try $0.run() }
        do {
            let result = try body()
            let commit = try self.commit ?? keptStatement("COMMIT")
            self.commit = commit
            _ = try withStatement(commit) { try $0.step(retryingBusy: true) }
            return result
        } catch {
            // Some errors (e.g. SQLITE_FULL) already rolled the transaction back.
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Copies every commit of the write-ahead log into the database file and empties the log
    /// (`sqlite3_wal_checkpoint_v2`, TRUNCATE), syncing as the connection's `synchronous` asks, and returns whether all of
    /// it was copied (false when another connection's read or write kept some of it in the log, which stays as it is).
    ///
    /// A process that opens a store in WAL mode while no other process has it open reads the whole log back, checking
    /// every frame, to rebuild the log's index: a store opened afresh by many short processes in turn is emptied by
    /// each as it ends, so the next one finds no log to read.
    /// `.passive` instead copies what no other connection keeps in the log and waits for nobody: the log stays as long,
    /// and the next commit writes it again from its start once all of it was copied.
    ///
    /// A C call, not a statement: it may run inside `onCommitToLog`'s body. Another connection's checkpoint running at
    /// the same time (or, for `.emptying`, a reader that outlasts the busy timeout) leaves it undone: false, not an error.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .emptying) throws -> Bool {
        var frames: Int32 = 0, copied: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, mode.code, &frames, &copied)
        if rc & 0xFF == SQLITE_BUSY { return false }
        guard rc == SQLITE_OK else { throw error(rc, sql: nil) }
        return copied == frames
    }

    /// Runs `PRAGMA quick_check` and returns the problems it reports; empty means the file is sound.
    ///
    /// Damage bad enough to stop the check (`SQLITE_CORRUPT`, `SQLITE_NOTADB`) is reported as a
    /// problem too; other failures (e.g. busy, I/O) throw. A file that is not a whole number of pages was cut
    /// short: SQLite reads the missing tail of its last page as zeros, which the check alone may not notice.
    public func quickCheck() throws -> [String] {
        var lines: [String] = []
        do {
            let statement = try prepare("PRAGMA quick_check")
            while try statement.step() {
                lines.append(try statement.string(at: 0) ?? "")
            }
            if let cut = try partialPage() { lines.append(cut) }
        } catch let error as SQLiteError where error.isCorrupt || error.code == SQLITE_NOTADB {
            lines.append("\(error)")
        }
        return lines.filter { $0 != "ok" }
    }

    /// Says so when the database file ends partway through a page (SQLite only ever writes whole pages to it).
    /// The page size is SQLite's, not read from the file by a descriptor of this process's own: closing any descriptor
    /// of a file drops every POSIX lock the process holds on it, SQLite's among them.
    private func partialPage() throws -> String? {
        guard let size = FileSize.of(path) else { return nil }
        let statement = try prepare("PRAGMA page_size")
        guard try statement.step(), let pageSize = try statement.int64(at: 0), pageSize > 0, size % pageSize != 0 else { return nil }
        return "the file is \(size) bytes, not a whole number of \(pageSize)-byte pages: it was cut short"
    }

    /// Whether the schema this connection last read holds table `name` (not a view), looked up in its memory with no
    /// statement compiled. What another connection made or dropped since is not seen: for a table its stores never
    /// drop, "held" is certain, and "not held" is for the caller to confirm with a statement, which rereads a schema
    /// that changed.
    public func schemaHoldsTable(_ name: String) throws -> Bool {
        let rc = lookUpTable(name)
        if rc == SQLITE_OK { return true }
        // SQLITE_ERROR: no such table (or a schema that cannot be read, which the confirming statement meets again);
        // anything else failed to read the schema (a lock, a damaged file).
        guard rc == SQLITE_ERROR else { throw error(rc, sql: nil) }
        return false
    }

    /// Reads the schema now, as the first statement would, without compiling one: a file that is not a database, or
    /// a lock held by another connection, is met here.
    private func readSchema() throws {
        let rc = lookUpTable("sqlite_master")
        guard rc == SQLITE_OK else { throw error(rc, sql: nil) }
    }

    /// Looks table `name` up in the connection's schema, reading the schema first if it is not read
    /// (`sqlite3_table_column_metadata`, a C call: compiling even the smallest query costs several times more; it is in
    /// an SQLite built with `SQLITE_ENABLE_COLUMN_METADATA`, as Debian's is, and a build without it does not link).
    private func lookUpTable(_ name: String) -> Int32 {
        retryingBusy { sqlite3_table_column_metadata(handle, "main", name, nil, nil, nil, nil, nil, nil) }
    }

    /// Compiles the first statement at `sql`; nil when only whitespace or comments remain.
    private func prepareFirst(_ sql: UnsafePointer<CChar>, tail: inout UnsafePointer<CChar>?, keptByConnection: Bool = false) throws -> Statement? {
        var statement: OpaquePointer?
        var end: UnsafePointer<CChar>?
        // Compiling reads the schema, which can meet a lock like any read.
        let rc = retryingBusy { sqlite3_prepare_v2(handle, sql, -1, &statement, &end) }
        tail = end
        guard rc == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw error(rc, sql: String(cString: sql))
        }
        return statement.map { Statement(handle: $0, connection: self, keptByConnection: keptByConnection) }
    }

    /// Repeats `attempt` while it returns SQLITE_BUSY, until `busyTimeout` has passed.
    ///
    /// SQLite's own busy handler already waits inside most calls; this loop covers the
    /// cases where SQLite returns BUSY without waiting (e.g. WAL recovery by another process).
    func retryingBusy(_ attempt: () -> Int32) -> Int32 {
        let deadline = DispatchTime.now() + busyTimeout
        var pause: UInt32 = 1_000
        var rc = attempt()
        while rc & 0xFF == SQLITE_BUSY, DispatchTime.now() < deadline {
            usleep(pause)
            pause = min(pause * 2, 50_000)
            rc = attempt()
        }
        return rc
    }

    /// The error for result code `rc`, with SQLite's message for it.
    func error(_ rc: Int32, sql: String?) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        let message = String(cString: sqlite3_errmsg(handle))
        switch rc & 0xFF {
        case SQLITE_NOTADB:
            return .notADatabase(path: path)
        case SQLITE_BUSY:
            return .busy(path: path, timeout: busyTimeout, extendedCode: extended, message: message, sql: sql)
        default:
            return .classified(code: rc & 0xFF, extendedCode: extended, systemError: sqlite3_system_errno(handle), makingFile: makesFile,
                           message: message, sql: sql, path: path)
        }
    }
}

/// The body `SQLiteConnection.onCommitToLog` runs, in a box SQLite's hook can point at.
private final class LogHook {
    let body: (Int) -> Void
    init(_ body: @escaping (Int) -> Void) { self.body = body }
}
