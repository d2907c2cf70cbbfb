@testable import Broker
import BusClient
import BusProtocol
import Configuration
import Foundation
import Glibc
import Logging
import XCTest

/// A start that did not say hello in time is counted once: killed, it is not late again while its exit waits to be
/// reaped, which on a loaded machine can take past the next heartbeat (three counts would give it up).
final class LateStartsTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "/sblate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func testAKilledStartIsNotLateAgainBeforeItsExitIsReaped() throws {
        let runtime = RuntimeDirectory(path: folder)
        let spec = PluginSpec(name: "silent", executable: "/bin/sh", arguments: ["-c", "sleep 60"], role: .monitor)
        let supervisor = PluginSupervisor(specs: [spec], runtimeDirectory: runtime, endpoint: "ipc://\(folder)/bus.sock",
                                          launchTemplates: false, logger: Logger(label: "test"))
        supervisor.startAll()
        defer { supervisor.stopAll(graceMilliseconds: 0) }
        let plugin = try XCTUnwrap(supervisor.plugin(named: "silent"))
        let settings = BrokerSettings(runtimeDirectory: runtime, table: .screenTime)
        let late = LateStarts(supervisor: supervisor, sessions: SessionTable(), settings: settings, clock: BusClock(mode: .real))
        let past = plugin.startedAt + settings.startupTimeoutMilliseconds + 1

        XCTAssertEqual(late.hung(now: past).map(\.spec.name), ["silent"], "a start past the limit with no hello is hung")
        supervisor.helloTimedOut(name: "silent", after: settings.startupTimeoutMilliseconds)
        XCTAssertNotNil(plugin.pid, "not reaped yet: nothing has looked for its exit")
        for heartbeat in 1...3 {
            XCTAssertEqual(late.hung(now: past + Int64(heartbeat) * 1_000).map(\.spec.name), [],
                           "the killed start was counted again at heartbeat \(heartbeat)")
        }
        XCTAssertEqual(plugin.state, .running, "one late start was given up on")
    }
}
