import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A store's note (`CommitNote`) as its writer keeps it open between commits: each note is an `lstat` of its path, the
/// note's `flock`, a read, a write and the unlock, instead of opening and closing the file at every commit. The path is
/// checked to still name the file held (its device and inode) — a note deleted, renamed over, or replaced by something
/// that is not a file or by a symbolic link is opened again by its path, and fails there as a fresh open would
/// (`CommitNoteUnwritable`). A process forked from the one that opened it opens its own, so two processes never share
/// one hold of the lock.
final class CommitNoteFile {
    let store: String
    let path: String
    private let timeout: TimeInterval
    private var descriptor: Int32 = -1
    private var device: dev_t = 0
    private var inode: ino_t = 0
    private var owner: pid_t = 0

    init(besides store: String, timeout: TimeInterval) {
        self.store = store
        path = CommitNote.path(besides: store)
        self.timeout = timeout
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Raises the note to `number` (a lower number changes nothing), as `CommitNote.note` does.
    func note(_ number: Int64) throws {
        let descriptor = try held()
        try CommitNote.lock(descriptor, LOCK_EX, store: store, timeout: timeout)
        defer { flock(descriptor, LOCK_UN) }
        if let noted = CommitNote.number(in: descriptor), noted >= number { return }
        guard CommitNote.write(number, to: descriptor) else {
            let failure = errno
            throw CommitNoteUnwritable(path: path, errno: failure)
        }
    }

    /// The descriptor of the file the path names now, opened (or made) again when it is not the one held.
    private func held() throws -> Int32 {
        var status = stat()
        let process = getpid()
        if descriptor >= 0, owner == process, lstat(path, &status) == 0, status.st_dev == device, status.st_ino == inode {
            return descriptor
        }
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        let opened = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            let failure = errno
            throw CommitNoteUnwritable(path: path, errno: failure)
        }
        guard fstat(opened, &status) == 0 else {
            let failure = errno
            close(opened)
            throw CommitNoteUnwritable(path: path, errno: failure)
        }
        (descriptor, device, inode, owner) = (opened, status.st_dev, status.st_ino, process)
        return opened
    }
}
