import BusProtocol
import Foundation
import XCTest

/// `JournalFile.openForWriting`: a journal path is written where it is, never replaced.
final class JournalFileTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "journal-file-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: folder) }

    private func mode(_ path: String) -> mode_t {
        var status = stat()
        XCTAssertEqual(lstat(path, &status), 0, path)
        return status.st_mode
    }

    func testAnExistingFileIsTruncatedAndMadeOwnerOnlyAndAppendingKeepsIt() throws {
        let path = folder + "/journal.jsonl"
        try Data("old day\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
        let inode = { () -> ino_t in var status = stat(); stat(path, &status); return status.st_ino }
        let before = inode()

        let appended = try JournalFile.openForWriting(path, appending: true)
        XCTAssertTrue(appended.isRegularFile)
        try appended.handle.seekToEnd()
        try appended.handle.write(contentsOf: Data("more\n".utf8))
        try appended.handle.close()
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "old day\nmore\n")

        let fresh = try JournalFile.openForWriting(path, appending: false)
        try fresh.handle.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).count, 0, "started afresh")
        XCTAssertEqual(mode(path) & 0o777, 0o600, "a person's day is its owner's alone")
        XCTAssertEqual(inode(), before, "the same file, not a new one renamed over it")
    }

    func testAMissingFileIsCreatedOwnerOnly() throws {
        let path = folder + "/new.jsonl"
        let opened = try JournalFile.openForWriting(path, appending: false)
        try opened.handle.close()
        XCTAssertEqual(mode(path) & S_IFMT, S_IFREG)
        XCTAssertEqual(mode(path) & 0o777, 0o600)
    }

    /// `--journal /dev/null` as root once turned the machine's /dev/null into a regular file only root could write.
    /// A private null device (root only) shows the device is written as it is: still a device, its mode unchanged.
    func testADeviceStaysADeviceWithItsMode() throws {
        guard getuid() == 0 else { throw XCTSkip("making a device node needs root") }
        let path = folder + "/null"
        let nullDevice = dev_t(1 << 8 | 3)  // major 1, minor 3 as glibc's makedev packs them
        guard mknod(path, S_IFCHR | 0o666, nullDevice) == 0 else { throw XCTSkip("mknod refused here (errno \(errno))") }
        chmod(path, 0o666)
        let opened = try JournalFile.openForWriting(path, appending: false)
        XCTAssertFalse(opened.isRegularFile)
        try opened.handle.write(contentsOf: Data("an event\n".utf8))
        try opened.handle.close()
        XCTAssertEqual(mode(path) & S_IFMT, S_IFCHR, "still a character device")
        XCTAssertEqual(mode(path) & 0o777, 0o666, "its mode untouched")
        XCTAssertThrowsError(try JournalFile.openForWriting(folder + "/no/such/folder/j.jsonl", appending: false))
    }
}
