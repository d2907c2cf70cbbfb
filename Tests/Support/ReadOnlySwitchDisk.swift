import Foundation
import XCTest

/// A folder that can go read-only and writable again while programs hold files on it open for writing, as a failing
/// disk does under a running device: a FUSE mirror of a temporary folder (`toggle_fs.py`, Debian's python3-fusepy)
/// whose changing calls fail with EROFS while switched. (`mount -o remount,ro` — `SmallDisk.remount` — is refused
/// while any file is open for writing, so it cannot do this under a running broker.) Mounting needs root and FUSE;
/// without them the test is skipped, saying so.
public final class ReadOnlySwitchDisk {
    public let path: String
    private let directory: TemporaryDirectory
    private let mirror: Process
    private let switchPath: String

    public init() throws {
        let python = "/usr/bin/python3"
        guard FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/fusepy.py"), FileManager.default.fileExists(atPath: "/dev/fuse") else {
            throw XCTSkip("a read-only switch needs FUSE and Debian's python3-fusepy (make deps installs it)")
        }
        directory = TemporaryDirectory(prefix: "sbro")
        path = directory.file("disk")
        switchPath = directory.file("read-only")
        for folder in [path, directory.file("source")] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let script = BuildProducts.repositoryRoot.appendingPathComponent("Tests/Support/toggle_fs.py").path
        mirror = try startProcess(python, [script, directory.file("source"), path, switchPath], environment: [:], log: directory.file("mirror.log"))
        let mountPoint = path
        waitUntil("the FUSE mirror to be mounted at \(path)") {
            !mirror.isRunning || ((try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? "").contains(" \(mountPoint) fuse")
        }
        guard mirror.isRunning else {
            throw XCTSkip("the FUSE mirror did not mount (it needs root and /dev/fuse): \((try? String(contentsOfFile: directory.file("mirror.log"), encoding: .utf8)) ?? "")")
        }
    }

    /// Makes every call that would change the folder fail with EROFS (reads go on), or succeed again.
    public func setReadOnly(_ readOnly: Bool) throws {
        if readOnly {
            FileManager.default.createFile(atPath: switchPath, contents: nil)
        } else if FileManager.default.fileExists(atPath: switchPath) {
            try FileManager.default.removeItem(atPath: switchPath)
        }
    }

    /// Unmounts the mirror (lazily: a file still open on it keeps it until closed) and ends its process: libfuse
    /// leaves its loop on SIGTERM; one that does not within 10 s is killed.
    deinit {
        _ = try? runToEnd("/bin/umount", ["-l", path])
        kill(mirror.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while mirror.isRunning && Date() < deadline { usleep(2_000) }  // a poll interval; the deadline decides
        if mirror.isRunning { kill(mirror.processIdentifier, SIGKILL); mirror.waitUntilExit() }
    }
}
