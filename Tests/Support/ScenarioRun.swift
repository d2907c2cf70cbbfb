import BusProtocol
import Foundation
import XCTest

/// One complete `shieldbus run --scenario` as a child process, with its journal, output and exit status.
public struct ScenarioRun {
    public let exitStatus: Int32
    public let output: String
    public let errors: String
    public let journal: [Envelope]
    public let journalBytes: Data

    /// Runs a scenario to its end with the given configuration and scenario texts (YAML).
    /// `stateDirectory` lets two runs share a device; `arguments` are added to the command.
    public static func run(configuration: String, scenario: String, arguments: [String] = [], stateDirectory: String? = nil,
                           timeoutSeconds: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws -> ScenarioRun {
        let work = TemporaryDirectory(prefix: "sbs")
        // SHIELDBUS_KEEP_TEST_RUNS=1 keeps each run's configuration, scenario, journal and logs for a look afterwards.
        if ProcessInfo.processInfo.environment["SHIELDBUS_KEEP_TEST_RUNS"] == "1" {
            work.keep = true
            print("scenario run kept in \(work.path)")
        }
        let configPath = work.file("config.yml"), scenarioPath = work.file("scenario.yml"), journalPath = work.file("journal.jsonl")
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        try scenario.write(toFile: scenarioPath, atomically: true, encoding: .utf8)
        let catalog = BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path
        if !configuration.contains("catalog:") {
            try (configuration + "\ncatalog: \(catalog)\n").write(toFile: configPath, atomically: true, encoding: .utf8)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus", file: file, line: line))
        process.arguments = ["run", "--config", configPath, "--scenario", scenarioPath, "--runtime-dir", work.file("run"),
                             "--journal", journalPath, "--state-dir", stateDirectory ?? work.file("state")] + arguments
        let outputPath = work.file("stdout"), errorPath = work.file("stderr")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        try process.run()
        waitUntil("the scenario run to end", timeoutSeconds: timeoutSeconds, file: file, line: line) { !process.isRunning }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let journalBytes = FileManager.default.contents(atPath: journalPath) ?? Data()
        let journal = try String(decoding: journalBytes, as: UTF8.self).split(separator: "\n").map { try WireCodec.decodeEnvelope(Array($0.utf8)) }
        return ScenarioRun(exitStatus: process.terminationStatus,
                           output: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
                           errors: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "",
                           journal: journal, journalBytes: journalBytes)
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
