import Foundation

/// When a store's write-ahead log is copied into its file (a checkpoint), so that no commit waits for one while the log
/// is short.
///
/// SQLite's own automatic checkpoint runs inside the commit that takes the log past 1,000 pages and syncs the log and
/// the file: milliseconds on a disk, more while other writers keep it busy, and the committing thread — the broker's
/// loop, a plugin handling an event — waits (docs/benchmarks.md, "The shield decision"). Here a commit only
/// says how long the log is (`SQLiteConnection.onCommitToLog`, which turns SQLite's own off). A log past its soft
/// limit owes a checkpoint, run where the store allows:
/// - a shared store (`SQLiteConnection.Access.shared`), past `softLimit` frames: on the process's flusher
///   (`LogFlusher`), through a connection of its own opened there at the first, PASSIVE — it waits for nobody, and the
///   writers go on committing meanwhile, as WAL allows; at most one in flight per store. One started as a store is
///   opened (`startInBackground`) also starts the copied log again, a one-frame commit that takes the write lock for
///   as long as the log's header takes to flush;
/// - a store opened `.exclusive`, which no second connection can open, past `idleSoftLimit` (or the limit its owner
///   chose): on its own connection, when its owner says it is idle (`checkpointIfOwed`).
///
/// Either way, a log past its hard limit (`hardLimit`, `idleHardLimit`) — the background checkpoint cannot keep up (a
/// failing or very slow disk) or the owner is never idle — is checkpointed by the committing thread itself, inside the
/// commit that passed it, after the background checkpoint running then, if one is. SQLite runs one checkpoint of a
/// store at a time: one that finds another running returns at once, leaving the log to it. The log stays bounded
/// while checkpoints can copy it; readers that keep the log's start (another process's open read transaction) hold
/// any checkpoint, and then each commit past the hard limit tries again.
///
/// A checkpoint copies what the log holds and leaves the log as it was when it fails: no commit is lost. The failure
/// is kept until one succeeds, and said through the store's `CommitFollowUp` (`onFailure`, with the store's path);
/// a failed checkpoint is tried again at the first commit `retryGap` after it.
public final class LogCheckpoints: @unchecked Sendable {
    /// Frames (pages) in a shared store's log that owe a checkpoint: SQLite's own automatic checkpoint's, so the log is
    /// as long as it was (about 4 MB at 4 KiB a page) for the processes that open it afresh and read it back.
    public static let softLimit = 1000
    /// Frames past which a shared store's committing thread checkpoints itself. Four times the soft limit: far enough
    /// above it that the flusher's checkpoint, asked for at the soft limit, comes first on any working disk, so a
    /// commit checkpoints itself only when that one cannot; near enough that the log, which the next process to open
    /// the store alone reads back whole, stays a few times its usual length.
    public static let hardLimit = 4 * softLimit
    /// Frames in an `.exclusive` store's log that owe a checkpoint. Its checkpoints run on its owner's thread (two
    /// syncs each, and one more when the log is written again from its start, at the same idle moment) and delay whatever comes to
    /// that thread next, so they come sixteen times less often than a shared store's; the log (64 MB at 4 KiB a page)
    /// is read back only after a crash (a clean close checkpoints and removes it).
    public static let idleSoftLimit = 16 * softLimit
    /// Frames past which an `.exclusive` store's commit checkpoints itself. Twice the soft limit: past the soft limit
    /// the owner checkpoints at its first idle moment, which in real time comes within milliseconds, so this only
    /// bounds the log of an owner that never waits (a flood), at what a crash leaves to read back (128 MB at 4 KiB a
    /// page).
    public static let idleHardLimit = 2 * idleSoftLimit
    /// The least time between a failed checkpoint and the next try (seconds).
    public static let retryGap: TimeInterval = 1

    /// Where a store's checkpoints run.
    public enum Schedule: Sendable {
        /// On the flusher, through a connection of its own (a shared store).
        case background
        /// On the store's own connection when its owner is idle (a store opened `.exclusive`).
        case whenIdle
    }

    /// How many checkpoints ran, by where (for tests and benchmarks).
    public struct Counts: Equatable, Sendable {
        /// On the flusher, through the checkpoints' own connection.
        public var background = 0
        /// When the owner was idle (`checkpointIfOwed`).
        public var whenIdle = 0
        /// By the committing thread, the log past its hard limit.
        public var committing = 0

        public init(background: Int = 0, whenIdle: Int = 0, committing: Int = 0) {
            (self.background, self.whenIdle, self.committing) = (background, whenIdle, committing)
        }
    }

    public let path: String
    public let schedule: Schedule
    /// Frames in the log that owe a checkpoint.
    public let softLimit: Int
    private let hardLimit: Int
    private let connection: SQLiteConnection
    private let flusher: LogFlusher
    /// Seconds on a clock that never steps; a test sets its own.
    private let now: () -> TimeInterval
    /// The log's frames after the last commit; 0 after a checkpoint that copied them all (the next commit writes the
    /// log again from its start). The committing thread's.
    public private(set) var logFrames = 0
    /// While a failure stands: when the committing thread first saw it, or last tried again.
    private var lastFailure: TimeInterval?

    /// Guards `shared`; signalled when a background checkpoint ends.
    private let lock = NSCondition()
    /// What the flusher shares with the committing thread.
    private var shared = Shared()
    /// The flusher's connection to the store (opened there, used only there).
    private var ownConnection: SQLiteConnection?

    /// Takes over `connection`'s checkpoints (its schedule from its access: `.exclusive` checkpoints when idle).
    /// The limits default to the store's schedule's (`softLimit` and `hardLimit`, or `idleSoftLimit` and `idleHardLimit`).
    public init(connection: SQLiteConnection, flusher: LogFlusher = .shared, softLimit: Int? = nil,
                hardLimit: Int? = nil, now: @escaping () -> TimeInterval = { ProcessInfo.processInfo.systemUptime }) {
        let idle = connection.access == .exclusive
        let softLimit = softLimit ?? (idle ? Self.idleSoftLimit : Self.softLimit)
        let hardLimit = hardLimit ?? (idle ? Self.idleHardLimit : Self.hardLimit)
        self.connection = connection
        self.path = connection.path
        self.schedule = idle ? .whenIdle : .background
        self.flusher = flusher
        (self.softLimit, self.hardLimit) = (softLimit, hardLimit)
        self.now = now
        connection.onCommitToLog { [weak self] frames in self?.committed(logFrames: frames) }
    }

    deinit { connection.onCommitToLog(nil) }

    /// Why the last checkpoint failed; nil once one succeeds again.
    public var failure: (any Error)? { lock.withLock { shared.failure } }

    public var counts: Counts { lock.withLock { shared.counts } }

    /// Whether a checkpoint is owed: the log is past the soft limit, and no failure was seen within `retryGap`. A
    /// method, not a property: asked while a failure stands, it starts the wait before the next try.
    public func owesCheckpoint() -> Bool { logFrames >= softLimit && mayTryNow() }

    /// The owner is idle: runs the checkpoint owed, if any, on the store's own connection (a `.whenIdle` store's). True
    /// when one ran.
    @discardableResult
    public func checkpointIfOwed() -> Bool {
        guard owesCheckpoint() else { return false }
        // A log copied whole is started again now, while the owner is idle, not by its next commit, which a turn may
        // wait for (`SQLiteConnection.startCopiedLog`).
        if checkpointHere(counting: \.whenIdle) { try? connection.startCopiedLog() }
        return true
    }

    /// Starts a checkpoint on the flusher now, whatever the log's length: for a store an earlier process left with a
    /// long log (a plugin's record of handled events, `HandledEvents`), copied while this process goes on rather than
    /// before it does. Nothing when one is in flight, when a failure stands (`retryGap`), or for a store that
    /// checkpoints when its owner is idle.
    public func startInBackground() {
        guard schedule == .background, mayTryNow() else { return }
        askFlusher(thenStartLog: true)
    }

    /// Waits for the background checkpoint in flight, if any: a checkpoint on the owner's connection that meets it
    /// finds the log busy and leaves it as it is.
    public func awaitBackground() {
        lock.withLock { while shared.inFlight { lock.wait() } }
    }

    /// After each commit (SQLite's hook, on the committing thread, inside the commit).
    private func committed(logFrames frames: Int) {
        logFrames = frames
        guard frames >= softLimit, schedule == .background || frames >= hardLimit, owesCheckpoint() else { return }
        if frames >= hardLimit {
            lock.withLock { while shared.running { lock.wait() } }
            checkpointHere(counting: \.committing)
            return
        }
        askFlusher(thenStartLog: false)
    }

    /// Asks the flusher for a checkpoint unless one is in flight.
    private func askFlusher(thenStartLog: Bool) {
        let start = lock.withLock {
            guard !shared.inFlight else { return false }
            shared.inFlight = true
            return true
        }
        guard start else { return }
        triesAgain()
        flusher.run { self.checkpointInBackground(thenStartLog: thenStartLog) }
    }

    /// A try while a failure stands: the next waits `retryGap` from now.
    private func triesAgain() {
        if lastFailure != nil { lastFailure = now() }
    }

    /// False while a failure stands, until `retryGap` after the committing thread first saw it or last tried again.
    private func mayTryNow() -> Bool {
        guard failure != nil else {
            lastFailure = nil
            return true
        }
        let time = now()
        guard let last = lastFailure, time - last >= Self.retryGap else {
            if lastFailure == nil { lastFailure = time }
            return false
        }
        return true
    }

    /// A checkpoint on the store's own connection, on this thread; true when it copied the whole log.
    @discardableResult
    private func checkpointHere(counting place: WritableKeyPath<Counts, Int>) -> Bool {
        triesAgain()
        do {
            let copiedAll = try connection.checkpoint(.passive)
            if copiedAll { logFrames = 0 }
            lock.withLock {
                shared.failure = nil
                shared.counts[keyPath: place] += 1
            }
            return copiedAll
        } catch {
            lock.withLock { shared.failure = error }
            return false
        }
    }

    /// On the flusher: a PASSIVE checkpoint through the flusher's own connection, opened at the first. `thenStartLog`
    /// for a store just opened, whose owner has not started committing: the log copied whole is started again here
    /// (`SQLiteConnection.startCopiedLog`), so the owner's first commit does not flush the log's new header. Not
    /// while an owner commits: its commit meeting that one-frame commit would wait in SQLite's busy handler, whose
    /// sleeps are longer than the flush it spares.
    private func checkpointInBackground(thenStartLog: Bool) {
        lock.withLock { shared.running = true }
        var problem: (any Error)?
        do {
            let own = try ownConnection ?? Self.openOwnConnection(path: path)
            ownConnection = own
            if try own.checkpoint(.passive), thenStartLog { try? own.startCopiedLog() }
        } catch {
            problem = error
            // Opened afresh at the next try: the file may be back where it belongs by then.
            ownConnection = nil
        }
        lock.withLock {
            (shared.inFlight, shared.running) = (false, false)
            shared.failure = problem
            if problem == nil { shared.counts.background += 1 }
            lock.broadcast()
        }
    }

    /// The flusher's connection to a store in WAL mode, with `synchronous = NORMAL` as its owner's: the commit that
    /// starts a copied log flushes the log's header and nothing more.
    private static func openOwnConnection(path: String) throws -> SQLiteConnection {
        let own = try SQLiteConnection(path: path, flags: [.readWrite])
        try own.execute("PRAGMA synchronous = NORMAL")
        return own
    }

    /// What a failure says, beside the store's path.
    static func describe(_ error: any Error, path: String) -> String {
        "\(path): cannot copy its write-ahead log into the file (a checkpoint): \(error); its commits stand in the log, which grows until this is fixed"
    }
}

/// What a store's background checkpoints share with its committing thread (under `LogCheckpoints.lock`).
private struct Shared {
    /// Asked of the flusher, and not ended yet.
    var inFlight = false
    /// Running on the flusher now.
    var running = false
    var failure: (any Error)?
    var counts = LogCheckpoints.Counts()
}
