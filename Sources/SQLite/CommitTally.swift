import Foundation

/// A store that lost transactions it had committed: its write-ahead log (`-wal`), which held them until a
/// checkpoint, was deleted, zeroed, cut or damaged — SQLite then opens the file without a word, older.
public struct LostCommits: Error, CustomStringConvertible, Sendable {
    public let path: String
    /// How far the file's own count goes, and how far the note beside it says it went.
    public let stored: Int64
    public let noted: Int64

    public var description: String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return "it holds \(stored) committed writes, but \(noted) were committed: its write-ahead log (\(name)-wal) was deleted or damaged"
    }
}

/// `<store>-committed`: a number that only grows — a store's last committed change or write — written beside it
/// after each commit. A store whose own count ends before it lost committed writes.
///
/// Several processes may note into one file at once (an App Group's writers), so every access holds the file's
/// `flock` and a note only ever raises the number: unlocked, one writer's shorter number written over another's
/// longer one leaves digits of both ("8" over "10" reads "80") — a number nobody committed, ahead of the store, and a
/// sound store refused as damaged. Written without a sync: a crash may leave it behind the store (which proves
/// nothing wrong), never ahead of it; one unreadable says nothing either.
public enum CommitNote {
    public static func path(besides store: String) -> String { store + "-committed" }

    /// Fixed width, so a note never has to shorten the file.
    private static let width = 20

    public static func read(besides store: String) -> Int64? {
        let descriptor = open(path(besides: store), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_SH) == 0 else { return nil }
        return number(in: descriptor)
    }

    public static func note(_ number: Int64, besides store: String) {
        let descriptor = open(path(besides: store), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { return }
        if let noted = Self.number(in: descriptor), noted >= number { return }
        let digits = String(number)
        let bytes = Array((String(repeating: "0", count: max(0, width - digits.count)) + digits).utf8)
        _ = pwrite(descriptor, bytes, bytes.count, 0)
    }

    private static func number(in descriptor: Int32) -> Int64? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int64(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// How many write transactions a store has committed, counted in the file itself (table `commit_tally`) and noted
/// beside it after each commit (`CommitNote`), so that a store which lost committed writes with its write-ahead
/// log is refused at its next open (`LostCommits`) instead of being taken, older, as it is.
///
/// For stores with one writer at a time (the broker's `device.sqlite` and `bus.sqlite`, a plugin's cursor record).
/// The App-Group stores, written by many processes, check their change log's numbers against the same note.
public final class CommitTally {
    public let path: String
    private let connection: SQLiteConnection
    private var count: Int64
    /// Whether the file has the tally's table (made with the first counted write).
    private var made: Bool

    /// Counts `connection`'s writes from now on (a store made before the tally starts at 0), and throws
    /// `LostCommits` when the note beside the file says more writes were committed than the file holds. Writes
    /// nothing: open it before setting up the store's schema, which a lost log may have taken too.
    public init(connection: SQLiteConnection, path: String) throws {
        self.connection = connection
        self.path = path
        made = try connection.withStatement("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'commit_tally'") {
            try $0.step() && (try $0.int64(at: 0) ?? 0) > 0
        }
        count = made ? try connection.withStatement("SELECT n FROM commit_tally WHERE id = 1") { try $0.step() ? try $0.int64(at: 0) ?? 0 : 0 } : 0
        if let noted = CommitNote.read(besides: path), noted > count {
            throw LostCommits(path: path, stored: count, noted: noted)
        }
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`) that counts itself, then notes the count.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        let next = count + 1
        let result = try connection.transaction(.immediate) {
            let result = try body()
            if !made { try connection.execute("CREATE TABLE IF NOT EXISTS commit_tally (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)") }
            try connection.withStatement("INSERT INTO commit_tally (id, n) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET n = excluded.n",
                                         bindings: [.integer(next)]) { try $0.run() }
            return result
        }
        count = next
        made = true
        CommitNote.note(next, besides: path)
        return result
    }
}
