import BusProtocol
import DeviceAPI
import Foundation
import LockInvariant
import XCTest

/// A degraded run fails on its own: the bus's degradations (a callback loop the OS throttled among them), read from the journal.
final class RunHealthTests: XCTestCase {
    func health(_ journal: JournalBuilder) -> [String] {
        var health = RunHealth()
        for envelope in journal.envelopes { health.read(envelope) }
        return health.problems.map(\.kind)
    }

    func testTheBusDegradationsFailARunAndOtherErrorsDoNot() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.add("2026-11-23 08:10", "bus.error", ["code": "ack-timeout", "message": "monitor left 3 event(s) unacknowledged"])
        j.add("2026-11-23 08:11", "bus.error", ["code": "delivery-abandoned", "receiver": "app"])
        j.add("2026-11-23 08:11", "bus.error", ["code": "callback-loop", "message": "the app's monitor was called back more than 60 times"])
        j.add("2026-11-23 08:12", "bus.error", ["code": "unknown-input", "message": "a typo"])
        j.add("2026-11-23 08:13", "bus.error", ["code": "ack-timeout"], source: "impostor")
        XCTAssertEqual(health(j), ["ack-timeout", "callback-loop", "delivery-abandoned"])
        XCTAssertEqual(health(JournalBuilder(start: "2026-11-23 08:00")), [])
    }

    /// A plugin that crashed, or that the supervisor gave up on, fails the run even when the lock held: the events it
    /// had go to its next process, but an extension that crashes is a bug, and one given up on answers nothing. The
    /// broker's own ends of a process, a clean exit and an exit to wait for storage are not crashes.
    func testACrashedOrFailedPluginFailsARunAndTheBrokersOwnEndsDoNot() {
        var ends = JournalBuilder(start: "2026-11-23 08:00")
        for how in ["exited with status 0", "killed by SIGKILL (heartbeat-timeout)", "killed by SIGTERM", "killed by SIGINT",
                    "exited with status 75", "exited with status 78"] {
            ends.add("2026-11-23 08:10", "plugin.exited", ["name": "monitor", "how": .string(how)], source: "broker")
        }
        ends.add("2026-11-23 08:11", "plugin.exited", ["name": "monitor", "how": "killed by SIGSEGV"], source: "impostor")
        XCTAssertEqual(health(ends), [])

        for how in ["killed by SIGSEGV", "killed by SIGILL (a Swift runtime trap)", "killed by SIGTRAP (a Swift runtime trap)",
                    "killed by SIGABRT", "killed by SIGBUS", "killed by SIGFPE", "killed by SIGSYS (a system call the sandbox forbids)",
                    "killed by signal 13", "exited with status 1", "exited with status 134"] {
            var crash = JournalBuilder(start: "2026-11-23 08:00")
            crash.add("2026-11-23 08:10", "plugin.exited", ["name": "shield", "how": .string(how)], source: "broker")
            XCTAssertEqual(health(crash), ["plugin-crashed"], how)
        }

        var failed = JournalBuilder(start: "2026-11-23 08:00")
        for _ in 0..<5 { failed.add("2026-11-23 08:10", "plugin.exited", ["name": "shield", "how": "killed by SIGSEGV"], source: "broker") }
        failed.add("2026-11-23 08:10", "plugin.failed", ["name": "shield", "reason": "crash loop: 5 failures within 60 s"], source: "broker")
        var health = RunHealth()
        for envelope in failed.envelopes { health.read(envelope) }
        XCTAssertEqual(health.problems.map(\.kind), ["plugin-crashed", "plugin-failed"])
        XCTAssertEqual(health.problems.first?.detail, "plugin-crashed ×5 (first: shield: killed by SIGSEGV)")
        XCTAssertEqual(health.problems.last?.detail, "plugin-failed ×1 (first: shield: crash loop: 5 failures within 60 s)")
    }
}
