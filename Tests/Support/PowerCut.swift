import Foundation
import SQLite

/// What a power cut under `synchronous = NORMAL` can leave on the disk (architecture.md § 7): a store whose last
/// commits never reached it, its commit note from the boot before still counting them.
public enum PowerCut {
    /// Sets each of `stores` back by two commits: everything into its main file first, then its note two commits
    /// ahead, from another boot, beside a write-ahead log with a whole header and no frames.
    public static func setBack(_ stores: [String]) throws {
        // A log's header as SQLite writes it: a scratch store's, taken while its connection holds the log.
        let scratch = TemporaryDirectory(prefix: "sbpowercut")
        let holder = try SQLiteConnection(path: scratch.path + "/scratch.sqlite")
        try holder.enableWAL()
        try holder.execute("CREATE TABLE t (n INTEGER)")
        guard let header = FileManager.default.contents(atPath: scratch.path + "/scratch.sqlite-wal")?.prefix(32) else {
            throw Failure(description: "SQLite wrote no write-ahead log for a scratch store")
        }
        for store in stores {
            try SQLiteConnection(path: store).execute("PRAGMA wal_checkpoint(TRUNCATE)")
            guard let noted = try CommitNote.read(besides: store) else { throw Failure(description: "\(store) has no commit note") }
            try "\(noted + 2) 00000000-0000-0000-0000-000000000000\n".write(toFile: CommitNote.path(besides: store), atomically: false, encoding: .utf8)
            try header.write(to: URL(fileURLWithPath: store + "-wal"))
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }
}
