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

    /// The fixture plugin `worker` (with `arguments`) on a bus with `bus`'s limits, playing `steps` a minute apart.
    private func playWorker(bus: String, arguments: String = "", steps: [String]) throws -> ScenarioRun {
        let configuration = """
            name: supervision
            bus: \(bus)
            plugins:
              - {name: worker, executable: \(BuildProducts.path("fixture-supervised")), role: generic, arguments: [\(arguments)]}

            """
        let scenario = "name: slow\nstart: 2026-11-23T06:00\nsteps:\n" + steps.map { "  - {after: 1m, publish: \($0)}\n" }.joined()
        return try ScenarioRun.run(configuration: configuration, scenario: scenario, timeoutSeconds: 120)
    }

    private func exits(_ run: ScenarioRun) -> [String] { run.events("plugin.exited").compactMap { $0.bodyValue["how"]?.stringValue } }

    /// The bus's first start waits, in virtual time, for a plugin slow to say hello past `startupTimeoutMs` while at
    /// work (as on a machine busy with other work): going on without it would journal `startup-timeout` and its late
    /// return by process timing. One hung before its hello (asleep, using no CPU) is gone on without, and killed.
    func testTheFirstStartWaitsForAPluginStillStartingAtWorkAndNotForAHungOne() throws {
        func play(_ how: String) throws -> ScenarioRun {
            try playWorker(bus: "{heartbeatMs: 100, sessionTimeoutMs: 30000, startupTimeoutMs: 300}", arguments: "--slow-first-start, \(how), \"1500\"",
                           steps: ["{topic: app.sup.ping, body: {n: 1}}"])
        }
        func errorCodes(_ run: ScenarioRun) -> [String] { run.events("bus.error").compactMap { $0.bodyValue["code"]?.stringValue } }

        let slow = try play("spin")
        XCTAssertEqual(slow.exitStatus, 0, slow.errors)
        XCTAssertEqual(errorCodes(slow), [], "a start at work is waited for")
        XCTAssertEqual(slow.journal.map(\.topic).filter { $0.hasPrefix("plugin.") || $0 == "bus.ready" }, ["plugin.started", "plugin.up", "bus.ready"],
                       "announced at the first bus.ready, never killed")
        XCTAssertEqual(slow.events("app.sup.pong").count, 1, slow.errors)

        let hung = try play("sleep")
        XCTAssertEqual(errorCodes(hung).first, "startup-timeout", "the bus went on without a hung start: \(hung.errors)")
        XCTAssertEqual(exits(hung).filter { $0.contains("SIGKILL") }.count, 1, "a hung start is killed: \(exits(hung)); \(hung.errors)")
        XCTAssertEqual(hung.events("app.sup.pong").count, 1, "its next start answers: \(hung.errors)")
    }

    /// A plugin at work in a long handler sends no heartbeat: in virtual time, silent past `sessionTimeoutMs` while its
    /// CPU time rises (as on a machine busy with other work), it is late, not stopped — its session is not ended nor
    /// its process killed, which would journal its exit and restart by process timing. One hung in its handler (asleep,
    /// using no CPU) is still ended at the limit and killed.
    func testASilentPluginStillAtWorkKeepsItsSessionAndAHungOneIsKilled() throws {
        func play(_ step: String) throws -> ScenarioRun {
            try playWorker(bus: "{heartbeatMs: 100, sessionTimeoutMs: 400, ackTimeoutMs: 30000}", steps: [step, "{topic: app.sup.ping, body: {n: 1}}"])
        }

        let working = try play("{topic: app.sup.work, body: {ms: 1500}}")
        XCTAssertEqual(working.exitStatus, 0, working.errors)
        XCTAssertEqual(exits(working), [], "a plugin at work was ended: \(working.errors)")
        XCTAssertEqual(working.journal.map(\.topic).filter { $0.hasPrefix("app.sup.") }, ["app.sup.work", "app.sup.worked", "app.sup.ping", "app.sup.pong"])

        let hung = try play("{topic: app.sup.echo-then-hang, body: {n: 1}}")
        XCTAssertEqual(exits(hung).filter { $0.contains("SIGKILL") }.count, 1, "a hung plugin is killed: \(exits(hung)); \(hung.errors)")
        let down = hung.events("plugin.down").compactMap { $0.bodyValue["reason"]?.stringValue }
        XCTAssertEqual(down.filter { $0.hasPrefix("heartbeat-timeout") }.count, 1, "its session ended for its silence: \(down)")
        XCTAssertEqual(hung.events("app.sup.pong").count, 1, "its next process answers: \(hung.errors)")
    }
}
