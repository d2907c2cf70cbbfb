import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What follows each commit of a store in WAL mode under `synchronous = NORMAL`: its note (`CommitNote`), its
/// checkpoints when it is given the store's connection (`LogCheckpoints`: off the committing thread), and a flush
/// of its write-ahead log to the disk owed at every `syncInterval`-th commit — at most one flush per `minimumFlushGap`
/// by each connection to the store (a flush costs milliseconds on a disk: a store committing faster is flushed once a
/// second, at its first commit after the gap) — so that a power cut or an operating-system crash loses at most the last
/// `syncInterval - 1` commits, or about a second's in a store committing faster, plus those made while a flush runs
/// (docs/architecture.md § 7).
///
/// The flush runs on the process's `LogFlusher`, not on the committing thread: a commit never waits for the disk. At
/// most one flush of a connection is in flight; one owed meanwhile runs right after it. A note, a flush or a checkpoint
/// that fails leaves the commit standing; the failure is kept, and said once through `onFailure` — always on the
/// committing thread (a flush's or a background checkpoint's at the next commit after it failed) — until a later one of
/// its kind succeeds.
///
/// Used by one thread at a time (the store's owner); only what the flusher sets is under `lock`.
public final class CommitFollowUp: @unchecked Sendable {
    /// Commits between two flushes of the log: every commit whose number is a multiple of it owes one. Counted by the
    /// store's own numbers, so a store with many writers (an app group) is bounded as a whole, not per process.
    public static let syncInterval: Int64 = 32
    /// The least time between two flushes by one connection to the store (seconds).
    public static let minimumFlushGap: TimeInterval = 1

    public let path: String
    /// The note, kept open from the first commit on.
    private lazy var note = CommitNoteFile(besides: path, timeout: lockTimeout, soleWriter: soleWriter)
    /// Whether this connection is the store's only writer while it lives (`CommitNoteFile.soleWriter`).
    private let soleWriter: Bool
    private let lockTimeout: TimeInterval
    /// Seconds on a clock that never steps (`systemUptime`); a test sets its own.
    private let now: () -> TimeInterval
    private let flusher: LogFlusher
    private var lastFlush: TimeInterval?
    /// A multiple of `syncInterval` passed within the gap, or a flush that failed: flushed at the first commit after it.
    private var flushOwed = false
    /// Why the last note failed; nil once one is written again.
    private var noteFailure: (any Error)?
    /// Whether the standing flush failure was said.
    private var flushFailureSaid = false
    /// The store's checkpoints, when its connection was given.
    public let checkpoints: LogCheckpoints?
    /// Whether the standing checkpoint failure was said.
    private var checkpointFailureSaid = false

    private let lock = NSLock()
    /// What the flusher shares with the committing thread.
    private var flushing = FlushState()

    /// Why the last note, flush or checkpoint failed; nil once each succeeds again.
    public var failure: (any Error)? { noteFailure ?? lock.withLock { flushing.failure } ?? checkpoints?.failure }
    /// The last commit whose log this process flushed to the disk (0 before the first): the commit that owed the
    /// flush, set when the flush is done.
    public var syncedThrough: Int64 { lock.withLock { flushing.syncedThrough } }
    /// Told once when notes, flushes or checkpoints start failing (a failure already standing is told as soon as this is set).
    public var onFailure: ((String) -> Void)? {
        didSet {
            guard onFailure != nil else { return }
            if let noteFailure {
                onFailure?(Self.describe(noteFailure, path: path))
            } else if let flushFailure = lock.withLock({ flushing.failure }) {
                flushFailureSaid = true
                onFailure?(Self.describe(flushFailure, path: path))
            } else {
                sayCheckpointFailure()
            }
        }
    }

    /// `connection`, when given, is the store's, whose checkpoints this takes over (`LogCheckpoints`), owed past
    /// `checkpointLimit` frames (by default its schedule's soft limit).
    public init(path: String, lockTimeout: TimeInterval = CommitNote.lockTimeout, soleWriter: Bool = false, checkpointing connection: SQLiteConnection? = nil,
                checkpointLimit: Int? = nil, flusher: LogFlusher = .shared,
                now: @escaping () -> TimeInterval = { ProcessInfo.processInfo.systemUptime }) {
        self.path = path
        self.lockTimeout = lockTimeout
        self.soleWriter = soleWriter
        self.flusher = flusher
        self.now = now
        checkpoints = connection.map { LogCheckpoints(connection: $0, flusher: flusher, softLimit: checkpointLimit, now: now) }
    }

    /// After a commit that took the store's numbers from `previous` (exclusive) to `number`.
    public func committed(through number: Int64, after previous: Int64) {
        if number / Self.syncInterval > max(0, previous) / Self.syncInterval { flushOwed = true }
        sayFlushFailure()
        sayCheckpointFailure()
        if flushOwed, lastFlush.map({ now() - $0 >= Self.minimumFlushGap }) ?? true {
            (lastFlush, flushOwed) = (now(), false)
            requestFlush(through: number)
        }
        // The note is written whatever the flush does: a log that cannot be flushed must not also leave a lost log
        // unnoticed.
        do {
            try note.note(number)
            noteFailure = nil
        } catch {
            let first = noteFailure == nil
            noteFailure = error
            if first { onFailure?(Self.describe(error, path: path)) }
        }
    }

    /// A flush of the log through `number`: started now, or right after the one in flight.
    private func requestFlush(through number: Int64) {
        let start = lock.withLock {
            if flushing.inFlight {
                flushing.owed = number
                return false
            }
            flushing.inFlight = true
            return true
        }
        if start { flusher.run { self.flush(through: number) } }
    }

    /// On the flusher: flushes the log, then the one owed meanwhile, if any.
    private func flush(through number: Int64) {
        var next: Int64? = number
        while let through = next {
            var problem: (any Error)?
            do { try WriteAheadLog.flush(besides: path) } catch { problem = error }
            next = lock.withLock {
                if let problem {
                    flushing.failure = problem
                    flushing.retry = true
                } else {
                    flushing.failure = nil
                    flushing.syncedThrough = max(flushing.syncedThrough, through)
                }
                let owed = flushing.owed
                flushing.owed = nil
                if owed == nil { flushing.inFlight = false }
                return owed
            }
        }
    }

    /// Says a flush failure the flusher found, once; owes a flush again so that the next commit past the gap retries it.
    private func sayFlushFailure() {
        let (failure, retry) = lock.withLock {
            let seen = (flushing.failure, flushing.retry)
            flushing.retry = false
            return seen
        }
        if retry { flushOwed = true }
        guard let failure else {
            flushFailureSaid = false
            return
        }
        guard !flushFailureSaid else { return }
        flushFailureSaid = true
        onFailure?(Self.describe(failure, path: path))
    }

    /// Says a checkpoint failure once, until a checkpoint succeeds.
    private func sayCheckpointFailure() {
        guard let failure = checkpoints?.failure else {
            checkpointFailureSaid = false
            return
        }
        guard !checkpointFailureSaid else { return }
        checkpointFailureSaid = true
        onFailure?(LogCheckpoints.describe(failure, path: path))
    }

    static func describe(_ error: any Error, path: String) -> String {
        "\(path): \(error); its commits stand, but until this is fixed a lost write-ahead log or a power cut may go unnoticed or lose more"
    }
}

/// What a connection's flushes share with the flusher's thread (under `CommitFollowUp.lock`).
private struct FlushState {
    var inFlight = false
    /// A flush asked for while one was in flight: the commit it is through.
    var owed: Int64?
    var syncedThrough: Int64 = 0
    var failure: (any Error)?
    /// A flush failed since the committing thread last looked: it owes one again.
    var retry = false
}

/// Where a process's log flushes run: one serial queue for all its stores, so a commit never waits for the disk, and
/// flushes never pile up beyond one in flight and one owed per store.
public final class LogFlusher: Sendable {
    public static let shared = LogFlusher(label: "shieldbus.log-flusher")
    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label, qos: .utility)
    }

    public func run(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
}

/// The write-ahead log beside a store (`<store>-wal`).
enum WriteAheadLog {
    /// Flushes the log to the disk (`fsync`): every commit in it survives a power cut from now on. A store without a
    /// log (none yet, or not in WAL mode) has nothing to flush.
    static func flush(besides store: String) throws {
        let log = store + "-wal"
        let descriptor = open(log, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return }
            throw CommitSyncFailed(path: log, errno: errno)
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw CommitSyncFailed(path: log, errno: errno) }
    }
}

/// A store's write-ahead log could not be flushed to the disk.
public struct CommitSyncFailed: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let errno: Int32

    public var description: String { "cannot flush \(path) to the disk: \(String(cString: strerror(errno)))" }
}
