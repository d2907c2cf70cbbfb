// Tests of the process id a kept commit note asks for at every commit, without a system call.
import Foundation
@testable import SQLite
import XCTest

final class ProcessIdentityTests: XCTestCase {
    /// The id is this process's, and a child forked after it was read finds its own (the kernel empties the page the
    /// id is kept in, in the child), not its parent's.
    func testAForkedChildFindsItsOwnID() throws {
        XCTAssertEqual(ProcessIdentity.current, getpid())
        XCTAssertEqual(ProcessIdentity.current, getpid(), "read again from the page")
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let child = fork()
        if child == 0 {
            // Only the page and system calls in the child of a threaded process: no allocation, no lock.
            var ids: (pid_t, pid_t) = (ProcessIdentity.current, getpid())
            _ = withUnsafeBytes(of: &ids) { write(ends[1], $0.baseAddress, $0.count) }
            _exit(0)
        }
        XCTAssertGreaterThan(child, 0)
        close(ends[1])
        var ids: (pid_t, pid_t) = (0, 0)
        let count = withUnsafeMutableBytes(of: &ids) { read(ends[0], $0.baseAddress, $0.count) }
        close(ends[0])
        var status: Int32 = 0
        waitpid(child, &status, 0)
        XCTAssertEqual(count, MemoryLayout<(pid_t, pid_t)>.size)
        XCTAssertEqual(ids.0, child, "the child's own id")
        XCTAssertEqual(ids.1, child)
        XCTAssertEqual(ProcessIdentity.current, getpid(), "the parent's is still its own")
    }
}
