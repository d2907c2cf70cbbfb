// FolderEntries: what a folder holds under given names, found without following a symbolic link on the way to it.
import CProcessControl
#if canImport(Glibc)
import Glibc
#endif

/// A few entries of one folder, asked below a root folder without following a symbolic link below it
/// (`shieldbus_folder_entry_kinds`: openat2's `RESOLVE_NO_SYMLINKS` from the root, then one read of the folder's
/// entries) — a few calls, where an `lstat` of each entry's and each folder's whole path walks the path every time.
enum FolderEntries {
    /// What is under each name asked, in the order asked: `shieldbus_folder_entry_kinds`' kinds (0 nothing, 1 a
    /// symbolic link, 2 anything else), kept as bytes.
    struct Found: Equatable {
        let kinds: [UInt8]
        var hasSymbolicLink: Bool { kinds.contains(1) }
        func isThere(_ index: Int) -> Bool { kinds[index] != 0 }
    }

    enum Answer: Equatable {
        case found(Found)
        /// A folder on the way is missing or is no folder: nothing is there.
        case noFolder
        /// A folder on the way is a symbolic link, the kernel has no openat2, or the folder could not be read: ask
        /// part by part.
        case cannotTell
    }

    /// What `folder` (folders relative to `root`, "" for `root` itself) holds under each of `names` (none of them
    /// with a NUL).
    static func find(_ names: [String], in folder: String, under root: String) -> Answer {
        var kinds = [UInt8](repeating: 0, count: names.count)
        // The names, each ended by a NUL, written into one buffer: not `joined(separator:)`, a generic whose first use
        // in a process looks up its element's conformances by scanning the program's records, in every launch.
        var list = [UInt8]()
        list.reserveCapacity(names.reduce(0) { $0 + $1.utf8.count + 1 })
        for var name in names {
            name.withUTF8 { list.append(contentsOf: $0) }
            list.append(0)
        }
        // errno read at once, in the closure: the list's buffer is freed after it.
        let (result, failure) = list.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { list in
                (shieldbus_folder_entry_kinds(root, folder, list.baseAddress, Int32(names.count), &kinds), errno)
            }
        }
        if result == 0 { return .found(Found(kinds: kinds)) }
        return failure == ENOENT || failure == ENOTDIR ? .noFolder : .cannotTell
    }
}
