import Foundation

/// The files that make up one store: the database, its write-ahead log, its shared-memory index and its commit note.
public enum StoreFiles {
    /// What follows a store's path for each of its files, the database last.
    static let suffixes = ["-wal", "-shm", CommitNote.suffix, ""]

    /// Moves the store at `path` (every one of its files that exists) to `destination`, whose folder must exist. The
    /// log and its note go first: if the move is cut short, the store is still found where it was and moved again,
    /// never found without its log (it would be read as older). Call it only while no process has the store open.
    public static func move(_ path: String, to destination: String) throws {
        for suffix in suffixes where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.moveItem(atPath: path + suffix, toPath: destination + suffix)
        }
    }
}
