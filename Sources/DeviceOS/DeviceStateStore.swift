import DeviceAPI
import Foundation
import SQLite

/// Why the device's persistent state cannot be used. Never answered by starting a fresh device silently.
public enum DeviceStateError: Error, CustomStringConvertible {
    /// The file is there but empty (truncated to 0 bytes): it is not a device's state.
    case empty(path: String)
    /// The file is not a sound SQLite database (truncated, overwritten, damaged).
    case damaged(path: String, detail: String)
    /// A stored value does not decode as what the device keeps under its key.
    case undecodable(path: String, key: String, detail: String)

    static let remedy = "restore it (with its -wal file) from a backup, or start a fresh device deliberately with `shieldbus run --reset-state`"

    public var description: String {
        switch self {
        case .empty(let path):
            return "the device state \(path) is empty (0 bytes), so it holds no device; nothing was started. To go on, \(Self.remedy)"
        case .damaged(let path, let detail):
            return "the device state \(path) is damaged (\(detail)); nothing was started. To go on, \(Self.remedy)"
        case .undecodable(let path, let key, let detail):
            return "the device state \(path) holds a value for '\(key)' that does not decode (\(detail)); nothing was started. To go on, \(Self.remedy)"
        }
    }
}

/// The device's own persistent state — tokens, authorization, ManagedSettings stores, monitored activities, the
/// app's timers, the usage that DeviceActivity counts — in one SQLite file, so it survives a broker (device) restart.
final class DeviceStateStore {
    private let connection: SQLiteConnection
    /// Counts every write, so a file that lost committed writes with its write-ahead log is refused at start.
    private let tally: CommitTally
    /// What it lost to the machine's restart, said at open (`CommitTally.restartLoss`).
    var restartLoss: String? { tally.restartLoss }
    /// Told once when its commits can no longer be noted or flushed (`CommitTally.onNoteFailure`).
    var onNoteFailure: ((String) -> Void)? {
        get { tally.onNoteFailure }
        set { tally.onNoteFailure = newValue }
    }
    let path: String
    /// Values whose last save failed, by key: written again first at the next save.
    private var unsaved: [String: String] = [:]
    /// List changes not yet written (a write failed), in order: written first with the next one.
    private var unsavedListChanges: [ListChange] = []

    private enum ListChange {
        case append(list: String, id: String, json: String)
        case remove(list: String, id: String)
    }
    /// Spans of use whose append failed (end, JSON), in order: appended first at the next one.
    private var unsavedSpans: [(end: Int64, json: String)] = []
    /// Values staged to go in with the next write (`stage`), by key.
    private var staged: [String: String] = [:]
    /// The statements of the writes made as the device runs, kept by the store (`Statements`).
    private let statements: Statements

    /// The page size of a store made here (one made earlier keeps its own). Each write transaction puts its pages whole
    /// into the write-ahead log — the changed rows' pages, the tally's — each checksummed and copied: most writes
    /// change one small row, so smaller pages than SQLite's 4 KiB cost a write less.
    static let pageSize = 2_048

    /// The store's tables, each made if missing.
    static let schema = """
        CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, json TEXT NOT NULL) WITHOUT ROWID;
        -- Spans of use, one row each: appended as they end, so recording one costs one insert, not the whole history.
        CREATE TABLE IF NOT EXISTS usage_span (id INTEGER PRIMARY KEY, end_ms INTEGER NOT NULL, json TEXT NOT NULL);
        -- Forgetting the spans past the horizon, at every append, finds them by their end instead of reading every span.
        CREATE INDEX IF NOT EXISTS usage_span_end ON usage_span (end_ms);
        -- Items of lists that only grow at the end (delivered notifications), one row each, by id.
        CREATE TABLE IF NOT EXISTS list_item (list TEXT NOT NULL, id TEXT NOT NULL, position INTEGER NOT NULL, json TEXT NOT NULL,
                                              PRIMARY KEY (list, id)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS list_item_order ON list_item (list, position);
        """

    init(path: String) throws {
        self.path = path
        if FileSize.of(path) == 0 {
            throw DeviceStateError.empty(path: path)
        }
        do {
            // A fresh device's store is made whole, flushed once, before it is opened (`StoreCreation`).
            try StoreCreation.makeIfMissing(at: path, pageSize: Self.pageSize, schema: Self.schema)
            connection = try SQLiteConnection(path: path, flags: [.readWrite, .create], pageSize: Self.pageSize)
            let problems = try connection.quickCheck()
            guard problems.isEmpty else { throw DeviceStateError.damaged(path: path, detail: problems.prefix(3).joined(separator: "; ")) }
            try connection.enableWAL()
            tally = try CommitTally(connection: connection, path: path)
            // A store made before a table was added gets it here.
            try connection.execute(Self.schema)
            statements = try Statements(connection)
        } catch let error as SQLiteError {
            throw DeviceStateError.damaged(path: path, detail: "\(error)")
        } catch let lost as LostCommits {
            throw DeviceStateError.damaged(path: path, detail: lost.description)
        }
    }

    /// Starts the store's empty write-ahead log (`SQLiteConnection.startEmptyLog`) while the plugins start, so the
    /// device's first commit, once the bus is ready, waits for no flush; a failure leaves the flushes to that commit.
    func startEmptyLog() { try? connection.startEmptyLog() }

    /// Copies the log into the file, as closing the store would (its two flushes), while the plugins end at the run's
    /// end: the close at exit then has nothing left to copy. Passive: it waits for nobody — not for the store's own
    /// flusher, whose connection may be checkpointing then; left undone, the close does it.
    func copyLogBeforeClose() { _ = try? connection.checkpoint(.passive) }

    /// A stored value, or nil. A value that no longer decodes is an error, never silently dropped.
    func load<T: Decodable>(_ type: T.Type, key: String) throws -> T? {
        guard let json = try storedJSON(key: key) else { return nil }
        return try decode(type, json: json, key: key)
    }

    /// `json`, the bytes stored under `key`, decoded as `load` decodes them, with its error.
    func decode<T: Decodable>(_ type: T.Type, json: [UInt8], key: String) throws -> T {
        do {
            return try DeviceAPICoding.decode(type, from: json)
        } catch {
            throw DeviceStateError.undecodable(path: path, key: key, detail: DeviceAPICoding.describe(error))
        }
    }

    /// A stored value's bytes as saved, or nil: for a reader that reads them without `JSONDecoder`, and gives what it
    /// does not read to `decode`.
    func storedJSON(key: String) throws -> [UInt8]? {
        let statement = try connection.prepare("SELECT json FROM state WHERE key = ?", bindings: [.text(key)])
        guard try statement.step(), let json = try statement.string(at: 0) else { return nil }
        return Array(json.utf8)
    }

    /// Saves `value`, and before it every value whose save failed (disk full, read-only): nothing the device
    /// could not write is forgotten, it is written with the next save once there is room.
    func save<T: Encodable>(_ value: T, key: String) throws {
        try save(json: DeviceAPICoding.encode(value), key: key)
    }

    /// Saves a value already encoded as `DeviceAPICoding.encode` encodes it, as `save` does.
    func save(json: [UInt8], key: String) throws {
        try save(jsonByKey: [key: json])
    }

    /// Saves several encoded values in one transaction — all of them or none (with any whose save failed before).
    func save(jsonByKey values: [String: [UInt8]]) throws {
        for (key, json) in values {
            unsaved[key] = String(decoding: json, as: UTF8.self)
            staged[key] = nil
        }
        try transaction { try writeValues(unsaved) }
        unsaved.removeAll()
    }

    /// Keeps `value` to be written in the transaction of the store's next write rather than in one of its own: both
    /// are kept, or neither. `writeStaged` writes it if no write came meanwhile.
    func stage<T: Encodable>(_ value: T, key: String) {
        stage(json: DeviceAPICoding.encode(value), key: key)
    }

    /// Stages a value already encoded as `DeviceAPICoding.encode` encodes it, as `stage` does.
    func stage(json: [UInt8], key: String) {
        staged[key] = String(decoding: json, as: UTF8.self)
        unsaved[key] = nil
    }

    /// Writes what is staged, if no write took it; a failure leaves it to be written as a failed save is.
    func writeStaged() throws {
        guard !staged.isEmpty else { return }
        unsaved.merge(staged) { $1 }
        staged.removeAll()
        try transaction { try writeValues(unsaved) }
        unsaved.removeAll()
    }

    /// A write transaction of the store, with what is staged written in it, and first any span of use that could
    /// not be written before: a value written after it (the use in progress that follows it) is never stored without it.
    private func transaction(_ body: () throws -> Void) throws {
        try tally.transaction {
            for (end, json) in unsavedSpans {
                try connection.withStatement(statements.insertSpan, bindings: [.integer(end), .text(json)]) { try $0.run() }
            }
            try writeValues(staged)
            try body()
        }
        unsavedSpans.removeAll()
        staged.removeAll()
    }

    private func writeValues(_ values: [String: String]) throws {
        for (key, json) in values.sorted(by: { $0.key < $1.key }) {
            try connection.withStatement(statements.upsertValue, bindings: [.text(key), .text(json)]) { try $0.run() }
        }
    }

    /// Whether the last value given for `key` is written.
    func isSaved(key: String) -> Bool { unsaved[key] == nil && staged[key] == nil }

    /// Whether some value, list change or span of use could not be written yet.
    var hasUnsaved: Bool { !unsaved.isEmpty || !unsavedListChanges.isEmpty || !unsavedSpans.isEmpty }

    /// Writes what could not be written before, in one transaction: all of it, or nothing (kept for the next try).
    func saveUnsaved() throws {
        guard hasUnsaved else { return }
        try transaction {
            try writeValues(unsaved)
            for change in unsavedListChanges { try apply(change) }
        }
        unsaved.removeAll()
        unsavedListChanges.removeAll()
    }

    /// Removes a stored value (nothing if there is none).
    func removeValue(key: String) throws {
        unsaved[key] = nil
        staged[key] = nil
        try transaction { try connection.withStatement("DELETE FROM state WHERE key = ?", bindings: [.text(key)]) { try $0.run() } }
    }

    /// Puts `value` at the end of `list`, replacing the item with the same id: one row written, however long the list.
    func appendItem<T: Encodable>(_ value: T, id: String, list: String) throws {
        try write(.append(list: list, id: id, json: String(decoding: DeviceAPICoding.encode(value), as: UTF8.self)))
    }

    /// Removes the item `id` from `list` (nothing if it is not there).
    func removeItem(id: String, list: String) throws {
        try write(.remove(list: list, id: id))
    }

    /// The items of `list`, in the order they were appended. One that no longer decodes is an error.
    func items<T: Decodable>(_ type: T.Type, list: String) throws -> [T] {
        try decodedRows(type, of: try connection.prepare("SELECT json FROM list_item WHERE list = ? ORDER BY position", bindings: [.text(list)]), key: list)
    }

    /// Each row's JSON (the statement's first column) decoded; one that no longer decodes is an error naming `key`.
    private func decodedRows<T: Decodable>(_ type: T.Type, of statement: Statement, key: String) throws -> [T] {
        var rows: [T] = []
        while try statement.step() {
            guard let json = try statement.string(at: 0) else { continue }
            do {
                rows.append(try DeviceAPICoding.decode(type, from: Array(json.utf8)))
            } catch {
                throw DeviceStateError.undecodable(path: path, key: key, detail: DeviceAPICoding.describe(error))
            }
        }
        return rows
    }

    /// Writes `change` after any that failed before it, in one transaction; kept to be written with the next on failure.
    private func write(_ change: ListChange) throws {
        unsavedListChanges.append(change)
        try transaction {
            for change in unsavedListChanges { try apply(change) }
        }
        unsavedListChanges.removeAll()
    }

    private func apply(_ change: ListChange) throws {
        switch change {
        case let .append(list, id, json):
            try connection.withStatement("""
                INSERT OR REPLACE INTO list_item (list, id, position, json)
                VALUES (?1, ?2, (SELECT coalesce(max(position), 0) + 1 FROM list_item WHERE list = ?1), ?3)
                """, bindings: [.text(list), .text(id), .text(json)]) { try $0.run() }
        case let .remove(list, id):
            try connection.withStatement("DELETE FROM list_item WHERE list = ? AND id = ?", bindings: [.text(list), .text(id)]) { try $0.run() }
        }
    }

    /// Appends a span of use (after any whose append failed) and forgets those that ended before `horizon`, in
    /// one transaction. A span that could not be written is kept and written with the next.
    /// The span is given encoded as `DeviceAPICoding.encode` encodes it.
    func appendUsage(json: [UInt8], endMilliseconds: Int64, horizonMilliseconds: Int64) throws {
        unsavedSpans.append((endMilliseconds, String(decoding: json, as: UTF8.self)))
        // The transaction writes the span, after any that could not be written before it.
        try transaction {
            try connection.withStatement(statements.deleteSpansBefore, bindings: [.integer(horizonMilliseconds)]) { try $0.run() }
        }
    }

    /// The stored spans of use, in the order they were recorded. One that no longer decodes is an error.
    func usageSpans<T: Decodable>(_ type: T.Type) throws -> [T] {
        try decodedRows(type, of: try connection.prepare("SELECT json FROM usage_span ORDER BY id"), key: "usage_span")
    }

    /// The statements of the writes made at the device's changes, compiled once when the store opens: their look-up
    /// by SQL text would cost each write again (`SQLiteConnection.keptStatement`).
    private struct Statements {
        let upsertValue, insertSpan, deleteSpansBefore: Statement

        init(_ connection: SQLiteConnection) throws {
            upsertValue = try connection.keptStatement("INSERT INTO state (key, json) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET json = excluded.json")
            insertSpan = try connection.keptStatement("INSERT INTO usage_span (end_ms, json) VALUES (?, ?)")
            deleteSpansBefore = try connection.keptStatement("DELETE FROM usage_span WHERE end_ms < ?")
        }
    }
}
