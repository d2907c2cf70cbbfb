import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A store's note (`CommitNote`) as its writer keeps it open between commits: each note is an `fstatat` of its name in
/// the store's folder, the note's `flock`, a read, a write and the unlock (a sole writer's, below: the `fstatat` and
/// the write), instead of opening and closing the file at every commit. The name is checked to still be the file held
/// (its device and inode) — a note deleted, renamed over, moved away, or replaced by something that is not a file or by
/// a symbolic link is opened again by its name, and fails there as a fresh open would (`CommitNoteUnwritable`). The
/// folder is held too (`O_PATH`), so the name is looked up in it alone rather than along the whole path; a folder moved
/// away takes its store and note with it. A process forked from the one that opened them opens its own, so two
/// processes never share one hold of the lock (`ProcessIdentity`: no `getpid` per commit).
///
/// The note is read and written in the held file's first page, mapped shared — the same bytes other processes
/// `pread` under the lock, without a system call for either, and without `pwrite`'s update of the file's times at
/// every note (a mapped page updates them at its first write after each write-back), which waits while the file
/// system's journal commits for other writers. The page is used only while the `fstatat` finds the file a whole note
/// long: a file cut shorter under the writer (its bytes past the end are not the file's) or not yet written is written
/// with `pwrite` as a fresh note is, which makes it whole again. A write into the page must find its block already on
/// the disk — a write fault that needs a new block on a full disk faults (`SIGBUS`) where `pwrite` fails with `ENOSPC`
/// (`CommitNoteUnwritable`) — so the page is written only when the file system overwrites a block in place (ext2/3/4,
/// XFS, tmpfs; not a copy-on-write one such as btrfs) and the file's blocks cover its size (no hole left by a
/// truncate); otherwise it is read only. What the page cannot survive is a file cut under the writer between that
/// `fstatat` and the note's access, which faults (`SIGBUS`) instead of rewriting it. Only a process that can write the
/// note can do that — an App Group's other plugins — and it can do the same to the shared-memory file SQLite maps
/// beside every WAL store it shares (`-shm`), so the page gives such a neighbour nothing it did not have. A file that
/// cannot be mapped is read and written with `pread` and `pwrite`.
///
/// The note of a store with one writer for its connection's life (`soleWriter`: opened `.exclusive`, so no other
/// connection can commit to it, nor note for it) is locked and read only at its first note after an open: from then
/// on the number in it is the one this writer last wrote, and a note is the `fstatat` and the write.
final class CommitNoteFile {
    let store: String
    let path: String
    private let folderPath: String
    private let name: String
    private let timeout: TimeInterval
    private var folder: Int32 = -1
    private var descriptor: Int32 = -1
    private var device: dev_t = 0
    private var inode: ino_t = 0
    private var owner: pid_t = 0
    private let soleWriter: Bool
    /// The number in the file held, as this sole writer last read or wrote it (nil: not known, read it under the lock).
    private var noted: Int64?
    /// The held file's first page, mapped shared (nil: not mapped).
    private var page: UnsafeMutablePointer<UInt8>?
    /// The held file's size at the last `fstatat`: its page is read up to it, and written only when a whole note fits.
    private var size = 0
    /// Whether the held file's blocks cover its size at the last `fstatat` (no hole for a write fault to fill).
    private var allocated = false
    /// Whether the held file's file system overwrites an allocated block in place, so a write fault needs no new one.
    private var overwritesInPlace = false
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// Linux's `O_PATH` (a descriptor to look names up in, without reading the folder), which Swift's Glibc module
    /// does not export.
    private static let pathOnly: Int32 = 0o10_000_000

    init(besides store: String, timeout: TimeInterval, soleWriter: Bool = false) {
        self.store = store
        self.soleWriter = soleWriter
        let path = CommitNote.path(besides: store)
        let slash = path.lastIndex(of: "/")
        self.path = path
        folderPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        self.timeout = timeout
    }

    deinit {
        unmap()
        if descriptor >= 0 { close(descriptor) }
        if folder >= 0 { close(folder) }
    }

    /// Raises the note to `number` (a lower number changes nothing), as `CommitNote.note` does.
    func note(_ number: Int64) throws {
        let descriptor = try held()
        if soleWriter, let noted {
            if noted >= number { return }
            try write(number, to: descriptor)
            return
        }
        try CommitNote.lock(descriptor, LOCK_EX, store: store, timeout: timeout)
        defer { flock(descriptor, LOCK_UN) }
        if size < CommitNote.width {
            // Looked at before the lock: another writer may have written the note whole since.
            var status = stat()
            if fstat(descriptor, &status) == 0 { (size, allocated) = (Int(status.st_size), Self.blocksCover(status)) }
        }
        let found = noteNumber(in: descriptor)
        if let found, found >= number {
            if soleWriter { noted = found }
            return
        }
        try write(number, to: descriptor)
    }

    /// The number the held file begins with, read in its page when it has one.
    private func noteNumber(in descriptor: Int32) -> Int64? {
        guard let page, size > 0 else { return CommitNote.number(in: descriptor) }
        let count = min(size, CommitNote.readLength)
        return CommitNote.number(in: UnsafeBufferPointer(start: page, count: count))
    }

    private func write(_ number: Int64, to descriptor: Int32) throws {
        // Not known after a failed write: the next note reads the file again, under the lock.
        noted = nil
        if let page, size >= CommitNote.width, allocated, overwritesInPlace {
            CommitNote.withText(of: number) { UnsafeMutableRawPointer(page).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            if soleWriter { noted = number }
            return
        }
        guard CommitNote.write(number, to: descriptor) else {
            let failure = errno
            throw CommitNoteUnwritable(path: path, errno: failure)
        }
        if soleWriter { noted = number }
    }

    /// The descriptor of the file the name is now, opened (or made) again when it is not the one held; `size` its size.
    private func held() throws -> Int32 {
        var status = stat()
        let process = ProcessIdentity.current
        if owner == process, descriptor >= 0, fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0,
           status.st_dev == device, status.st_ino == inode {
            (size, allocated) = (Int(status.st_size), Self.blocksCover(status))
            return descriptor
        }
        unmap()
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        noted = nil
        if owner != process || folder < 0 {
            if folder >= 0 { close(folder) }
            folder = open(folderPath, Self.pathOnly | O_DIRECTORY | O_CLOEXEC)
            guard folder >= 0 else {
                let failure = errno
                throw CommitNoteUnwritable(path: path, errno: failure)
            }
            owner = process
        }
        let opened = openat(folder, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            let failure = errno
            throw CommitNoteUnwritable(path: path, errno: failure)
        }
        guard fstat(opened, &status) == 0 else {
            let failure = errno
            close(opened)
            throw CommitNoteUnwritable(path: path, errno: failure)
        }
        (descriptor, device, inode, size, allocated) = (opened, status.st_dev, status.st_ino, Int(status.st_size), Self.blocksCover(status))
        overwritesInPlace = Self.overwritesInPlace(opened)
        // Mapped past the file's end when it is shorter: the page is used once a note has made it whole.
        if Self.pageSize >= CommitNote.readLength, let mapped = mmap(nil, Self.pageSize, PROT_READ | PROT_WRITE, MAP_SHARED, opened, 0),
           mapped != MAP_FAILED {
            page = mapped.bindMemory(to: UInt8.self, capacity: Self.pageSize)
        }
        return opened
    }

    private static func blocksCover(_ status: stat) -> Bool { Int(status.st_blocks) * 512 >= Int(status.st_size) }

    /// ext2/3/4, XFS and tmpfs, by `statfs`'s magic numbers (linux/magic.h); any other is written with `pwrite`.
    private static func overwritesInPlace(_ descriptor: Int32) -> Bool {
        [0xEF53, 0x5846_5342, 0x0102_1994].contains(shieldbus_file_system_type(descriptor))
    }

    private func unmap() {
        if let page { munmap(page, Self.pageSize) }
        page = nil
    }
}
