import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where explore plays its days: one private folder per explore (mode 0700, a name no one can guess, made by
/// `mkdtemp`), with a folder per day inside it, all removed at the end.
///
/// A day makes and removes a few dozen files — stores, write-ahead logs, sockets, the journal — and none outlives its
/// judgement, so by default the folder is in memory (`/dev/shm`, a tmpfs): on a disk file system each file created
/// where others were just deleted makes the kernel search past the recently freed inodes (docs/explore.md, "Where a
/// day's time goes"). Nothing explore judges depends on the disk: a broker killed mid-day resumes from what its stores hold, which
/// memory keeps as well.
public struct DayFolders: Sendable {
    /// The explore's own folder.
    public let path: String

    public enum Problem: Error, CustomStringConvertible {
        case cannotCreate(base: String, errno: Int32)

        public var description: String {
            switch self {
            case .cannotCreate(let base, let number):
                return "cannot make a folder for the days in \(base): \(String(cString: strerror(number))) (choose another with --work-dir)"
            }
        }
    }

    /// Makes the folder under `base`, or under `defaultBase()` when nil.
    public init(under base: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let parent = base ?? Self.defaultBase(environment: environment)
        var template = Array((parent.hasSuffix("/") ? parent : parent + "/").utf8CString.dropLast()) + Array("shieldbus-explore-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Problem.cannotCreate(base: parent, errno: errno)
        }
        path = String(cString: made)
    }

    /// `TMPDIR` when it is set (the person chose it); otherwise `/dev/shm` when it is a tmpfs this process can write
    /// in; otherwise `/tmp`.
    public static func defaultBase(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let chosen = environment["TMPDIR"], !chosen.isEmpty { return chosen }
        let memory = "/dev/shm"
        if isWritableTmpfs(memory) { return memory }
        return "/tmp"
    }

    /// Whether `path` is the mount point of a tmpfs (read from the mount table) that this process can write in.
    static func isWritableTmpfs(_ path: String, mounts: String? = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) -> Bool {
        guard access(path, W_OK | X_OK) == 0, let mounts else { return false }
        return mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 && fields[1] == path && fields[2] == "tmpfs"
        }
    }

    /// Removes the folder and every day in it.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
