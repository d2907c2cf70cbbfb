// CommittedChanges: the number of the last change committed to a store, kept beside it to notice a lost log.
import Foundation

/// `<store>-committed`: the highest change number any writer committed, noted after each commit. A store whose log
/// ends before it lost committed changes (its `-wal` was deleted or zeroed).
///
/// Many processes note into one file at once, so every access holds the file's `flock` and a note only ever raises
/// the number: unlocked, one writer's shorter number written over another's longer one leaves digits of both ("8"
/// over "10" reads "80") — a number no writer committed, ahead of the store, and a sound store refused as damaged.
/// Written without a sync: a crash may leave it behind the store (which proves nothing wrong), never ahead of it;
/// one unreadable says nothing either.
enum CommittedChanges {
    static func path(besides store: String) -> String { store + "-committed" }

    /// Fixed width, so a note never has to shorten the file.
    private static let width = 20

    static func read(besides store: String) -> Int64? {
        let descriptor = open(path(besides: store), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_SH) == 0 else { return nil }
        return number(in: descriptor)
    }

    static func note(_ change: Int64, besides store: String) {
        let descriptor = open(path(besides: store), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { return }
        if let noted = number(in: descriptor), noted >= change { return }
        var text = String(change)
        text = String(repeating: "0", count: max(0, width - text.count)) + text
        let bytes = Array(text.utf8)
        _ = pwrite(descriptor, bytes, bytes.count, 0)
    }

    private static func number(in descriptor: Int32) -> Int64? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
