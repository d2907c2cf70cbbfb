import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// This process's id, known without a system call: what a store's kept note asks at every commit (`CommitNoteFile`:
/// a process forked from the one that opened the note opens its own).
///
/// Kept in a page the kernel gives a forked child emptied (`MADV_WIPEONFORK`, Linux 4.14): a child finds 0 there and
/// reads its own id, whatever made the fork (`fork`, a launch template's, a `clone` that skips `pthread_atfork`'s
/// handlers). Where the kernel does not take that advice, the id is asked for each time.
enum ProcessIdentity {
    /// The page's first word: 0 until read in this process (and in a child forked since).
    /// An atomic, as threads may read it while one writes it (a zeroed page is a valid `Atomic` holding 0).
    private nonisolated(unsafe) static let witness: UnsafeMutablePointer<Atomic<pid_t>>? = {
        let size = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard size > 0, let page = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              page != MAP_FAILED else { return nil }
        guard madvise(page, size, wipeOnFork) == 0 else {
            munmap(page, size)
            return nil
        }
        let witness = page.bindMemory(to: Atomic<pid_t>.self, capacity: 1)
        witness.initialize(to: Atomic(0))
        return witness
    }()

    /// Linux's `MADV_WIPEONFORK`, which Swift's Glibc module may not export.
    private static let wipeOnFork: Int32 = 18

    /// The id of the process this runs in.
    static var current: pid_t {
        guard let witness else { return getpid() }
        // Threads racing here store the same id; a forked child starts from 0 whatever was stored.
        let seen = witness.pointee.load(ordering: .relaxed)
        if seen != 0 { return seen }
        let id = getpid()
        witness.pointee.store(id, ordering: .relaxed)
        return id
    }
}
