import Foundation

/// The files that make up one store: the database, its write-ahead log, its shared-memory index and its commit note.
public enum StoreFiles {
    /// What follows a store's path for each of its files, the database last.
    public static let suffixes = ["-wal", "-shm", CommitNote.suffix, ""]

    /// A store found at two places: which one is the device's is its owner's choice.
    public struct FoundTwice: Error, CustomStringConvertible {
        public let old: String
        public let new: String
        public var description: String {
            "the store \(old) is also at \(new): keep the one that is the device's and remove the other"
        }
    }

    /// Moves the store at `path` (every one of its files that exists) to `destination`, making its folder (mode 0700);
    /// `FoundTwice` when a store is there already. The log and its note go first: if the move is cut short, the store
    /// is still found where it was and moved again, never found without its log (it would be read as older). Call it
    /// only while no process has the store open.
    public static func move(_ path: String, to destination: String) throws {
        guard !FileManager.default.fileExists(atPath: destination) else { throw FoundTwice(old: path, new: destination) }
        try FileManager.default.createDirectory(atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for suffix in suffixes where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.moveItem(atPath: path + suffix, toPath: destination + suffix)
        }
    }

    /// The names in `folder` of the stores it holds itself (regular files named `<name><fileExtension>`, not folders
    /// or links), without the extension.
    public static func stores(in folder: String, fileExtension: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(fileExtension) && isRegularFile(folder + "/" + $0) }
            .map { String($0.dropLast(fileExtension.count)) }
    }

    /// Whether `path` is a regular file itself (a symbolic link is not followed).
    public static func isRegularFile(_ path: String) -> Bool { type(of: path) == S_IFREG }

    /// Whether `path` is a folder itself (a symbolic link is not followed).
    public static func isFolder(_ path: String) -> Bool { type(of: path) == S_IFDIR }

    /// Whether `path` is a symbolic link.
    public static func isSymbolicLink(_ path: String) -> Bool { type(of: path) == S_IFLNK }

    /// The kind of file `path` names itself (`S_IFREG`, `S_IFDIR`, …), nil if nothing is there.
    private static func type(of path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : nil
    }
}
