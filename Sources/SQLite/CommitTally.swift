import Foundation

/// How many write transactions a store has committed, counted in the file itself (table `commit_tally`) and noted
/// beside it after each commit (`CommitNote`), so that a store which lost committed writes with its write-ahead
/// log is refused at its next open (`LostCommits`) instead of being taken, older, as it is.
///
/// For stores with one writer at a time (the broker's `device.sqlite` and `bus.sqlite`, a plugin's cursor record);
/// a second writer counts on from the file, never from its own memory, so two never note the same number for
/// different commits — except a store opened `.exclusive`, whose one connection is its only writer while it lives
/// and counts on from what it last wrote. The App-Group stores, written by many processes, check their change log's numbers against
/// the same note.
public final class CommitTally {
    public let path: String
    private let connection: SQLiteConnection
    /// Whether the file has the tally's table (made with the first counted write).
    private var made: Bool
    /// Commits the note said were made and the file no longer holds, lost with the machine's restart (a power cut,
    /// an operating-system crash) as `CommitNote.verify` judged: 0 but after such a restart.
    public let lostToRestart: Int64
    /// What a store that lost commits to the machine's restart says (nil when it lost none): the caller logs it.
    public var restartLoss: String? { CommitNote.restartLoss(lostToRestart, of: path) }
    /// Each commit's note, the store's checkpoints, and every `CommitFollowUp.syncInterval`-th commit's flush to the disk
    /// (on the flusher).
    private let followUp: CommitFollowUp
    /// Why the last commit could not be noted, flushed or checkpointed (the commit stands; the next one notes past it).
    public var noteFailure: (any Error)? { followUp.failure }
    /// Told once when notes start failing: the owner says it where the person sees it (its log, the bus).
    public var onNoteFailure: ((String) -> Void)? {
        get { followUp.onFailure }
        set { followUp.onFailure = newValue }
    }
    /// The last commit this connection's flushes took to the disk (set when the flusher's flush is done).
    public var syncedThrough: Int64 { followUp.syncedThrough }
    /// The store's checkpoints: on the flusher for a shared store; for one opened `.exclusive` when its owner is idle
    /// (`LogCheckpoints.checkpointIfOwed`).
    public var checkpoints: LogCheckpoints {
        guard let checkpoints = followUp.checkpoints else { preconditionFailure("a tally gives its follow-up the store's connection") }
        return checkpoints
    }
    /// The file's count, kept in memory when the connection is the file's only one (`.exclusive`): nobody else can
    /// commit, so reading the count back in every transaction would only repeat what this connection last wrote.
    private var soleCount: Int64?
    /// The statement that writes the count, kept from the first counted write (the table exists from then on).
    private var counting: Statement?

    /// Counts `connection`'s writes from now on (a store made before the tally starts at 0), and throws
    /// `LostCommits` when the note beside the file says more writes were committed than the file holds. Writes
    /// nothing to the store: open it before setting up the store's schema, which a lost log may have taken too.
    /// `checkpointLimit`: the frames in the log that owe a checkpoint, when not its schedule's (`LogCheckpoints`).
    public init(connection: SQLiteConnection, path: String, lockTimeout: TimeInterval = CommitNote.lockTimeout, checkpointLimit: Int? = nil) throws {
        self.connection = connection
        self.path = path
        let sole = connection.access == .exclusive
        followUp = CommitFollowUp(path: path, lockTimeout: lockTimeout, soleWriter: sole, checkpointing: connection, checkpointLimit: checkpointLimit)
        made = try Self.hasTable(connection)
        lostToRestart = try CommitNote.verify(besides: path, stored: { try Self.count(connection) }, timeout: lockTimeout)
        if sole { soleCount = try Self.count(connection) }
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`) that counts itself — the next number read from the
    /// file under the write lock, or for an `.exclusive` store the next after its own last — then notes the count (and owes the flusher a flush of the log at every `CommitFollowUp.syncInterval`-th).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try transaction(writes: { _ in true }, body)
    }

    /// The same, for a body that may only read: it is counted (and noted) only when `writes` says of its result that
    /// it wrote; one that only read commits nothing.
    public func transaction<T>(writes: (T) -> Bool, _ body: () throws -> T) throws -> T {
        var counted: Int64?
        let result = try connection.transaction(.immediate) {
            let result = try body()
            guard writes(result) else { return result }
            try makeTable()
            let next = try (soleCount ?? Self.storedCount(connection)) + 1
            let count = try counting
                ?? connection.keptStatement("INSERT INTO commit_tally (id, n) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET n = excluded.n")
            counting = count
            try connection.withStatement(count) { count in
                try count.bind(next, at: 1)
                try count.run()
            }
            counted = next
            return result
        }
        guard let counted else { return result }
        committed(counted)
        return result
    }

    /// A write transaction whose `body` writes the count itself — the number it is given, into `n` of the one row of
    /// `commit_tally` (which the store's schema makes) — beside numbers of the store's own that it keeps in columns of
    /// that row: a store that writes such numbers at every commit then changes one row on one page, instead of the
    /// count's page as well (each page changed is a frame written and checksummed into the log). For a store opened
    /// `.exclusive`, whose count this connection knows before the body runs.
    public func transaction<T>(countedByBody body: (_ count: Int64) throws -> T) throws -> T {
        guard let sole = soleCount else { preconditionFailure("a body counts itself only in a store opened .exclusive") }
        let next = sole + 1
        let result = try connection.transaction(.immediate) { try body(next) }
        committed(next)
        return result
    }

    private func makeTable() throws {
        if !made { try connection.execute("CREATE TABLE IF NOT EXISTS commit_tally (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)") }
    }

    /// After the commit that took the count to `counted`: its note, its flush if one is owed, its checkpoint.
    private func committed(_ counted: Int64) {
        made = true
        if soleCount != nil { soleCount = counted }
        followUp.committed(through: counted, after: counted - 1)
    }

    /// The file's own count of committed writes (0 before the first).
    public func count() throws -> Int64 { try Self.count(connection) }

    /// Whether the file has the tally's table: found in the schema the connection holds (no statement compiled, as a
    /// store's every open asks), or else asked of the file by a statement — another process may have made the table
    /// since the connection read the schema, and a count read as 0 would refuse a sound store. No store drops it.
    private static func hasTable(_ connection: SQLiteConnection) throws -> Bool {
        if try connection.schemaHoldsTable("commit_tally") { return true }
        return try connection.withStatement("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'commit_tally'") {
            try $0.step() && (try $0.int64(at: 0) ?? 0) > 0
        }
    }

    private static func count(_ connection: SQLiteConnection) throws -> Int64 {
        try hasTable(connection) ? try storedCount(connection) : 0
    }

    /// The count in the table, which must exist.
    private static func storedCount(_ connection: SQLiteConnection) throws -> Int64 {
        try connection.withStatement("SELECT n FROM commit_tally WHERE id = 1") { try $0.step() ? try $0.int64(at: 0) ?? 0 : 0 }
    }
}
