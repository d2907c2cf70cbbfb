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
        let memory = DayFolders.isWritableTmpfs("/dev/shm")
        XCTAssertEqual(DayFolders.defaultBase(environment: [:]), memory ? "/dev/shm" : "/tmp")
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
