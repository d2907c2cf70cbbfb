import BusProtocol
import Foundation
import XCTest

/// One complete `shieldbus run --scenario` as a child process, with its journal, output and exit status.
public struct ScenarioRun {
    /// The exit status, or 128 + the signal that ended the run.
    public let exitStatus: Int32
    public let output: String
    public let errors: String
    public let journal: [Envelope]
    public let journalBytes: Data

    /// Runs a scenario to its end with the given configuration and scenario texts (YAML).
    /// `stateDirectory` lets two runs share a device; `arguments` are added to the command.
    public static func run(configuration: String, scenario: String, arguments: [String] = [], stateDirectory: String? = nil,
                           timeoutSeconds: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws -> ScenarioRun {
        try start(configuration: configuration, scenario: scenario, arguments: arguments, stateDirectory: stateDirectory, file: file, line: line)
            .finish(timeoutSeconds: timeoutSeconds, file: file, line: line)
    }

    /// Runs the scenarios `jobs` at a time and gives their runs in the same order. A virtual run takes one process's
    /// turn at a time, so it keeps about one core busy: on two cores two runs take the time of one.
    public static func runAll(_ scenarios: [(configuration: String, scenario: String, arguments: [String])], jobs: Int = ProcessInfo.processInfo.activeProcessorCount,
                              timeoutSeconds: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws -> [ScenarioRun] {
        var started: [StartedScenarioRun] = [], runs: [ScenarioRun] = []
        while runs.count < scenarios.count {
            while started.count < scenarios.count && started.count - runs.count < max(1, jobs) {
                let next = scenarios[started.count]
                started.append(try start(configuration: next.configuration, scenario: next.scenario, arguments: next.arguments, file: file, line: line))
            }
            runs.append(try started[runs.count].finish(timeoutSeconds: timeoutSeconds, file: file, line: line))
        }
        return runs
    }

    /// Starts `shieldbus run --scenario` in its own temporary directory (runtime, state unless given, journal).
    public static func start(configuration: String, scenario: String, arguments: [String] = [], stateDirectory: String? = nil,
                             file: StaticString = #filePath, line: UInt = #line) throws -> StartedScenarioRun {
        let work = TemporaryDirectory(prefix: "sbs")
        // SHIELDBUS_KEEP_TEST_RUNS=1 keeps each run's configuration, scenario, journal and logs for a look afterwards.
        if ProcessInfo.processInfo.environment["SHIELDBUS_KEEP_TEST_RUNS"] == "1" {
            work.keep = true
            print("scenario run kept in \(work.path)")
        }
        let configPath = work.file("config.yml"), scenarioPath = work.file("scenario.yml")
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        try scenario.write(toFile: scenarioPath, atomically: true, encoding: .utf8)
        let catalog = BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path
        if !configuration.contains("catalog:") {
            try (configuration + "\ncatalog: \(catalog)\n").write(toFile: configPath, atomically: true, encoding: .utf8)
        }
        let started = StartedScenarioRun(work: work)
        started.process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus", file: file, line: line))
        started.process.arguments = ["run", "--config", configPath, "--scenario", scenarioPath, "--runtime-dir", work.file("run"),
                                     "--journal", started.journalPath, "--state-dir", stateDirectory ?? work.file("state")] + arguments
        try started.process.run(outputTo: started.outputPath, errorsTo: started.errorPath)
        return started
    }

    /// A shipped configuration (`Config/<name>.yml`) without its own scenario, its plugins pointing at the built executables.
    public static func shippedConfiguration(_ name: String) throws -> String {
        var text = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Config/\(name).yml"), encoding: .utf8)
        text = text.replacingOccurrences(of: "scenario: scenarios/\(name.replacingOccurrences(of: ".yml", with: ""))-day.yml\n", with: "")
        for plugin in ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "report-builder", "notifier"] {
            text = text.replacingOccurrences(of: "executable: \(plugin)", with: "executable: \(BuildProducts.path(plugin))")
        }
        return text
    }

    /// The events on a topic, in order.
    public func events(_ topic: String) -> [Envelope] { journal.filter { $0.topic == topic } }
}

/// A `shieldbus run --scenario` under way; `finish` waits for its end and reads what it left. One dropped unfinished
/// is killed.
public final class StartedScenarioRun {
    let process = Process()
    let work: TemporaryDirectory
    var journalPath: String { work.file("journal.jsonl") }
    var outputPath: String { work.file("stdout") }
    var errorPath: String { work.file("stderr") }

    init(work: TemporaryDirectory) { self.work = work }

    /// Waits (a bound, not a guess) for the run to end, then reads its journal, output and exit status.
    public func finish(timeoutSeconds: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws -> ScenarioRun {
        waitUntil("the scenario run to end", timeoutSeconds: timeoutSeconds, file: file, line: line) { !process.isRunning }
        stop()
        assertNoPluginOutlivesItsBroker(runtimeDirectory: work.file("run"), file: file, line: line)
        let journalBytes = FileManager.default.contents(atPath: journalPath) ?? Data()
        let journal = try JournalLines.decode(journalBytes)
        // A signal's end is told apart from an exit status as a shell does (128 + the signal): SIGQUIT is not exit 3.
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return ScenarioRun(exitStatus: status,
                           output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
                           errors: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "",
                           journal: journal, journalBytes: journalBytes)
    }

    private func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}
