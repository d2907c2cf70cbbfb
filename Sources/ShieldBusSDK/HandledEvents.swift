import BusClient
import BusProtocol
import Foundation
import SQLite

/// The events this plugin has handled, kept across its processes in `<state dir>/cursors/<plugin>.sqlite`.
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
    private let connection: SQLiteConnection
    /// Counts every record, so a file that lost committed records with its write-ahead log is refused: taken
    /// older, it would have the plugin handle again what it handled.
    private let tally: CommitTally
    /// What it lost to the machine's restart, said at open (`CommitTally.restartLoss`).
    var restartLoss: String? { tally.restartLoss }
    /// Told once when its commits can no longer be noted (`CommitTally.onNoteFailure`).
    var onNoteFailure: ((String) -> Void)? {
        get { tally.onNoteFailure }
        set { tally.onNoteFailure = newValue }
    }
    private let insert: Statement
    private let insertPublication: Statement
    private var recorded = 0
    /// `<record>-lock`, held (`flock`) by the process that records alone, for its life: the kernel lets go when it ends.
    private let soleWriter: SoleWriterLock?
    /// While this process records alone (it holds `soleWriter`): the newest event the file held when it began to — any
    /// newer one recorded is in `recordedAlone` — and the tally's count it expects. Nil while another process may
    /// record too (one orphaned by a killed broker can still be ending): then every look-up reads the file.
    private var alone: (newest: UInt64, count: Int64)?
    private var recordedAlone: Set<UInt64> = []
    /// A commit by another connection was seen: look-ups read the file from then on.
    private var sharedForGood = false

    /// The record of a supervised plugin, or nil for a plugin without a state folder (run by hand).
    static func forSupervisedPlugin(named name: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> HandledEvents? {
        guard environment["SHIELDBUS_SUPERVISED"] == "1", let state = environment["SHIELDBUS_STATE_DIR"], !state.isEmpty else { return nil }
        let folder = state + "/" + StateFolder.pluginCursors
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return try HandledEvents(path: folder + "/\(name).sqlite")
    }

    /// How many events recorded alone are kept in memory before the newest is moved past them.
    private let recordedAloneLimit: Int
    /// Whether look-ups of events newer than the file's newest are answered from memory (this process records alone).
    var recordsAlone: Bool { alone != nil }

    init(path: String, recordedAloneLimit: Int = 4_096) throws {
        self.recordedAloneLimit = recordedAloneLimit
        connection = try SQLiteConnection(path: path, flags: [.readWrite, .create])
        do {
            tally = try CommitTally(connection: connection, path: path)
        } catch let lost as LostCommits {
            throw HandledEventsError.damaged(path: path, detail: lost.description)
        }
        // WAL and the tables once, when the file is made: each launch of a short-lived extension opens its record.
        // (Records made before the version was kept record 0 and get it at their next open.)
        let found = try connection.setUpSchema(version: Self.formatVersion, """
            CREATE TABLE IF NOT EXISTS handled (seq INTEGER PRIMARY KEY);
            CREATE TABLE IF NOT EXISTS published (seq INTEGER NOT NULL, idx INTEGER NOT NULL, message BLOB NOT NULL,
                                                  PRIMARY KEY (seq, idx)) WITHOUT ROWID;
            PRAGMA user_version = 1;
            """)
        guard found <= Self.formatVersion else { throw HandledEventsError.unsupportedFormat(path: path, found: found, supported: Self.formatVersion) }
        insert = try connection.prepare("INSERT OR IGNORE INTO handled (seq) VALUES (?)")
        insertPublication = try connection.prepare("INSERT OR REPLACE INTO published (seq, idx, message) VALUES (?, ?, ?)")
        soleWriter = SoleWriterLock(path: path + "-lock")
        recordAloneIfFree()
    }

    /// Whether an earlier process (or this one) already handled `seq`. Recording alone, an event newer than the file's
    /// newest when that began was handled exactly when this process recorded it: no read of the file.
    func contains(_ seq: UInt64) throws -> Bool {
        if alone == nil { recordAloneIfFree() }
        if let alone, seq > alone.newest { return recordedAlone.contains(seq) }
        // The statement is reset when this returns, so no read stays open between events.
        return try connection.withStatement("SELECT 1 FROM handled WHERE seq = ?", bindings: [.integer(Int64(seq))]) { try $0.step() }
    }

    /// Takes `soleWriter` if no other process holds it (one still ending lets go when it ends), and with it the file's
    /// newest event and count, read after it in one read: from then on only this process records. A read that fails
    /// leaves the look-ups to the file.
    private func recordAloneIfFree() {
        guard !sharedForGood, let soleWriter, soleWriter.take() else { return }
        alone = try? connection.transaction {
            let newest = try connection.withStatement("SELECT coalesce(max(seq), 0) FROM handled") { try $0.step() ? try $0.int64(at: 0) ?? 0 : 0 }
            return (UInt64(max(0, newest)), try tally.count())
        }
        recordedAlone = []
    }

    /// Records `seq` as handled, with what handling it published (in order), all at once.
    func record(_ seq: UInt64, publications: [Publish] = []) throws {
        try tally.transaction {
            insert.reset()
            try insert.bind(Int64(seq), at: 1)
            try insert.run()
            for (index, publication) in publications.enumerated() {
                insertPublication.reset()
                try insertPublication.bind([.integer(Int64(seq)), .integer(Int64(index)), .blob(Data(WireCodec.encode(.publish(publication))[1]))])
                try insertPublication.run()
            }
        }
        keepRecordedAlone(seq)
        recorded += 1
        if recorded % 10_000 == 0, seq > Self.window {
            let oldest = SQLiteValue.integer(Int64(seq - Self.window))
            try connection.prepare("DELETE FROM handled WHERE seq < ?", bindings: [oldest]).run()
            try connection.prepare("DELETE FROM published WHERE seq < ?", bindings: [oldest]).run()
        }
    }

    /// Keeps `seq`, just recorded, in memory while this process records alone.
    private func keepRecordedAlone(_ seq: UInt64) {
        guard let (newest, count) = alone else { return }
        // Another connection committed since (it does not hold the lock): from now on, the file says.
        guard tally.lastCommit == count + 1 else {
            (alone, recordedAlone, sharedForGood) = (nil, [], true)
            return
        }
        alone = (newest, count + 1)
        if seq > newest { recordedAlone.insert(seq) }
        // Bounded: what it held is in the file, read from there once at or below the newest.
        if recordedAlone.count >= recordedAloneLimit {
            alone = (max(newest, recordedAlone.max() ?? newest), count + 1)
            recordedAlone = []
        }
    }

    /// What handling `seq` published, in order (empty if nothing, or if it was not recorded).
    func publications(of seq: UInt64) throws -> [Publish] {
        try connection.withStatement("SELECT message FROM published WHERE seq = ? ORDER BY idx", bindings: [.integer(Int64(seq))]) { rows in
            var found: [Publish] = []
            while try rows.step() {
                guard let bytes = try rows.bytes(at: 0),
                      case .publish(let publication) = try WireCodec.decodeClientMessage([Array("publish".utf8), bytes][...], maximumBodyBytes: .max) else { continue }
                found.append(publication)
            }
            return found
        }
    }
}

/// A lock file held with `flock` by one process at a time, for as long as it lives (or until released): the kernel
/// drops it with the process, however it ends. Nil when the file cannot be opened (a read-only folder): nobody holds it.
final class SoleWriterLock {
    private let descriptor: Int32

    init?(path: String) {
        descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
    }

    deinit { close(descriptor) }

    /// Takes the lock if no other holder has it (without waiting); true when this one holds it.
    func take() -> Bool { flock(descriptor, LOCK_EX | LOCK_NB) == 0 }
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
