import Foundation
import XCTest

/// A real small filesystem (a tmpfs of `size`, e.g. "4m") mounted in a temporary directory, to fill up: the
/// storage-fault tests' full disk. Mounting needs root; without it the test is skipped, saying so.
public final class SmallDisk {
    public let path: String
    private let directory: TemporaryDirectory

    public init(size: String) throws {
        directory = TemporaryDirectory(prefix: "sbdisk")
        path = directory.file("disk")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard try runToEnd("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]).status == 0 else {
            throw XCTSkip("mounting a small tmpfs needs root; the full disk was not simulated")
        }
    }

    /// Takes every free byte with `filler` (dd stops at "No space left on device").
    public func fill(_ filler: String = "filler") throws {
        _ = try runToEnd("/bin/dd", ["if=/dev/zero", "of=\(path)/\(filler)", "bs=64k"])
    }

    /// Gives the space back.
    public func free(_ filler: String = "filler") throws {
        try FileManager.default.removeItem(atPath: path + "/" + filler)
    }

    /// Remounts the disk read-only (or writable again), as the kernel does to a failing disk. Refused (EBUSY) while
    /// any file on it is open for writing.
    public func remount(readOnly: Bool) throws {
        let remounted = try runToEnd("/bin/mount", ["-o", readOnly ? "remount,ro" : "remount,rw", path])
        guard remounted.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: remounted.output]) }
    }

    deinit { _ = try? runToEnd("/bin/umount", ["-l", path]) }
}
