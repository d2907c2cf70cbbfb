@testable import Broker
import Glibc
import LockInvariant
import XCTest

/// How a plugin's end is said in `plugin.exited`, and which of those ends the run's health takes for a crash: the
/// words `ChildProcess` writes are the ones `RunHealth` reads.
final class ExitDescriptionTests: XCTestCase {
    func testEveryEndIsSaidAsRunHealthReadsIt() {
        func signalled(_ number: Int32) -> Int32 { number }  // a wait status of a process ended by `number`
        func exited(_ status: Int32) -> Int32 { status << 8 }
        let ends: [(status: Int32, said: String, crash: Bool)] = [
            (exited(0), "exited with status 0", false),
            (exited(75), "exited with status 75", false),
            (exited(78), "exited with status 78", false),
            (exited(1), "exited with status 1", true),
            (signalled(SIGKILL), "killed by SIGKILL", false),
            (signalled(SIGTERM), "killed by SIGTERM", false),
            (signalled(SIGINT), "killed by SIGINT", false),
            (signalled(SIGSEGV), "killed by SIGSEGV", true),
            (signalled(SIGILL), "killed by SIGILL (a Swift runtime trap)", true),
            (signalled(SIGTRAP), "killed by SIGTRAP (a Swift runtime trap)", true),
            (signalled(SIGABRT), "killed by SIGABRT", true),
            (signalled(SIGBUS), "killed by SIGBUS", true),
            (signalled(SIGFPE), "killed by SIGFPE", true),
            (signalled(SIGSYS), "killed by SIGSYS (a system call the sandbox forbids)", true),
            (signalled(SIGPIPE), "killed by signal \(SIGPIPE)", true),
        ]
        for end in ends {
            XCTAssertEqual(ChildProcess.describe(waitStatus: end.status), end.said)
            XCTAssertEqual(RunHealth.isCrash(end.said), end.crash, end.said)
        }
    }
}
