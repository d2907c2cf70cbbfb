import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

extension ShortLivedExtensionTests {
    /// Launched from its template (the default in a sandbox), a short-lived extension is a new process per callback
    /// with nothing of the last one's memory — neither its instance nor the program's globals — and the day is the
    /// one plain launches play.
    func testLaunchesFromTheTemplateAreFreshProcessesAndPlayTheDayPlainLaunchesPlay() throws {
        let configuration = Self.configuration("memory", monitor: "fixture-memory-monitor")
        let day = "name: memory\nstart: 2026-11-23T06:30\nsteps: []\nend: day 1 09:30\n"
        let arguments = ["--profile", "ios-realistic", "--seed", "5"]
        let runs = try ScenarioRun.runAll([(configuration, day, arguments), (configuration, day, arguments + ["--plain-launches"])])
        for run in runs { XCTAssertEqual(run.exitStatus, 0, run.errors) }
        let (forked, plain) = (runs[0].events("app.test.memory"), runs[1].events("app.test.memory"))
        XCTAssertEqual(forked.count, 3)
        for (name, key) in [("the instance", "seen"), ("the program's global", "process")] {
            XCTAssertEqual(Set(forked.compactMap { $0.bodyValue[key]?.intValue }), [1], "\(name) is fresh at every launch")
        }
        let pids = forked.compactMap { $0.bodyValue["pid"]?.intValue }
        XCTAssertEqual(Set(pids).count, 3, "a process per callback: \(pids)")
        XCTAssertTrue(pids.allSatisfy { $0 > 1 }, "forked from the template, the first process of the sandbox: \(pids)")
        XCTAssertEqual(Set(plain.compactMap { $0.bodyValue["pid"]?.intValue }), [1], "executed, each the first process of its own sandbox")
        XCTAssertEqual(withoutPIDs(runs[0].journal), withoutPIDs(runs[1].journal))
    }

    /// A plugin the scenario launches again (here at a device restart) has its template started with the run, as a
    /// short-lived extension has: its first launch is forked too, where a plugin launched once is executed. The day
    /// is the one plain launches play.
    func testAPluginTheScenarioLaunchesAgainIsForkedFromItsFirstLaunch() throws {
        let configuration = Self.configuration("memory", monitor: "fixture-memory-monitor")
        let day = "name: memory\nstart: 2026-11-23T06:30\nsteps:\n  - at: \"07:30\"\n    restart: true\nend: day 1 09:30\n"
        let runs = try ScenarioRun.runAll([(configuration, day, ["--profile", "faithful"]),
                                           (configuration, day, ["--profile", "faithful", "--plain-launches"])])
        for run in runs { XCTAssertEqual(run.exitStatus, 0, run.errors) }
        let (forked, plain) = (runs[0].events("app.test.memory"), runs[1].events("app.test.memory"))
        XCTAssertEqual(forked.count, 3, runs[0].errors)
        let pids = forked.compactMap { $0.bodyValue["pid"]?.intValue }
        XCTAssertEqual(pids.count, 3)
        XCTAssertTrue(pids.allSatisfy { $0 > 1 }, "forked from the template from the first launch on: \(pids)")
        XCTAssertEqual(Set(plain.compactMap { $0.bodyValue["pid"]?.intValue }), [1], "executed, each the first process of its own sandbox")
        XCTAssertEqual(withoutPIDs(runs[0].journal), withoutPIDs(runs[1].journal))
    }

    /// A launch forked from its template ends without the exit handlers, which would flush C stdio: what its callback
    /// printed (buffered, as standard output is a file) still reaches the plugin's log, once per launch.
    func testWhatALaunchFromTheTemplatePrintedReachesItsLog() throws {
        let configuration = Self.configuration("memory", monitor: "fixture-memory-monitor")
        let day = "name: memory\nstart: 2026-11-23T06:30\nsteps: []\nend: day 1 09:30\n"
        let runtime = TemporaryDirectory(prefix: "sbs-log")
        let run = try ScenarioRun.run(configuration: configuration, scenario: day,
                                      arguments: ["--profile", "ios-realistic", "--seed", "5", "--runtime-dir", runtime.file("run")])
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertEqual(run.events("app.test.memory").count, 3, run.errors)
        let log = try String(contentsOfFile: runtime.file("run/logs/monitor.log"), encoding: .utf8)
        let printed = log.split(separator: "\n").filter { $0.hasPrefix("memory callback ") }
        XCTAssertEqual(printed, ["memory callback memory.0", "memory callback memory.1", "memory callback memory.2"], log)
    }

    /// A day's journal but for the pids the memory monitor says: the same events at the same times.
    private func withoutPIDs(_ journal: [Envelope]) -> [String] {
        journal.map { "\($0.seq) \($0.time) \($0.topic) \($0.topic == "app.test.memory" ? "" : String(decoding: $0.body, as: UTF8.self))" }
    }
}
