@testable import Explore
import Foundation
import XCTest

/// Where explore plays its days: a private folder of its own, in memory unless the person chose otherwise.
final class DayFoldersTests: XCTestCase {
    func testTheFolderIsPrivateNewEachTimeAndRemovedWithItsDays() throws {
        let base = NSTemporaryDirectory() + "sb-dayfolders-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let first = try DayFolders(under: base), second = try DayFolders(under: base + "/")
        XCTAssertNotEqual(first.path, second.path)
        XCTAssertTrue(first.path.hasPrefix(base + "/shieldbus-explore-"), first.path)
        XCTAssertFalse(second.path.contains("//"), second.path)
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: first.path)[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o777, 0o700, "another local user gets nothing of the days")
        try FileManager.default.createDirectory(atPath: first.path + "/run-1/state", withIntermediateDirectories: true)
        first.remove()
        XCTAssertFalse(FileManager.default.fileExists(atPath: first.path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: second.path))
    }

    func testAFolderThatCannotBeMadeIsSaidWithWhereAndWhatToDo() {
        XCTAssertThrowsError(try DayFolders(under: "/nonexistent-shieldbus-base")) { error in
            XCTAssertEqual("\(error)", "cannot make a folder for the days in /nonexistent-shieldbus-base: No such file or directory (choose another with --work-dir)")
        }
    }

    func testTheDefaultIsTMPDIRWhenSetElseMemory() {
        XCTAssertEqual(DayFolders.defaultBase(environment: ["TMPDIR": "/var/tmp"]), "/var/tmp")
        let memory = DayFolders.isWritableTmpfs("/dev/shm") && (DayFolders.availableBytes("/dev/shm") ?? 0) >= DayFolders.roomPerDay
        XCTAssertEqual(DayFolders.defaultBase(environment: [:]), memory ? "/dev/shm" : "/tmp")
    }

    /// Docker gives a container a 64 MB `/dev/shm`: days that would fill it are played on `/tmp`, and the explore's
    /// first line says where and why.
    func testAMemoryFolderTooSmallForTheDaysAtOnceIsPassedOverForTmp() throws {
        let mounts = "tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0"
        try XCTSkipUnless(access("/dev/shm", W_OK | X_OK) == 0, "no /dev/shm this can write in")
        let docker: (String) -> UInt64? = { $0 == "/dev/shm" ? 64 << 20 : nil }
        XCTAssertEqual(DayFolders.chooseBase(environment: [:], daysAtOnce: 4, mounts: mounts, freeBytes: docker),
                       DayFolders.Base(path: "/tmp", why: "/dev/shm has 64 MB free, less than the 128 MB of 4 day(s) at once"))
        XCTAssertEqual(DayFolders.chooseBase(environment: [:], daysAtOnce: 2, mounts: mounts, freeBytes: docker),
                       DayFolders.Base(path: "/dev/shm", why: "in memory, 64 MB free"))
        XCTAssertEqual(DayFolders.chooseBase(environment: [:], daysAtOnce: 1, mounts: mounts, freeBytes: { _ in nil }).path, "/tmp",
                       "room that cannot be read is not counted on")
        XCTAssertEqual(DayFolders.chooseBase(environment: ["TMPDIR": "/var/tmp"], daysAtOnce: 4, mounts: mounts, freeBytes: docker),
                       DayFolders.Base(path: "/var/tmp", why: "TMPDIR"))
        let made = try DayFolders(under: nil, daysAtOnce: 1, environment: ["TMPDIR": NSTemporaryDirectory()])
        defer { made.remove() }
        XCTAssertEqual(made.choice, "TMPDIR")
        XCTAssertNotNil(DayFolders.availableBytes("/tmp"))
    }

    func testOnlyATmpfsMountPointCountsAsMemory() {
        let mounts = """
            /dev/vda / ext4 rw,relatime 0 0
            tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0
            /dev/vdb /data ext4 rw 0 0
            """
        XCTAssertTrue(DayFolders.isWritableTmpfs("/tmp", mounts: "tmpfs /tmp tmpfs rw 0 0"))
        XCTAssertFalse(DayFolders.isWritableTmpfs("/tmp", mounts: mounts), "/tmp is on the root's ext4 here")
        XCTAssertFalse(DayFolders.isWritableTmpfs("/tmp", mounts: nil))
        XCTAssertFalse(DayFolders.isWritableTmpfs("/nonexistent-shieldbus-base", mounts: "tmpfs /nonexistent-shieldbus-base tmpfs rw 0 0"),
                       "a folder this process cannot write in")
    }
}
