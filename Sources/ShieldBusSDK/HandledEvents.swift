import BusClient
import BusProtocol
import Foundation
import SQLite

/// The events this plugin has handled, kept across its processes in `<state dir>/cursors/<plugin>/handled.sqlite`.
///
/// The broker delivers again whatever a plugin's process did not acknowledge before it ended (at least once);
/// a process can end after handling an event and before its acknowledgement arrives. Recording each handled
/// event before acknowledging it lets the next process skip it, so the plugin sees every event exactly once.
/// A set rather than a watermark: in virtual time an older event can arrive after a newer reply.
/// What handling an event published is kept with its record, in the same transaction: a broker killed before it
/// read those publications redelivers the event, and the plugin sends them again instead of losing them.
final class HandledEvents {
    /// How many recent sequence numbers are kept; older ones cannot be redelivered any more.
    private static let window: UInt64 = 1_000_000
    /// The record's schema version, kept in `PRAGMA user_version`.
    static let formatVersion: Int64 = 1
    /// The record's tables, each made if missing, and its version.
    static let schema = """
        CREATE TABLE IF NOT EXISTS handled (seq INTEGER PRIMARY KEY);
        CREATE TABLE IF NOT EXISTS published (seq INTEGER NOT NULL, idx INTEGER NOT NULL, message BLOB NOT NULL,
                                              PRIMARY KEY (seq, idx)) WITHOUT ROWID;
        PRAGMA user_version = \(formatVersion);
        """
    private let connection: SQLiteConnection
    /// Counts every record, so a file that lost committed records with its write-ahead log is refused: taken
    /// older, it would have the plugin handle again what it handled.
    private let tally: CommitTally
    /// What it lost to the machine's restart, said at open (`CommitTally.restartLoss`).
    var restartLoss: String? { tally.restartLoss }
    /// The record's checkpoints (on the process's flusher).
    var checkpoints: LogCheckpoints { tally.checkpoints }
    /// Told once when its commits can no longer be noted (`CommitTally.onNoteFailure`).
    var onNoteFailure: ((String) -> Void)? {
        get { tally.onNoteFailure }
        set { tally.onNoteFailure = newValue }
    }
    /// The record's statements, each compiled at its first use: a short-lived extension's launch handles one
    /// callback, which publishes nothing or was never handled before, so most launches need two of the four.
    private var insert = LazyStatement("INSERT OR IGNORE INTO handled (seq) VALUES (?)")
    private var lookup = LazyStatement("SELECT 1 FROM handled WHERE seq = ?")
    private var insertPublication = LazyStatement("INSERT OR REPLACE INTO published (seq, idx, message) VALUES (?, ?, ?)")
    private var lookupPublications = LazyStatement("SELECT message FROM published WHERE seq = ? ORDER BY idx")
    private var recorded = 0

    /// The record of a supervised plugin, or nil for a plugin without a state folder (run by hand).
    static func forSupervisedPlugin(named name: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> HandledEvents? {
        guard environment["SHIELDBUS_SUPERVISED"] == "1", let state = environment["SHIELDBUS_STATE_DIR"], !state.isEmpty else { return nil }
        let folder = state + "/" + StateFolder.cursorFolder(plugin: name), path = state + "/" + StateFolder.handledEventsRecord(plugin: name)
        do {
            // Asked first by `lstat`: most launches find it, and `FileManager.default`'s first use costs a launch more.
            if !StoreFiles.isFolder(folder) { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            return try HandledEvents(path: path)
        } catch let error as SQLiteError where error.isStorageUnavailable {
            throw PluginError.storageUnavailable("the record of the events this plugin handled (\(path)) cannot be opened now: \(error)")
        } catch let error as CocoaError where [.fileWriteOutOfSpace, .fileWriteVolumeReadOnly].contains(error.code) {
            throw PluginError.storageUnavailable("the folder of the plugins' records of handled events (\(folder)) cannot be made now: \(error.localizedDescription)")
        }
    }

    init(path: String) throws {
        // Made whole, flushed once, at the plugin's first launch on a fresh device (`StoreCreation`).
        try StoreCreation.makeIfMissing(at: path, schema: Self.schema)
        connection = try SQLiteConnection(path: path, flags: [.readWrite, .create])
        do {
            tally = try CommitTally(connection: connection, path: path)
        } catch let lost as LostCommits {
            throw HandledEventsError.damaged(path: path, detail: lost.description)
        }
        // WAL and the tables once, when the file is made: each launch of a short-lived extension opens its record.
        // (Records made before the version was kept record 0 and get it at their next open.)
        let found = try connection.setUpSchema(version: Self.formatVersion, Self.schema)
        guard found <= Self.formatVersion else { throw HandledEventsError.unsupportedFormat(path: path, found: found, supported: Self.formatVersion) }
        // A process that ended with its log long (a stopped or force-quit app, a crash) left it to this one, which read
        // it back at its first read above: copied into the file by the flusher while this process goes on (the copy's
        // flushes are milliseconds on a disk, which a turn would wait for here), so the next process reads back only
        // what came after.
        if (FileSize.of(path + "-wal") ?? 0) >= Self.handOverLogBytes { tally.checkpoints.startInBackground() }
        // The log's flushes taken now, while the plugin starts, rather than in its first event's turn; one that fails
        // (a full disk) or meets another process's write lock is left to that first commit, which reports or waits.
        try? connection.startEmptyLog()
    }

    /// Whether an earlier process (or this one) already handled `seq`.
    func contains(_ seq: UInt64) throws -> Bool {
        let lookup = try self.lookup.compiled(on: connection)
        defer { lookup.reset() }  // so no read stays open between events
        try lookup.bind(Int64(seq), at: 1)
        return try lookup.step()
    }

    /// Records `seq` as handled, with what handling it published (in order), all at once.
    func record(_ seq: UInt64, publications: [Publish] = []) throws {
        try tally.transaction { try insertRecord(seq, publications: publications) }
        try didRecord(seq)
    }

    /// What `handleOnce` did with an event.
    enum Handling: Equatable {
        /// A process of the plugin (this one or an earlier one) had recorded it: not handled again.
        case alreadyHandled
        /// Handled, and recorded with what it published.
        case recorded
        /// Handled, and left unrecorded as the handler asked (its handling was cut off).
        case unrecorded
    }

    /// Runs `handle` for `seq` unless it is recorded, and records it with what handling it published (`handle`'s
    /// result; nil leaves it unrecorded) — the look-up and the record in one write transaction: the look-up takes no
    /// read transaction of its own, and no other process of the plugin (an orphan of a killed broker still ending)
    /// can record `seq` between the two. A look-up that finds it, or a handling left unrecorded, commits nothing.
    /// `handle` runs at most once; when this throws, `ran` says whether it did.
    func handleOnce(_ seq: UInt64, ran: inout Bool, _ handle: () -> [Publish]?) throws -> Handling {
        let handling = try tally.transaction(writes: { $0 == .recorded }) { () throws -> Handling in
            guard try !contains(seq) else { return .alreadyHandled }
            ran = true
            guard let publications = handle() else { return .unrecorded }
            try insertRecord(seq, publications: publications)
            return .recorded
        }
        if handling == .recorded { try didRecord(seq) }
        return handling
    }

    private func insertRecord(_ seq: UInt64, publications: [Publish]) throws {
        let insert = try self.insert.compiled(on: connection)
        insert.reset()
        try insert.bind(Int64(seq), at: 1)
        try insert.run()
        for (index, publication) in publications.enumerated() {
            let insertPublication = try self.insertPublication.compiled(on: connection)
            insertPublication.reset()
            try insertPublication.bind([.integer(Int64(seq)), .integer(Int64(index)), .blob(Data(WireCodec.encode(.publish(publication))[1]))])
            try insertPublication.run()
        }
    }

    /// After a committed record: every 10,000th drops what is past the window.
    private func didRecord(_ seq: UInt64) throws {
        recorded += 1
        if recorded % 10_000 == 0, seq > Self.window {
            let oldest = SQLiteValue.integer(Int64(seq - Self.window))
            try connection.prepare("DELETE FROM handled WHERE seq < ?", bindings: [oldest]).run()
            try connection.prepare("DELETE FROM published WHERE seq < ?", bindings: [oldest]).run()
        }
    }

    /// Leaves the record for the plugin's next process with its write-ahead log copied into the file and emptied
    /// (`SQLiteConnection.checkpoint`) once the log has reached `handOverLogBytes` — at a short-lived extension's end,
    /// and, on the flusher, at every open (for a predecessor that ended without its own): a short-lived extension's next
    /// process, opening the record with nobody else holding it, would otherwise read back and check the whole log,
    /// which grows with every launch. A shorter log is left to be read back: the checkpoint syncs the file twice, which
    /// on a disk costs more than reading a few frames, and the next launch waits for this process to end. What the
    /// record holds does not change; a failure leaves the log as it is, for the next process to read.
    func handOver() {
        guard (FileSize.of(connection.path + "-wal") ?? 0) >= Self.handOverLogBytes else { return }
        // The copy started at open may still run (a short launch on a slow disk): met, this one would find the log busy.
        tally.checkpoints.awaitBackground()
        _ = try? connection.checkpoint(.emptying)
    }

    /// The log a hand-over empties: about 16 frames, a few launches' records.
    static let handOverLogBytes: Int64 = 64 << 10

    /// What handling `seq` published, in order (empty if nothing, or if it was not recorded).
    func publications(of seq: UInt64) throws -> [Publish] {
        let lookupPublications = try self.lookupPublications.compiled(on: connection)
        defer { lookupPublications.reset() }
        try lookupPublications.bind(Int64(seq), at: 1)
        var found: [Publish] = []
        while try lookupPublications.step() {
            guard let bytes = try lookupPublications.bytes(at: 0),
                  case .publish(let publication) = try WireCodec.decodeClientMessage([Array("publish".utf8), bytes][...], maximumBodyBytes: .max) else { continue }
            found.append(publication)
        }
        return found
    }
}

/// A statement of the record, compiled on its first use and kept.
private struct LazyStatement {
    let sql: String
    private var statement: Statement?

    init(_ sql: String) { self.sql = sql }

    mutating func compiled(on connection: SQLiteConnection) throws -> Statement {
        if let statement { return statement }
        let made = try connection.prepare(sql)
        statement = made
        return made
    }
}

/// Why a plugin's record of handled events cannot be used.
enum HandledEventsError: Error, CustomStringConvertible {
    /// The file was written by a newer ShieldBus, whose schema this one does not know.
    case unsupportedFormat(path: String, found: Int64, supported: Int64)
    /// The file lost records it had committed (or is not sound).
    case damaged(path: String, detail: String)

    var description: String {
        switch self {
        case let .damaged(path, detail):
            return "the record of handled events \(path) is damaged (\(detail)); the plugin does not start on it, which would handle "
                + "again what it handled. To go on, restore it (with its -wal file) from a backup, or start a fresh device deliberately "
                + "with `shieldbus run --reset-state`"
        case let .unsupportedFormat(path, found, supported):
            return "\(path) records format \(found), newer than this plugin's \(supported): it was written by a newer ShieldBus"
        }
    }
}
