// LogStart: a store's write-ahead log started when the store is opened or after a checkpoint copied it, so no owner's commit waits for the flush of its header.
import Foundation

extension SQLiteConnection {
    /// Starts the store's write-ahead log now when it is there and empty. In WAL mode with `synchronous = NORMAL` a
    /// commit flushes nothing, except the first one into an empty log: SQLite flushes the log's new header, and a
    /// connection's first flush also flushes the folder the log's name is in. On a plugin's record of handled events
    /// that first commit is its first event's, which the broker's turn waits for; started at open, the two flushes
    /// come while the process starts beside the others. The start rewrites `user_version` with the value it holds,
    /// under the write lock (another process may be setting the schema up): a commit that changes nothing the store
    /// holds and that no `CommitTally` counts. A log with frames, or no log (a store not in WAL mode), is left alone,
    /// and so is one whose write lock another process holds: its commit starts the log, and a start never waits for it.
    public func startEmptyLog() throws {
        guard FileSize.of(path + "-wal") == 0 else { return }
        try startLogNow()
    }

    /// Starts the log again from its start now, after a checkpoint copied all of it: the first commit after such a
    /// checkpoint writes the log's new header and flushes it. Taken by the same commit as `startEmptyLog`'s, off the
    /// path of the owner's next commit — a plugin handling an event, the broker saving — which a turn waits for
    /// (`LogCheckpoints`). When another connection still reads from the log, SQLite cannot start it again and the
    /// commit only adds its one frame; when another holds the write lock, nothing is done.
    public func startCopiedLog() throws { try startLogNow() }

    /// The commit that starts a log: `user_version` rewritten with the value it holds, never waiting for a lock.
    private func startLogNow() throws {
        do {
            try withoutWaiting { try transaction(.immediate) { try execute("PRAGMA user_version = \(try userVersion())") } }
        } catch SQLiteError.busy {
            return
        }
    }
}
