import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What follows each commit of a store in WAL mode under `synchronous = NORMAL`: its note (`CommitNote`), and a flush
/// of its write-ahead log to the disk at every `syncInterval`-th commit — at most one flush per `minimumFlushGap` by
/// each connection to the store (a flush costs milliseconds on a disk: a store committing faster is flushed once a
/// second, at its first commit after the gap) — so that a power cut or an operating-system crash loses at most the last `syncInterval - 1`
/// commits, or about a second's in a store committing faster (docs/architecture.md § 7). A note or a flush that fails
/// leaves the commit standing; the failure is kept, and said once through `onFailure` until a later one succeeds.
public final class CommitFollowUp {
    /// Commits between two flushes of the log: every commit whose number is a multiple of it flushes. Counted by the
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
    private var lastFlush: TimeInterval?
    /// A multiple of `syncInterval` passed within the gap: flushed at the first commit after it.
    private var flushOwed = false
    /// Why the last note or flush failed; nil once one succeeds again.
    public private(set) var failure: (any Error)?
    /// The last commit whose log this process flushed to the disk (0 before the first).
    public private(set) var syncedThrough: Int64 = 0
    /// Told once when notes or flushes start failing (a failure already standing is told as soon as this is set).
    public var onFailure: ((String) -> Void)? {
        didSet { if let failure, let onFailure { onFailure(Self.describe(failure, path: path)) } }
    }

    public init(path: String, lockTimeout: TimeInterval = CommitNote.lockTimeout, soleWriter: Bool = false,
                now: @escaping () -> TimeInterval = { ProcessInfo.processInfo.systemUptime }) {
        self.path = path
        self.lockTimeout = lockTimeout
        self.soleWriter = soleWriter
        self.now = now
    }

    /// After a commit that took the store's numbers from `previous` (exclusive) to `number`.
    public func committed(through number: Int64, after previous: Int64) {
        if number / Self.syncInterval > max(0, previous) / Self.syncInterval { flushOwed = true }
        // The note is written whatever the flush did: a log that cannot be flushed must not also leave a lost log
        // unnoticed. A failed flush is tried again at the next commit past the gap.
        var problem: (any Error)?
        if flushOwed, lastFlush.map({ now() - $0 >= Self.minimumFlushGap }) ?? true {
            lastFlush = now()
            do {
                try WriteAheadLog.flush(besides: path)
                (syncedThrough, flushOwed) = (number, false)
            } catch { problem = error }
        }
        do { try note.note(number) } catch { problem = problem ?? error }
        guard let problem else {
            failure = nil
            return
        }
        let first = failure == nil
        failure = problem
        if first { onFailure?(Self.describe(problem, path: path)) }
    }

    static func describe(_ error: any Error, path: String) -> String {
        "\(path): \(error); its commits stand, but until this is fixed a lost write-ahead log or a power cut may go unnoticed or lose more"
    }
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
