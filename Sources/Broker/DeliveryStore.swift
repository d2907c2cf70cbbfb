import Foundation
import SQLite

/// The broker's own crash-safe state in the state folder (`bus.sqlite`, SQLite in WAL mode): each supervised
/// plugin's unacknowledged events (its durable cursor), observers' publications held for the next settled point,
/// the last sequence number saved and the bus time reached, and what the saved events last said of each service
/// fact — so a restarted broker numbers on, never runs its clock backwards, cuts its journal back to what was
/// saved, redelivers what plugins missed, and its services can tell what the journal does not say yet.
final class DeliveryStore {
    struct Key: Hashable {
        let plugin: String
        let seq: UInt64
    }

    /// An observer's publication held until the bus settles (protocol.md § 9.2), in the order it is to be sequenced.
    struct Held: Equatable {
        var source: String
        var topic: String
        var body: [UInt8]
        var corr: String?
        var deadline: Int64?
    }

    /// What a previous broker left: the sequence number and bus time it had reserved (never reached), and the
    /// events its plugins had not acknowledged.
    struct Snapshot {
        var lastSeq: UInt64 = 0
        var busTime: Int64?
        var pending: [(plugin: String, seq: UInt64, json: [UInt8])] = []
        /// The fingerprints of what handling a kept event published (`DeliveryLedger.isRepeat`).
        var published: [Key: [UInt64]] = [:]
        /// The last sequence number whose batch was saved: journal lines after it were never delivered.
        var savedSeq: UInt64?
        var held: [Held] = []
        /// What the saved journal last said of each of a service's facts (`ServiceEvent.fact`): the body of
        /// the last event sequenced stating it, by fact.
        var announced: [String: [UInt8]] = [:]
    }

    let path: String
    private let connection: SQLiteConnection
    private let statements: Statements
    /// Each kept event's row in `pending`, by plugin and sequence number: a deletion names its row.
    private var rows: [Key: Int64] = [:]
    /// The highest row number given so far: a new row takes the next, as SQLite numbers a row given none.
    private var lastRow: Int64 = 0
    /// Counts every batch written, so a file that lost committed batches with its write-ahead log is refused at
    /// start: taken older, it would number again what was numbered and handled.
    private let tally: CommitTally
    /// Its write transactions so far, every broker's (`CommitTally`).
    func commits() throws -> Int64 { try tally.count() }
    /// What it lost to the machine's restart, said at open (`CommitTally.restartLoss`).
    var restartLoss: String? { tally.restartLoss }
    /// Told once when its commits can no longer be noted or flushed (`CommitTally.onNoteFailure`).
    var onNoteFailure: ((String) -> Void)? {
        get { tally.onNoteFailure }
        set { tally.onNoteFailure = newValue }
    }

    /// The page size of a store made here (one made earlier keeps its own). Each save writes its pages whole into the
    /// write-ahead log — the kept deliveries, the tally's row — each checksummed and copied: smaller pages than
    /// SQLite's 4 KiB cost a save less, while a kept envelope of the usual size still fits in its row (`pending` has
    /// rowids: see `tables`; 1 KiB pages would send many to overflow pages, more frames a save).
    static let pageSize = 2_048

    /// The store's tables, each made if missing. The numbers every save writes — the last sequence number saved and
    /// the reservations — are kept in the row of the store's count of commits (`commit_tally`, the
    /// `CommitTally`'s), which every save writes too: one row on one page a save, instead of the count's page and a
    /// `meta` table's. `meta`, a table in a store made before, is now a view of them (`moveNumbersIntoTheTally`).
    /// The tally's row exists from the first open on (its count 0 until the first commit, as without a row).
    static let schema = tables + tallyRow

    /// The tally's row with no commit counted, made with the store (`schema`); an older store gets it at open only
    /// when it lacks it, so a store that has everything opens without writing (a read-only file opens, and says so
    /// at its first save, as before its numbers moved).
    private static let tallyRow = "INSERT OR IGNORE INTO commit_tally (id, n) VALUES (1, 0);"

    /// `pending` is a table with rowids, each row numbered by the store as it is kept (`rows`), not one keyed by plugin
    /// and sequence number (`WITHOUT ROWID`): SQLite keeps a row of such a key's tree in its page only up to about a
    /// quarter of the page (488 bytes at 2 KiB), so a longer envelope (`shield.shown`'s, on every shielded open) would
    /// take an overflow page for each plugin it is kept for, and the save that keeps it and the one that forgets it
    /// would each write the file's first page and its list of free pages as well. A rowid table's row stays in its
    /// page up to nearly the whole page, and a new row goes at the end of the table, where the last ones went.
    private static let pendingTable =
        "CREATE TABLE IF NOT EXISTS pending (row INTEGER PRIMARY KEY, plugin TEXT NOT NULL, seq INTEGER NOT NULL, envelope BLOB NOT NULL);"

    private static let tables = pendingTable + """
        CREATE TABLE IF NOT EXISTS commit_tally (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL,
                                                 savedSeq INTEGER, seqReserved INTEGER, timeReserved INTEGER);
        CREATE VIEW IF NOT EXISTS meta (key, value) AS \(metaView);
        CREATE TABLE IF NOT EXISTS published (plugin TEXT NOT NULL, seq INTEGER NOT NULL, fingerprints BLOB NOT NULL,
                                              PRIMARY KEY (plugin, seq)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS held (position INTEGER PRIMARY KEY, source TEXT NOT NULL, topic TEXT NOT NULL,
                                         body BLOB NOT NULL, corr TEXT, deadline INTEGER);
        CREATE TABLE IF NOT EXISTS announced (fact TEXT PRIMARY KEY, body BLOB NOT NULL) WITHOUT ROWID;
        """

    /// `meta` as the table of a store made before showed them, key by key: what a person reading the file finds where
    /// it was. A broker from before the move cannot write a view, and so refuses the store at open rather than keep
    /// numbers nobody reads (its `meta` statements do not compile).
    private static let metaView = """
        SELECT 'seqReserved', seqReserved FROM commit_tally WHERE seqReserved IS NOT NULL
        UNION ALL SELECT 'timeReserved', timeReserved FROM commit_tally WHERE timeReserved IS NOT NULL
        UNION ALL SELECT 'savedSeq', savedSeq FROM commit_tally WHERE savedSeq IS NOT NULL
        """

    /// Frames in the write-ahead log that owe a checkpoint in virtual time. Every save writes the same few pages again,
    /// and SQLite finds a frame's slot in the log's index by probing past the earlier frames of the same page in its
    /// block: a longer log costs every commit more. In real time the checkpoint's syncs delay what reaches the loop next
    /// (the shield decision), so they stay rare (`LogCheckpoints.idleSoftLimit`); in virtual time nobody waits on the
    /// loop's idle moment, and the limit is the one that costs the loop least.
    static let virtualTimeCheckpointLimit = 500

    /// The checkpoint limit of the store of a broker whose clock is virtual or not.
    static func checkpointLimit(virtualTime: Bool) -> Int {
        virtualTime ? virtualTimeCheckpointLimit : LogCheckpoints.idleSoftLimit
    }

    /// Frames in the write-ahead log that owe a checkpoint (`checkpointLimit(virtualTime:)`).
    var checkpointLimit: Int { tally.checkpoints.softLimit }

    /// Whether its write-ahead log owes a checkpoint, which the broker runs when its loop is idle (`checkpointIfOwed`).
    var owesCheckpoint: Bool { tally.checkpoints.owesCheckpoint() }

    /// The broker's loop is idle: the checkpoint owed, if any, on the store's one connection. Opened `.exclusive`, the
    /// store has no other connection a checkpoint could run on beside the loop's commits; a log the loop leaves past
    /// `LogCheckpoints.idleHardLimit` is checkpointed by the commit that passes it.
    func checkpointIfOwed() { tally.checkpoints.checkpointIfOwed() }

    /// Copies the log into the file, as closing the store would (its two flushes), at the run's end while the plugins
    /// end: the close at exit then has nothing left to copy. Passive: it waits for nobody; left undone, the close does it.
    func copyLogBeforeClose() { _ = try? connection.checkpoint(.passive) }

    /// Opens the store for this broker alone (it is the only reader and writer while it runs, behind the state
    /// folder's lock): no POSIX lock per transaction. Another opener meanwhile gets
    /// `SQLiteError.heldByAnotherConnection` after `busyTimeout`.
    init(path: String, busyTimeout: TimeInterval = 5, checkpointLimit: Int = LogCheckpoints.idleSoftLimit) throws {
        self.path = path
        // A fresh device's store is made whole, flushed once, before it is opened (`StoreCreation`).
        try StoreCreation.makeIfMissing(at: path, pageSize: Self.pageSize, schema: Self.schema)
        connection = try SQLiteConnection(path: path, flags: [.readWrite, .create], access: .exclusive, busyTimeout: busyTimeout,
                                          pageSize: Self.pageSize, writeAheadLog: true)
        do {
            tally = try CommitTally(connection: connection, path: path, checkpointLimit: checkpointLimit)
        } catch let lost as LostCommits {
            throw DeliveryStoreError.damaged(path: path, detail: lost.description)
        }
        // Deleted rows are not overwritten with zeros, nor freed pages written again as zeros (SQLite's build here
        // turns `secure_delete` on): the acknowledged events it would wipe are in the journal as they were, and each
        // freed page it wrote would be one more frame in the log. What is committed, and when, does not change.
        try connection.execute("PRAGMA secure_delete = OFF")
        // A store made before a table was added gets it here.
        try connection.execute(Self.tables)
        let hasTallyRow = try connection.withStatement("SELECT count(*) FROM commit_tally WHERE id = 1") {
            try $0.step() && (try $0.int64(at: 0) ?? 0) > 0
        }
        if !hasTallyRow { try connection.execute(Self.tallyRow) }
        try Self.moveNumbersIntoTheTally(connection)
        try Self.numberThePendingRows(connection)
        statements = try Statements(connection)
        let kept = try connection.prepare("SELECT row, plugin, seq FROM pending")
        while try kept.step() {
            guard let row = try kept.int64(at: 0), let plugin = try kept.string(at: 1), let seq = try kept.int64(at: 2) else { continue }
            rows[Key(plugin: plugin, seq: UInt64(seq))] = row
            lastRow = max(lastRow, row)
        }
    }

    /// A store made before `pending` had rowids (`tables`) keeps its rows in a table keyed by plugin and sequence
    /// number: they are moved into a numbered table, in one transaction that counts no commit (as the numbers' move).
    /// A broker from before still reads the numbered table (its statements name only the plugin, the sequence number
    /// and the envelope), but the table has no index on the key, which every save would write too: its keeping a key
    /// again would add a second row, not replace the first (the next open removes it: `forgetDuplicateRows`).
    private static func numberThePendingRows(_ connection: SQLiteConnection) throws {
        let numbered = try connection.withStatement("SELECT count(*) FROM pragma_table_info('pending') WHERE name = 'row'") {
            try $0.step() && (try $0.int64(at: 0) ?? 0) > 0
        }
        guard !numbered else { return try forgetDuplicateRows(connection) }
        try connection.transaction(.immediate) {
            try connection.execute("""
                ALTER TABLE pending RENAME TO pending_unnumbered;
                \(pendingTable)
                INSERT INTO pending (plugin, seq, envelope) SELECT plugin, seq, envelope FROM pending_unnumbered ORDER BY seq, plugin;
                DROP TABLE pending_unnumbered;
                """)
        }
    }

    /// A key kept in two rows (a broker from before kept it again: the table has no index on the key) is kept in its
    /// last, as that broker's replacing meant; the others are removed at open, in a transaction that counts no commit
    /// (as the rows' numbering), so that the event is not restored twice.
    private static func forgetDuplicateRows(_ connection: SQLiteConnection) throws {
        let duplicated = try connection.withStatement("SELECT 1 FROM pending GROUP BY plugin, seq HAVING count(*) > 1 LIMIT 1") { try $0.step() }
        guard duplicated else { return }
        try connection.transaction(.immediate) {
            try connection.execute("DELETE FROM pending WHERE row NOT IN (SELECT max(row) FROM pending GROUP BY plugin, seq);")
        }
    }

    /// A store made before its numbers moved into the tally's row (`schema`) keeps them in a table `meta`: they are
    /// copied into the row, in one transaction with the table's replacement by the view. It counts no commit: the
    /// count stays the one the store's note holds, and a log lost with it leaves the store as it was before.
    private static func moveNumbersIntoTheTally(_ connection: SQLiteConnection) throws {
        let metaIsATable = try connection.withStatement("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'") {
            try $0.step() && (try $0.int64(at: 0) ?? 0) > 0
        }
        guard metaIsATable else { return }
        try connection.transaction(.immediate) {
            var columns = Set<String>()
            let info = try connection.prepare("PRAGMA table_info(commit_tally)")
            while try info.step() { if let name = try info.string(at: 1) { columns.insert(name) } }
            for column in numberColumns where !columns.contains(column) {
                try connection.execute("ALTER TABLE commit_tally ADD COLUMN \(column) INTEGER")
            }
            try connection.execute("""
                UPDATE commit_tally SET seqReserved = (SELECT value FROM meta WHERE key = 'seqReserved'),
                                        timeReserved = (SELECT value FROM meta WHERE key = 'timeReserved'),
                                        savedSeq = (SELECT value FROM meta WHERE key = 'savedSeq') WHERE id = 1;
                DROP TABLE meta;
                CREATE VIEW meta (key, value) AS \(metaView);
                """)
        }
    }

    /// The numbers kept in the tally's row beside its count.
    private static let numberColumns = ["savedSeq", "seqReserved", "timeReserved"]

    func load() throws -> Snapshot {
        var snapshot = Snapshot()
        let numbers = try connection.prepare("SELECT savedSeq, seqReserved, timeReserved FROM commit_tally WHERE id = 1")
        if try numbers.step() {
            snapshot.savedSeq = try numbers.int64(at: 0).map { UInt64(max(0, $0)) }
            snapshot.lastSeq = UInt64(max(0, try numbers.int64(at: 1) ?? 0))
            snapshot.busTime = try numbers.int64(at: 2)
        }
        let rows = try connection.prepare("SELECT plugin, seq, envelope FROM pending ORDER BY plugin, seq")
        while try rows.step() {
            guard let plugin = try rows.string(at: 0), let seq = try rows.int64(at: 1), let json = try rows.bytes(at: 2) else { continue }
            snapshot.pending.append((plugin, UInt64(seq), json))
        }
        let published = try connection.prepare("SELECT plugin, seq, fingerprints FROM published")
        while try published.step() {
            guard let plugin = try published.string(at: 0), let seq = try published.int64(at: 1), let blob = try published.bytes(at: 2) else { continue }
            snapshot.published[Key(plugin: plugin, seq: UInt64(seq))] = stride(from: 0, to: blob.count - 7, by: 8).map { start in
                blob[start..<start + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
            }
        }
        let held = try connection.prepare("SELECT source, topic, body, corr, deadline FROM held ORDER BY position")
        while try held.step() {
            guard let source = try held.string(at: 0), let topic = try held.string(at: 1), let body = try held.bytes(at: 2) else { continue }
            snapshot.held.append(Held(source: source, topic: topic, body: body, corr: try held.string(at: 3), deadline: try held.int64(at: 4)))
        }
        let announced = try connection.prepare("SELECT fact, body FROM announced")
        while try announced.step() {
            guard let fact = try announced.string(at: 0), let body = try announced.bytes(at: 1) else { continue }
            snapshot.announced[fact] = body
        }
        return snapshot
    }

    /// Writes one batch of changes atomically: all of it or none of it. `deletions` are kept events acknowledged or
    /// dropped, `publishedDeletions` those of them with publications noted (only they have a `published` row); `held`,
    /// when given, replaces the held publications; `announced` holds the facts the batch states (by fact, the body
    /// that states it); `savedSeq` is the last sequence number sequenced (everything up to it is now durable).
    func write(inserts: [Key: [UInt8]], deletions: [Key], publishedDeletions: [Key] = [], published: [Key: [UInt64]] = [:], held: [Held]? = nil,
               announced: [String: [UInt8]] = [:], savedSeq: UInt64, seqReserved: UInt64, timeReserved: Int64) throws {
        // The rows' numbers change only once the transaction stands: one that fails leaves the store as it was, and
        // its changes are written again by a later save.
        var numbered: [Key: Int64] = [:]
        var nextRow = lastRow
        try tally.transaction(countedByBody: { commits in
            if !announced.isEmpty {
                try connection.withStatement(statements.insertAnnounced) { insert in
                    for (fact, body) in announced {
                        insert.reset()
                        try insert.bind(fact, at: 1)
                        try insert.bind(body, at: 2)
                        try insert.run()
                    }
                }
            }
            if let held {
                try connection.withStatement(statements.deleteHeld) { try $0.run() }
                try connection.withStatement(statements.insertHeld) { insert in
                    for (position, publication) in held.enumerated() {
                        insert.reset()
                        try insert.bind(Int64(position), at: 1)
                        try insert.bind(publication.source, at: 2)
                        try insert.bind(publication.topic, at: 3)
                        try insert.bind(publication.body, at: 4)
                        try insert.bind(publication.corr.map(SQLiteValue.text) ?? .null, at: 5)
                        try insert.bind(publication.deadline.map(SQLiteValue.integer) ?? .null, at: 6)
                        try insert.run()
                    }
                }
            }
            if !inserts.isEmpty {
                try connection.withStatement(statements.insertPending) { insert in
                    // Numbered in sequence order, as they were sequenced: the store's bytes follow from what it keeps.
                    for (key, json) in inserts.sorted(by: { ($0.key.seq, $0.key.plugin) < ($1.key.seq, $1.key.plugin) }) {
                        // A key kept already keeps its row (the insert replaces it).
                        let row = rows[key] ?? {
                            nextRow += 1
                            return nextRow
                        }()
                        insert.reset()
                        try insert.bind(row, at: 1)
                        try insert.bind(key.plugin, at: 2)
                        try insert.bind(Int64(key.seq), at: 3)
                        try insert.bind(json, at: 4)
                        try insert.run()
                        numbered[key] = row
                    }
                }
            }
            if !published.isEmpty {
                try connection.withStatement(statements.insertPublished) { insert in
                    for (key, fingerprints) in published {
                        insert.reset()
                        // Little-endian, eight bytes each.
                        let blob = fingerprints.flatMap { value in (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
                        try insert.bind(key.plugin, at: 1)
                        try insert.bind(Int64(key.seq), at: 2)
                        try insert.bind(blob, at: 3)
                        try insert.run()
                    }
                }
            }
            if !deletions.isEmpty {
                try connection.withStatement(statements.deletePending) { delete in
                    for key in deletions {
                        guard let row = numbered[key] ?? rows[key] else { continue }  // never kept in the store
                        delete.reset()
                        try delete.bind(row, at: 1)
                        try delete.run()
                    }
                }
            }
            if !publishedDeletions.isEmpty {
                try connection.withStatement(statements.deletePublished) { delete in
                    for key in publishedDeletions {
                        delete.reset()
                        try delete.bind(key.plugin, at: 1)
                        try delete.bind(Int64(key.seq), at: 2)
                        try delete.run()
                    }
                }
            }
            // The count and the numbers, in the tally's one row (`schema`).
            try connection.withStatement(statements.updateTally) { update in
                try update.bind(commits, at: 1)
                try update.bind(Int64(savedSeq), at: 2)
                try update.bind(Int64(seqReserved), at: 3)
                try update.bind(timeReserved, at: 4)
                try update.run()
            }
            // The note is moved on to `commits` after this transaction: a file that did not count it would be refused
            // as damaged at the next open.
            guard connection.changes == 1 else { throw DeliveryStoreError.noTallyRow(path: path) }
        })
        for (key, row) in numbered { rows[key] = row }
        lastRow = nextRow
        for key in deletions { rows.removeValue(forKey: key) }
    }

    /// The statements of a write, compiled once when the store opens and kept with it: a save runs several, and their
    /// look-up by SQL text would cost each of them again (`SQLiteConnection.keptStatement`).
    private struct Statements {
        let insertAnnounced, deleteHeld, insertHeld, insertPending, insertPublished, deletePending, deletePublished: Statement
        let updateTally: Statement

        init(_ connection: SQLiteConnection) throws {
            insertAnnounced = try connection.keptStatement("INSERT OR REPLACE INTO announced (fact, body) VALUES (?, ?)")
            deleteHeld = try connection.keptStatement("DELETE FROM held")
            insertHeld = try connection.keptStatement("INSERT INTO held (position, source, topic, body, corr, deadline) VALUES (?, ?, ?, ?, ?, ?)")
            insertPending = try connection.keptStatement("INSERT OR REPLACE INTO pending (row, plugin, seq, envelope) VALUES (?, ?, ?, ?)")
            insertPublished = try connection.keptStatement("INSERT OR REPLACE INTO published (plugin, seq, fingerprints) VALUES (?, ?, ?)")
            deletePending = try connection.keptStatement("DELETE FROM pending WHERE row = ?")
            deletePublished = try connection.keptStatement("DELETE FROM published WHERE plugin = ? AND seq = ?")
            updateTally = try connection.keptStatement("UPDATE commit_tally SET n = ?, savedSeq = ?, seqReserved = ?, timeReserved = ? WHERE id = 1")
        }
    }
}

/// Why the broker's delivery store cannot be used. Never answered by numbering from the start again.
enum DeliveryStoreError: Error, CustomStringConvertible {
    case damaged(path: String, detail: String)
    /// A save found no row to count itself in (`DeliveryStore.schema` makes it at open): nothing of it was committed.
    case noTallyRow(path: String)

    var description: String {
        switch self {
        case let .damaged(path, detail):
            return "the delivery store \(path) is damaged (\(detail)); the run stopped before its first event. To go on, restore it (with its -wal file) "
                + "from a backup, or start a fresh device deliberately with `shieldbus run --reset-state`"
        case let .noTallyRow(path):
            return "the delivery store \(path) has no row for its count of commits, so the save was not made; it is tried again with the next"
        }
    }
}
