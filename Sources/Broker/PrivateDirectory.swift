import Foundation

/// Why a folder cannot hold the broker's private files.
public enum PrivateDirectoryError: Error, Equatable, CustomStringConvertible {
    case cannotCreate(what: String, path: String, reason: String)
    case ownedByAnotherUser(what: String, path: String, owner: UInt32)
    /// Group or others may write it: they could have planted files (a socket, a store) before the broker came.
    case writableByOthers(what: String, path: String, mode: Int)
    case notADirectory(what: String, path: String)

    public var description: String {
        switch self {
        case let .cannotCreate(what, path, reason):
            return "cannot create the \(what) \(path): \(reason)"
        case let .ownedByAnotherUser(what, path, owner):
            return "the \(what) \(path) belongs to user \(owner), not to you (\(getuid())); refusing to use it — choose another folder"
        case let .writableByOthers(what, path, mode):
            return "the \(what) \(path) has mode \(String(mode, radix: 8)): other users can write in it, so they could have planted files there; refusing to start — `chmod 700 \(path)` after checking its contents, or choose a new folder"
        case let .notADirectory(what, path):
            return "the \(what) \(path) exists and is not a folder"
        }
    }
}

/// A folder only its owner can enter (0700): created so, or an existing one of ours that nobody else can write
/// (its read and search bits for others are then taken away).
public enum PrivateDirectory {
    /// Creates `path` (and missing parents) or checks the existing folder; `what` names it in errors.
    public static func claim(_ path: String, what: String) throws {
        var info = stat()
        if lstat(path, &info) != 0 {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw PrivateDirectoryError.cannotCreate(what: what, path: path, reason: (error as NSError).localizedDescription)
            }
            guard lstat(path, &info) == 0 else {
                throw PrivateDirectoryError.cannotCreate(what: what, path: path, reason: String(cString: strerror(errno)))
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw PrivateDirectoryError.notADirectory(what: what, path: path) }
        guard info.st_uid == getuid() else { throw PrivateDirectoryError.ownedByAnotherUser(what: what, path: path, owner: info.st_uid) }
        let mode = Int(info.st_mode & 0o7777)
        guard mode & 0o022 == 0 else { throw PrivateDirectoryError.writableByOthers(what: what, path: path, mode: mode) }
        if mode & 0o777 != 0o700 && chmod(path, 0o700) != 0 {
            throw PrivateDirectoryError.cannotCreate(what: what, path: path, reason: "chmod 700: \(String(cString: strerror(errno)))")
        }
    }

    /// Makes every regular file directly in `path` (and in its subfolders, to `depth`) readable by its owner only:
    /// stores and journals an earlier run may have left with wider modes.
    public static func restrictFiles(in path: String, depth: Int = 1) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names {
            let child = path + "/" + name
            var info = stat()
            guard lstat(child, &info) == 0, info.st_uid == getuid() else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFREG, S_IFSOCK: if info.st_mode & 0o077 != 0 { chmod(child, 0o600) }
            case S_IFDIR where depth > 0:
                if info.st_mode & 0o077 != 0 { chmod(child, 0o700) }
                restrictFiles(in: child, depth: depth - 1)
            default: break
            }
        }
    }
}
