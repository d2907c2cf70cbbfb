import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where explore plays its days: one private folder per explore (mode 0700, a name no one can guess, made by
/// `mkdtemp`), with a folder per worker (or per executed day) inside it, all removed at the end — and when the explore is stopped by SIGINT or
/// SIGTERM (`ExploreCommand`).
///
/// A day makes and removes a few dozen files — stores, write-ahead logs, sockets, the journal — and none outlives its
/// judgement, so by default the folder is in memory (`/dev/shm`, a tmpfs): on a disk file system each file created
/// where others were just deleted makes the kernel search past the recently freed inodes (docs/explore.md, "Where a
/// day's time goes"). Nothing explore judges depends on the disk: a broker killed mid-day resumes from what its stores hold, which
/// memory keeps as well. A `/dev/shm` too small for the days played at once (Docker gives a container 64 MB) is
/// passed over for `/tmp`: a day that runs out of room there would be judged on a full disk, not on the product.
public struct DayFolders: Sendable {
    /// The explore's own folder.
    public let path: String
    /// Why it is where it is, for the explore's first line.
    public let choice: String

    public enum Problem: Error, CustomStringConvertible {
        case cannotCreate(base: String, errno: Int32)

        public var description: String {
            switch self {
            case .cannotCreate(let base, let number):
                return "cannot make a folder for the days in \(base): \(String(cString: strerror(number))) (choose another with --work-dir)"
            }
        }
    }

    /// Makes the folder under `base`, or under the default base (`chooseBase`) when nil.
    public init(under base: String? = nil, daysAtOnce: Int = 1, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let chosen = base.map { Base(path: $0, why: "--work-dir") } ?? Self.chooseBase(environment: environment, daysAtOnce: daysAtOnce)
        let parent = chosen.path
        var template = Array((parent.hasSuffix("/") ? parent : parent + "/").utf8CString.dropLast()) + Array("shieldbus-explore-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Problem.cannotCreate(base: parent, errno: errno)
        }
        path = String(cString: made)
        choice = chosen.why
    }

    /// A folder the days may go in, and why it was chosen.
    public struct Base: Equatable, Sendable {
        public let path: String
        public let why: String
    }

    /// Room a day played at once may take in memory: its stores' write-ahead logs grow to about 4 MB each before a
    /// checkpoint, and a journal and logs come with them.
    public static let roomPerDay: UInt64 = 32 << 20

    /// `TMPDIR` when it is set (the person chose it); otherwise `/dev/shm` when it is a tmpfs this process can write
    /// in with `roomPerDay` free for each of `daysAtOnce`; otherwise `/tmp`.
    public static func defaultBase(environment: [String: String] = ProcessInfo.processInfo.environment, daysAtOnce: Int = 1) -> String {
        chooseBase(environment: environment, daysAtOnce: daysAtOnce).path
    }

    static func chooseBase(environment: [String: String], daysAtOnce: Int,
                           mounts: String? = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8),
                           freeBytes: (String) -> UInt64? = availableBytes) -> Base {
        if let chosen = environment["TMPDIR"], !chosen.isEmpty { return Base(path: chosen, why: "TMPDIR") }
        let memory = "/dev/shm"
        guard isWritableTmpfs(memory, mounts: mounts) else { return Base(path: "/tmp", why: "\(memory) is not a tmpfs this can write in") }
        let needed = roomPerDay * UInt64(max(1, daysAtOnce))
        guard let free = freeBytes(memory) else { return Base(path: "/tmp", why: "the free space of \(memory) cannot be read") }
        guard free >= needed else {
            return Base(path: "/tmp", why: "\(memory) has \(megabytes(free)) free, less than the \(megabytes(needed)) of \(daysAtOnce) day(s) at once")
        }
        return Base(path: memory, why: "in memory, \(megabytes(free)) free")
    }

    private static func megabytes(_ bytes: UInt64) -> String { "\(bytes >> 20) MB" }

    /// The bytes an unprivileged process may still write under `path` (`statvfs`), nil when it cannot be read.
    static func availableBytes(_ path: String) -> UInt64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize)
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
