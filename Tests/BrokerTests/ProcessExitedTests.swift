@testable import Broker
import Foundation
import Glibc
import XCTest

/// `ChildProcess.hasExited` tells from a process descriptor, or else from `/proc/<pid>/stat`, whether a process ended
/// (the broker asks at a template launch's hello whether its credential still proves anything): running is not ended;
/// a zombie and a pid that is gone are.
final class ProcessExitedTests: XCTestCase {
    func testARunningProcessAZombieAndAGoneOneEvenWithAParenthesisInItsName() throws {
        XCTAssertFalse(ChildProcess.hasExited(getpid()))
        let folder = NSTemporaryDirectory() + "/sbexited-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The kernel's name of the process is its program file's: ") Z (" would be misread by a parse up to the first ")".
        let program = folder + "/) Z (x"
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: program)
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(program), strdup("60"), nil]
        defer { arguments.forEach { free($0) } }
        XCTAssertEqual(posix_spawn(&pid, program, nil, nil, arguments, environ), 0)
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        XCTAssertTrue(stat.contains("() Z (x)"), stat)
        XCTAssertFalse(ChildProcess.hasExited(pid))
        XCTAssertEqual(kill(pid, SIGKILL), 0)
        // Not reaped yet: a zombie, which has ended.
        let deadline = Date().addingTimeInterval(30)
        while !ChildProcess.hasExited(pid) && Date() < deadline { sched_yield() }
        XCTAssertTrue(ChildProcess.hasExited(pid), "still running 30 s after SIGKILL")
        var info = siginfo_t()
        XCTAssertEqual(waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT), 0)
        XCTAssertTrue(ChildProcess.hasExited(pid))
        var status: Int32 = 0
        XCTAssertEqual(waitpid(pid, &status, 0), pid)
        XCTAssertTrue(ChildProcess.hasExited(pid), "a pid that is gone")
    }
}
