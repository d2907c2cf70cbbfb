@testable import Broker
import BusClient
import Foundation
import Glibc
import Logging
import XCTest

/// The close (`PluginSupervisor.stopAll`) waits on its plugins' process descriptors: it looks for their ends once,
/// then once more at each end, and returns at the last one — not at the next of periodic looks.
final class PluginCloseTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "/sbclose-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func testTheCloseLooksOnceMorePerEndAndReturnsWhenTheLastHasEnded() throws {
        // Each plugin takes its time to stop after SIGTERM (its own doing, not the test's), one longer than the other.
        func spec(_ name: String, stopping seconds: String) -> PluginSpec {
            let script = "trap 'kill $!; sleep \(seconds); exit 0' TERM; touch \(folder)/ready-\(name); sleep 60 & wait"
            return PluginSpec(name: name, executable: "/bin/sh", arguments: ["-c", script], role: .monitor)
        }
        let supervisor = PluginSupervisor(specs: [spec("first", stopping: "0.2"), spec("second", stopping: "0.4")],
                                          runtimeDirectory: RuntimeDirectory(path: folder), endpoint: "ipc://\(folder)/bus.sock",
                                          launchTemplates: false, logger: Logger(label: "test"))
        supervisor.startAll()
        let pids = supervisor.plugins.compactMap(\.pid)
        XCTAssertEqual(pids.count, 2)
        // Their traps are set once they say so.
        let deadline = Date().addingTimeInterval(30)
        while !["first", "second"].allSatisfy({ FileManager.default.fileExists(atPath: "\(folder)/ready-\($0)") }) && Date() < deadline {
            sched_yield()
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(folder)/ready-second"), "the plugins did not start within 30 s")

        // The caller's own close work runs once every plugin is asked to stop and before any is waited for: both
        // still have their processes then (each takes its time after SIGTERM).
        var asked: [String: PluginSupervisor.State] = [:], running: [pid_t] = []
        supervisor.stopAll(graceMilliseconds: 30_000) {
            for plugin in supervisor.plugins { asked[plugin.spec.name] = plugin.state }
            running = supervisor.plugins.compactMap(\.pid)
        }
        XCTAssertEqual(asked, ["first": .stopped, "second": .stopped])
        XCTAssertEqual(running, pids)

        for plugin in supervisor.plugins {
            XCTAssertNil(plugin.pid)
            XCTAssertEqual(plugin.lastExit, "exited with status 0", "\(plugin.spec.name) was killed, not left to end")
        }
        // Both were reaped by the close: neither is a child any more.
        for pid in pids { XCTAssertEqual(waitpid(pid, nil, WNOHANG), -1) }
        // The first look, one after each end (two ends at once make one wake): never a look every few milliseconds
        // through the 0.4 s they took.
        XCTAssertGreaterThanOrEqual(supervisor.closeLooks, 2)
        XCTAssertLessThanOrEqual(supervisor.closeLooks, 3)
    }

    func testAWaitOnAChildEndsWhenItEnds() throws {
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup("sleep 0.2; exit 3"), nil]
        defer { arguments.forEach { free($0) } }
        XCTAssertEqual(posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ), 0)
        let ends = ProcessEnds()
        defer { ends.close() }
        let started = Date()
        XCTAssertTrue(ends.awaitAny(of: [pid], milliseconds: 60_000))
        // Woken by the end, not the minute: the child is there to reap at once.
        var status: Int32 = 0
        XCTAssertEqual(waitpid(pid, &status, WNOHANG), pid)
        XCTAssertEqual(ChildProcess.describe(waitStatus: status), "exited with status 3")
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
    }
}
