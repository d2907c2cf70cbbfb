// The SQLite file of one app group: opening and checking it, its schema, and its row operations.
import Foundation
import SQLite

/// One app group's store file (`<root>/<group>.sqlite`, WAL mode).
///
/// Not thread-safe: `SharedDefaults` serializes access; other processes use their own connection.
final class GroupDatabase {
    /// The schema version kept in `PRAGMA user_version`.
    static let formatVersion: Int64 = 1

    /// Removed keys keep a row with NULL json (a tombstone), so a key's version never restarts and
    /// a compare-and-set cannot be fooled by a remove and re-create of the same key.
    static let schema = """
        CREATE TABLE IF NOT EXISTS entries (
            key        TEXT PRIMARY KEY NOT NULL,
            json       TEXT,
            type_tag   TEXT,
            version    INTEGER NOT NULL,
            writer     TEXT NOT NULL,
            updated_at REAL NOT NULL,
            CHECK ((json IS NULL) = (type_tag IS NULL))
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS slices (
            writer  TEXT NOT NULL,
            pattern TEXT NOT NULL,
            PRIMARY KEY (writer, pattern)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS changes (
            seq        INTEGER PRIMARY KEY AUTOINCREMENT,
            key        TEXT NOT NULL,
            writer     TEXT NOT NULL,
            version    INTEGER NOT NULL,
            changed_at REAL NOT NULL,
            removed    INTEGER NOT NULL CHECK (removed IN (0, 1))
        );
        PRAGMA user_version = 1;
        """

    private static let entryColumns = "key, json, type_tag, version, writer, updated_at"

    /// The app group's name.
    let group: String
    /// The store file's path.
    let path: String
    private let connection: SQLiteConnection
    /// Each commit's note, the store's checkpoints (on the flusher), and the flush to the disk of every
    /// `CommitFollowUp.syncInterval`-th change.
    let followUp: CommitFollowUp
    /// What the store lost to the machine's restart, found at this open (`CommitNote.restartLoss`); nil when nothing.
    private(set) var restartLoss: String?

    /// Opens the store file, refusing a damaged one, and sets up WAL mode and the schema when the file does not
    /// have them yet (`SQLiteConnection.setUpSchema`).
    ///
    /// With `create` false the file must exist; it is never created, truncated or rewritten
    /// when it is not a sound database. `quick_check` runs at every open, not once per file: it is what refuses a
    /// store damaged since it was made (by another process with access to the folder, a full disk) before anything
    /// is written into it.
    init(group: String, path: String, busyTimeout: TimeInterval, create: Bool) throws {
        self.group = group
        self.path = path
        let flags: SQLiteConnection.OpenFlags = create ? [.readWrite, .create] : [.readWrite]
        // A store the broker created and that is now empty was truncated: opening it would start it over empty.
        if !create, FileSize.of(path) == 0 {
            throw AppGroupStoreError.corruptStore(path: path, detail: "the file is empty (0 bytes)")
        }
        connection = try Self.mapped(group: group, path: path) {
            // A new group's store is made whole, flushed once, before it is opened (`StoreCreation`).
            if create { try StoreCreation.makeIfMissing(at: path, schema: Self.schema) }
            return try SQLiteConnection(path: path, flags: flags, busyTimeout: busyTimeout)
        }
        followUp = CommitFollowUp(path: path, checkpointing: connection)
        try mapped {
            let problems = try connection.quickCheck()
            guard problems.isEmpty else {
                throw AppGroupStoreError.corruptStore(path: path,
                                                      detail: "quick_check: " + problems.prefix(3).joined(separator: "; "))
            }
            let found = try connection.setUpSchema(version: Self.formatVersion, Self.schema)
            guard found <= Self.formatVersion else {
                throw AppGroupStoreError.unsupportedFormat(path: path, found: found, supported: Self.formatVersion)
            }
            // Changes that were committed and are not in the file: its write-ahead log (`-wal`), which held them
            // until a checkpoint, was deleted or damaged. SQLite opens such a store without a word, older. (Many
            // processes write a group's store: the change log's own numbers are its tally, see `CommitTally`.)
            do {
                restartLoss = CommitNote.restartLoss(try CommitNote.verify(besides: path) { try lastChange() }, of: path)
            } catch let lost as LostCommits {
                throw AppGroupStoreError.corruptStore(path: path, detail: "it holds changes up to #\(lost.stored), but changes up to #\(lost.noted) were committed: its write-ahead log (\(URL(fileURLWithPath: path).lastPathComponent)-wal) was deleted or damaged")
            } catch let busy as CommitNoteBusy {
                throw AppGroupStoreError.busy(group: group, timeout: busy.timeout)
            }
        }
    }

    /// The number of the last change ever logged (kept by SQLite for the log's AUTOINCREMENT, pruned rows included).
    func lastChange() throws -> Int64 {
        try connection.withStatement("SELECT seq FROM sqlite_sequence WHERE name = 'changes'") { try $0.step() ? try $0.requiredInt64(at: 0) : 0 }
    }

    // MARK: Access

    /// Runs `body` (reads) and maps storage errors to `AppGroupStoreError`.
    func read<T>(_ body: () throws -> T) throws -> T {
        try mapped(body)
    }

    /// Runs `body` (reads) in one read transaction: its reads see one committed state and take the log's read lock
    /// once, where each read alone takes and drops it. Inside a write transaction the reads are already in one.
    func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try mapped { connection.isInTransaction ? try body() : try connection.transaction(.deferred, body) }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: the write lock is held from the start,
    /// so what it reads cannot change before it commits. Rolled back when `body` throws.
    func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        loggedInTransaction = nil
        let result = try mapped { try connection.transaction(.immediate, body) }
        if let logged = loggedInTransaction { followUp.committed(through: logged.last, after: logged.first - 1) }
        return result
    }

    /// The first and last changes the current write transaction logged.
    private var loggedInTransaction: (first: Int64, last: Int64)?

    // MARK: Rows

    /// The live entry of `key`, nil when it does not exist or was removed.
    func entry(forKey key: String) throws -> StoredEntry? {
        try connection.withStatement("SELECT \(Self.entryColumns) FROM entries WHERE key = ?1 AND json IS NOT NULL", bindings: [.text(key)]) {
            try $0.step() ? try Self.entry(from: $0) : nil
        }
    }

    /// Every live entry, by key.
    func entries() throws -> [StoredEntry] {
        try connection.withStatement("SELECT \(Self.entryColumns) FROM entries WHERE json IS NOT NULL ORDER BY key") { statement in
            var found: [StoredEntry] = []
            while try statement.step() {
                found.append(try Self.entry(from: statement))
            }
            return found
        }
    }

    /// Stores `json` for `key` (next version) and logs the change. Call inside `writeTransaction`.
    func store(key: String, json: String, typeTag: String, writer: String, at time: Date) throws -> StoreChange {
        let version = try connection.withStatement("""
            INSERT INTO entries (key, json, type_tag, version, writer, updated_at) VALUES (?1, ?2, ?3, 1, ?4, ?5)
            ON CONFLICT (key) DO UPDATE SET json = excluded.json, type_tag = excluded.type_tag,
                version = entries.version + 1, writer = excluded.writer, updated_at = excluded.updated_at
            RETURNING version
            """, bindings: [.text(key), .text(json), .text(typeTag), .text(writer), .real(time.timeIntervalSince1970)]) { statement in
            _ = try statement.step()
            let version = try statement.requiredInt64(at: 0)
            try statement.run()
            return version
        }
        return try logChange(key: key, writer: writer, version: version, at: time, removed: false)
    }

    /// Removes `key` (leaving a tombstone) and logs the change; nil when there was nothing to remove.
    /// Call inside `writeTransaction`.
    func remove(key: String, writer: String, at time: Date) throws -> StoreChange? {
        let removed: Int64? = try connection.withStatement("""
            UPDATE entries SET json = NULL, type_tag = NULL, version = version + 1, writer = ?2, updated_at = ?3
            WHERE key = ?1 AND json IS NOT NULL
            RETURNING version
            """, bindings: [.text(key), .text(writer), .real(time.timeIntervalSince1970)]) { statement in
            guard try statement.step() else { return nil }
            let version = try statement.requiredInt64(at: 0)
            try statement.run()
            return version
        }
        guard let version = removed else { return nil }
        return try logChange(key: key, writer: writer, version: version, at: time, removed: true)
    }

    private func logChange(key: String, writer: String, version: Int64, at time: Date, removed: Bool) throws -> StoreChange {
        let sequence = try connection.withStatement("""
            INSERT INTO changes (key, writer, version, changed_at, removed) VALUES (?1, ?2, ?3, ?4, ?5)
            RETURNING seq
            """, bindings: [.text(key), .text(writer), .integer(version), .real(time.timeIntervalSince1970),
                            .integer(removed ? 1 : 0)]) { statement in
            _ = try statement.step()
            let sequence = try statement.requiredInt64(at: 0)
            try statement.run()
            return sequence
        }
        loggedInTransaction = (loggedInTransaction?.first ?? sequence, sequence)
        // The log keeps its last `changeLogLength` changes: unbounded, it would grow with every write a product ever
        // made, and every process's start pays `quick_check` over the whole file, so starts would slow as it grew.
        if sequence % Self.changeLogPruneInterval == 0 {
            try connection.withStatement("DELETE FROM changes WHERE seq <= ?", bindings: [.integer(sequence - Self.changeLogLength)]) { try $0.run() }
        }
        return StoreChange(group: group, sequence: sequence, key: key, writer: writer, version: version,
                           timestamp: time, removed: removed)
    }

    /// How many of the latest changes the log keeps (a follower polling it is never this far behind), and how often
    /// (in changes) older ones are removed.
    static let changeLogLength: Int64 = 10_000
    static let changeLogPruneInterval: Int64 = 1_000

    /// Up to `limit` changes numbered after `sequence`, oldest first.
    func changes(after sequence: Int64, limit: Int) throws -> [StoreChange] {
        try connection.withStatement("""
            SELECT seq, key, writer, version, changed_at, removed FROM changes WHERE seq > ?1 ORDER BY seq LIMIT ?2
            """, bindings: [.integer(sequence), .integer(Int64(limit))]) { statement in
            var found: [StoreChange] = []
            while try statement.step() {
                found.append(StoreChange(group: group, sequence: try statement.requiredInt64(at: 0),
                                         key: try statement.requiredString(at: 1), writer: try statement.requiredString(at: 2),
                                         version: try statement.requiredInt64(at: 3),
                                         timestamp: try statement.requiredDate(at: 4),
                                         removed: try statement.requiredInt64(at: 5) == 1))
            }
            return found
        }
    }

    /// The plugins that wrote each key (the administrator left out), in the order they first did, as far back as the
    /// change log reaches.
    func writersByKey() throws -> [String: [String]] {
        try connection.withStatement("""
            SELECT key, writer FROM changes WHERE writer != ?1 GROUP BY key, writer ORDER BY key, min(seq)
            """, bindings: [.text(SharedDefaults.administrator)]) { statement in
            var found: [String: [String]] = [:]
            while try statement.step() {
                found[try statement.requiredString(at: 0), default: []].append(try statement.requiredString(at: 1))
            }
            return found
        }
    }

    /// The number of the newest change, 0 when there is none.
    func lastChangeNumber() throws -> Int64 {
        try connection.withStatement("SELECT coalesce(max(seq), 0) FROM changes") { statement in
            _ = try statement.step()
            return try statement.requiredInt64(at: 0)
        }
    }

    /// The group's slice declarations.
    func slices() throws -> SliceTable {
        try connection.withStatement("SELECT writer, pattern FROM slices") { statement in
            var claims: [SliceClaim] = []
            while try statement.step() {
                claims.append(SliceClaim(writer: try statement.requiredString(at: 0),
                                         pattern: try statement.requiredString(at: 1)))
            }
            return SliceTable(claims: claims)
        }
    }

    /// Replaces every slice declaration. Call inside `writeTransaction`.
    func replaceSlices(_ table: SliceTable) throws {
        try connection.execute("DELETE FROM slices")
        let insert = try connection.prepare("INSERT INTO slices (writer, pattern) VALUES (?1, ?2)")
        for claim in table.claims {
            insert.reset()
            try insert.bind([.text(claim.writer), .text(claim.pattern)])
            try insert.run()
        }
    }

    private static func entry(from statement: Statement) throws -> StoredEntry {
        StoredEntry(key: try statement.requiredString(at: 0), rawJSON: try statement.requiredString(at: 1),
                    typeTag: try statement.requiredString(at: 2), version: try statement.requiredInt64(at: 3),
                    writer: try statement.requiredString(at: 4), updatedAt: try statement.requiredDate(at: 5))
    }

    // MARK: Errors

    private func mapped<T>(_ body: () throws -> T) throws -> T {
        try Self.mapped(group: group, path: path, body)
    }

    /// Turns SQLite's errors into the store's: damage into `corruptStore`, lock timeouts into `busy`.
    private static func mapped<T>(group: String, path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            switch error {
            case .notADatabase:
                throw AppGroupStoreError.corruptStore(path: path, detail: "the file is not a SQLite database")
            case .busy(_, let timeout, _, _, _), .heldByAnotherConnection(_, let timeout):
                throw AppGroupStoreError.busy(group: group, timeout: timeout)
            case .failed(_, _, let message, _, _) where error.isCorrupt:
                throw AppGroupStoreError.corruptStore(path: path, detail: message)
            default:
                throw AppGroupStoreError.storage(group: group, error)
            }
        }
    }
}

/// Reads of NOT NULL columns: a NULL there means the file was damaged behind SQLite's back.
private extension Statement {
    func requiredInt64(at index: Int) throws -> Int64 {
        guard let value = try int64(at: index) else { throw nullColumn(at: index, expected: .integer) }
        return value
    }

    func requiredString(at index: Int) throws -> String {
        guard let value = try string(at: index) else { throw nullColumn(at: index, expected: .text) }
        return value
    }

    /// A time column: Unix seconds.
    func requiredDate(at index: Int) throws -> Date {
        guard let value = try double(at: index) else { throw nullColumn(at: index, expected: .real) }
        return Date(timeIntervalSince1970: value)
    }

    private func nullColumn(at index: Int, expected: SQLiteValue.Kind) -> SQLiteError {
        .columnTypeMismatch(column: index, name: columnName(at: index), expected: expected, found: .null, sql: sql)
    }
}
