// StoreCreation: a new store made whole under a name of its own, flushed once and put in place, so that no half-made
// store is ever found at a store's path.
import Foundation
import Synchronization

/// Makes a store file that is not there yet: in WAL mode, with its pages and schema, flushed to the disk once.
///
/// SQLite would make it in place: the switch to WAL is a rollback-journal commit (its journal flushed twice, the
/// folder and the file once each), and the schema's commit starts the log (its header and the folder flushed): six
/// flushes before the store's first own write, on every store a fresh device makes (the device's, the delivery store,
/// each App Group's, each plugin's record of handled events), and a power cut among them can leave a half-made file
/// at the store's name, which the next open refuses as damaged. Here the file is built beside the store under a name
/// of this process's own with `synchronous = OFF` (no flush), flushed once when whole (`fdatasync`), and linked to the
/// store's name. The crash model holds (architecture.md § 7: a power cut may lose a store's last commits, never its
/// consistency): a power cut while it is built leaves only the scratch name, and the store is made again at the next
/// open; the name's link is not flushed here, because the store's first commit flushes the folder anyway (SQLite
/// syncs the folder of a log it creates, with the log's header) — until then no commit of the store is on the disk,
/// and a link lost to a power cut loses only a store with nothing in it, made again at the next open. That first
/// commit starts the log as every store's does: three flushes in all instead of six.
public enum StoreCreation {
    /// A new scratch file's name beside `path`: never a store's name, and a fresh run's clean-up of device state
    /// (`device.sqlite*`, the stores' folders) removes one a power cut left. Random, not the pid: every sandboxed
    /// plugin is pid 1 in its own namespace, and two processes of one plugin may make its record at once.
    static func scratchPath(for path: String) -> String { path + ".making-" + String(UInt64.random(in: 1...UInt64.max), radix: 16) }

    /// Makes the store at `path` with `schema` (SQL run in one transaction; a schema kept at a version sets its
    /// `user_version` in it) and `pageSize` (SQLite's default when nil), unless a file is already there: built, or
    /// written from the bytes of the same recipe's build when this process remembers them (`remember`). Returns
    /// whether it made it: false when one was there, or another process put its own there first (that one is the
    /// store). Errors are `SQLiteError`s, a refusing storage classified as SQLite classifies it.
    @discardableResult
    public static func makeIfMissing(at path: String, pageSize: Int? = nil, schema: String) throws -> Bool {
        if exists(path) { return false }
        let scratch = scratchPath(for: resolvingFolder(of: path))
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(scratch + suffix) } }
        // Made here, never opened if there (`O_EXCL`), and held: what is flushed and linked is this file, whatever a
        // process that can write the folder puts at the scratch name meanwhile.
        let made = open(scratch, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard made >= 0 else { throw SQLiteError.making(path, errno: errno, what: "cannot make the new store beside it (\(scratch))") }
        defer { close(made) }
        if let bytes = remembered.withLock({ $0[Recipe(pageSize: pageSize, schema: schema)] }) {
            guard write(bytes, to: made) else { throw SQLiteError.making(path, errno: errno, what: "cannot write the new store beside it (\(scratch))") }
        } else {
            try build(scratch, pageSize: pageSize, schema: schema)
        }
        guard isStill(made, at: scratch) else {
            throw SQLiteError.making(path, errno: EEXIST, what: "the new store was replaced by another file while it was made")
        }
        guard fdatasync(made) == 0 else { throw SQLiteError.making(path, errno: errno, what: "cannot flush the new store") }
        // A link, not a rename: a store another process put there meanwhile is never replaced. Linked through the
        // descriptor where /proc is there (the file held itself), else by the scratch name just checked.
        let linked = linkat(AT_FDCWD, "/proc/self/fd/\(made)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0
            || (errno == ENOENT && isStill(made, at: scratch) && link(scratch, path) == 0)
        guard linked else {
            if errno == EEXIST { return false }
            throw SQLiteError.making(path, errno: errno, what: "cannot put the new store in place")
        }
        return true
    }

    /// A store's page size and schema: what decides the bytes `build` makes (the same SQLite makes the same file).
    private struct Recipe: Hashable {
        let pageSize: Int?
        let schema: String
    }

    /// The bytes `build` made for each recipe `remember` was given, which every later store of that recipe made in
    /// this process is written from: a process that makes a fresh device's stores again and again (a broker template
    /// of `shieldbus explore`, whose every day starts with new ones) builds each kind once rather than in each day.
    private static let remembered = Mutex<[Recipe: [UInt8]]>([:])
    /// Bounds on what is remembered: a new store is a few pages, and a process makes a few kinds.
    static let largestRemembered = 256 * 1024
    static let mostRemembered = 16

    /// Builds a store of `schema` and `pageSize` once, at a scratch name in `folder` removed at once, and remembers its
    /// bytes, so that `makeIfMissing` writes each later store of the same recipe from them instead of building it.
    /// A store larger than `largestRemembered`, or past `mostRemembered` recipes, is not remembered (it is built).
    public static func remember(pageSize: Int? = nil, schema: String, in folder: String) throws {
        let scratch = scratchPath(for: resolvingFolder(of: folder + "/store"))
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(scratch + suffix) } }
        let made = open(scratch, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard made >= 0 else { throw SQLiteError.making(scratch, errno: errno, what: "cannot make a store to remember") }
        close(made)
        try build(scratch, pageSize: pageSize, schema: schema)
        guard let bytes = FileManager.default.contents(atPath: scratch), bytes.count <= largestRemembered else { return }
        remembered.withLock { remembered in
            if remembered.count < mostRemembered { remembered[Recipe(pageSize: pageSize, schema: schema)] = [UInt8](bytes) }
        }
    }

    /// Writes all of `bytes` at the start of the empty file `descriptor`; false (errno set) when it cannot.
    private static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + written, $0.count - written, off_t(written)) }
            if count < 0, errno == EINTR { continue }
            // A write of nothing to a file leaves no errno of its own: said as an I/O error, not a stale one.
            if count == 0 { errno = EIO }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }

    /// Builds the store at `scratch` with no flush: its log is copied into the file (a checkpoint that must copy every
    /// frame: one that could not — a full disk — would leave the schema in a log this creation then removes) before
    /// its connection closes. Kept to this connection (`locking_mode = EXCLUSIVE` before WAL is first used), the
    /// log's index stays in memory: no shared-memory file is made. A symbolic link put at the name is not followed.
    private static func build(_ scratch: String, pageSize: Int?, schema: String) throws {
        let connection = try SQLiteConnection(path: scratch, flags: [.readWrite, .noFollow], pageSize: pageSize)
        try connection.execute("PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE")
        let statement = try connection.prepare("PRAGMA journal_mode = WAL")
        let mode = try statement.step() ? try statement.string(at: 0) : nil
        statement.reset()
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError.journalModeRejected(requested: "wal", actual: mode ?? "none", path: scratch)
        }
        try connection.transaction(.exclusive) { try connection.execute(schema) }
        let checkpoint = try connection.prepare("PRAGMA wal_checkpoint(TRUNCATE)")
        guard try checkpoint.step(), try checkpoint.int64(at: 0) == 0, try checkpoint.int64(at: 1) == checkpoint.int64(at: 2) else {
            throw SQLiteError.making(scratch, errno: EIO, what: "cannot copy the new store's log into it")
        }
        checkpoint.reset()
    }

    /// Whether `name` is still the regular file `descriptor` holds (not another file, nor a link to one).
    private static func isStill(_ descriptor: Int32, at name: String) -> Bool {
        var held = stat(), found = stat()
        return fstat(descriptor, &held) == 0 && lstat(name, &found) == 0 && (found.st_mode & S_IFMT) == S_IFREG
            && found.st_dev == held.st_dev && found.st_ino == held.st_ino
    }

    /// `path` with its folder's symbolic links resolved (as given when it cannot be): SQLite's `NOFOLLOW` refuses a link
    /// anywhere in a path, and a store's folder may be reached through one. A link put in it after this is refused.
    private static func resolvingFolder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex,
              let resolved = realpath(String(path[..<slash]), nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved) + String(path[slash...])
    }

    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }
}
