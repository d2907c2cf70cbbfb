import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// In virtual time the broker waits for a plugin's acknowledgements only so long (`ackTimeoutMs`), so that a plugin
/// that stopped cannot freeze time. A plugin still at its work — its process runnable or using CPU, as on a machine
/// busy with other work — is late, not stopped: it is waited for, and the day is the one a quiet machine plays.
extension SupervisionTests {
    func testAPluginStillAtWorkIsWaitedForAndOneThatStoppedIsGivenUpOn() throws {
        let configuration = """
            name: supervision
            bus: {heartbeatMs: 200, sessionTimeoutMs: 30000, ackTimeoutMs: 300}
            plugins:
              - {name: worker, executable: \(BuildProducts.path("fixture-supervised")), role: generic}

            """
        // Five times the limit of CPU, however long the machine takes to give it; then a hang.
        let scenario = """
            name: slow
            start: 2026-11-23T06:00
            steps:
              - {after: 1m, publish: {topic: app.sup.work, body: {ms: 1500}}}
              - {after: 1m, publish: {topic: app.sup.ping, body: {n: 1}}}
              - {after: 1m, publish: {topic: app.sup.hang}}
              - {after: 1m, publish: {topic: app.sup.ping, body: {n: 2}}}

            """
        let run = try ScenarioRun.run(configuration: configuration, scenario: scenario, timeoutSeconds: 120)
        XCTAssertEqual(run.exitStatus, 3, "a run with a plugin given up on is degraded: \(run.errors)")
        XCTAssertTrue(run.errors.contains("ack-timeout"), run.errors)
        let topics = run.journal.map(\.topic).filter { $0.hasPrefix("app.sup.") || $0 == "bus.error" }
        XCTAssertEqual(topics, ["app.sup.work", "app.sup.worked", "app.sup.ping", "app.sup.pong", "app.sup.hang", "bus.error", "app.sup.ping"],
                       "waited for while at work: its answers before the next step; given up on once stopped")
        let messages = run.events("bus.error").compactMap { $0.bodyValue["message"]?.stringValue }
        XCTAssertEqual(messages.map { $0.replacingOccurrences(of: #"for \d+ ms"#, with: "for N ms", options: .regularExpression) },
                       ["worker left 1 event(s) unacknowledged for N ms; virtual time no longer waits for it"])
        XCTAssertGreaterThanOrEqual(messages.first.flatMap { Int($0.split(separator: " ")[6]) } ?? 0, 300, "the time it was waited for: \(messages)")
    }

    /// A plugin that works in short bursts with pauses between — asleep whenever the broker happens to look — is
    /// still at work: its CPU time rose since the reading taken early in the wait, and again between looks.
    func testAPluginWorkingInShortBurstsIsWaitedFor() throws {
        let configuration = """
            name: supervision
            bus: {heartbeatMs: 200, sessionTimeoutMs: 30000, ackTimeoutMs: 300}
            plugins:
              - {name: worker, executable: \(BuildProducts.path("fixture-supervised")), role: generic}

            """
        // 400 ms of CPU in 10 bursts, 150 ms asleep after each: asleep most of the time, for about five times the limit.
        let scenario = """
            name: bursts
            start: 2026-11-23T06:00
            steps:
              - {after: 1m, publish: {topic: app.sup.work, body: {ms: 400, bursts: 10, gapMs: 150}}}
              - {after: 1m, publish: {topic: app.sup.ping, body: {n: 1}}}

            """
        let run = try ScenarioRun.run(configuration: configuration, scenario: scenario, timeoutSeconds: 120)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertFalse(run.errors.contains("ack-timeout"), run.errors)
        let topics = run.journal.map(\.topic).filter { $0.hasPrefix("app.sup.") || $0 == "bus.error" }
        XCTAssertEqual(topics, ["app.sup.work", "app.sup.worked", "app.sup.ping", "app.sup.pong"], "waited for through its pauses")
    }
    /// A plugin's next process slow to say hello — past `startupTimeoutMs` — while at work (its CPU time rising, as on
    /// a machine busy with other work) is waited for in virtual time, not killed: its kill and restart would land in the
    /// journal by process timing. One hung before its hello (asleep, using no CPU) is still killed at the limit.
    func testAStartStillAtWorkIsWaitedForAndAHungOneIsKilled() throws {
        let configuration = """
            name: supervision
            bus: {heartbeatMs: 100, sessionTimeoutMs: 30000, startupTimeoutMs: 300}
            plugins:
              - {name: worker, executable: \(BuildProducts.path("fixture-supervised")), role: generic}

            """
        func play(hung: Bool) throws -> ScenarioRun {
            let scenario = """
                name: slow-start
                start: 2026-11-23T06:00
                steps:
                  - {after: 1m, publish: {topic: app.sup.crash-then-start-slowly, body: {ms: 1500, hung: \(hung)}}}
                  - {after: 1m, publish: {topic: app.sup.ping, body: {n: 1}}}

                """
            return try ScenarioRun.run(configuration: configuration, scenario: scenario, timeoutSeconds: 120)
        }
        func exits(_ run: ScenarioRun) -> [String] { run.events("plugin.exited").compactMap { $0.bodyValue["how"]?.stringValue } }

        let slow = try play(hung: false)
        XCTAssertEqual(exits(slow).filter { $0.contains("SIGKILL") }, [], "a start at work was killed: \(exits(slow)); \(slow.errors)")
        XCTAssertEqual(slow.events("plugin.exited").count, 1, "only the crash asked for: \(exits(slow))")
        XCTAssertEqual(slow.events("app.sup.pong").count, 1, "the slow start answers the next step: \(slow.errors)")

        let hung = try play(hung: true)
        XCTAssertEqual(exits(hung).filter { $0.contains("SIGKILL") }.count, 1, "a hung start is killed at the limit: \(exits(hung)); \(hung.errors)")
        XCTAssertEqual(hung.events("app.sup.pong").count, 1, "its next start answers: \(hung.errors)")
    }
}
