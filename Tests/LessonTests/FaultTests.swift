import AppGroupStore
import BusClient
import BusProtocol
import Configuration
import DeviceOS
import Foundation
import LockInvariant
import ShieldBusTestSupport
import UsageReports
import XCTest

/// The fault run: the soak's random days under ios-realistic, with every plugin process SIGKILLed at random,
/// seeded moments. Nothing is lost: the lock invariant holds and the stored daily usage equals the fault-free
/// run's. More days or seeds: SHIELDBUS_FAULT_DAYS, SHIELDBUS_FAULT_SEEDS (`make faults`).
final class FaultTests: XCTestCase {
    static let plugins = ["monitor", "shield", "action", "app", "reports", "notifier"]
    let group = "group.dev.shieldbus.habitlock"

    func configuration() throws -> String {
        var text = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Config/habit-lock.yml"), encoding: .utf8)
        text = text.replacingOccurrences(of: "scenario: scenarios/habit-lock-day.yml\n", with: "")
        for name in ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "report-builder", "notifier"] {
            text = text.replacingOccurrences(of: "executable: \(name)", with: "executable: \(BuildProducts.path(name))")
        }
        return text + "\ncatalog: \(BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)\n"
    }

    /// Every stored day of the report builder in a state folder.
    func storedDays(_ state: String) throws -> [String: DayUsage] {
        let defaults = try SharedDefaults(suiteName: group, container: AppGroupContainer(root: URL(fileURLWithPath: state + "/appgroups")))
        var days: [String: DayUsage] = [:]
        for key in try defaults.allKeys where key.hasPrefix("reports.day.") { days[key] = try defaults.value(DayUsage.self, forKey: key) }
        return days
    }

    /// Runs `scenario` while killing a random plugin's process every 0.4–2 s of wall time (seeded) — never one
    /// killed in the last 8 s, which would be a crash loop (5 failures in 30 s), not a fault; returns the
    /// journal, the exit status, how many processes were killed and the broker's output.
    func runKilling(_ scenario: String, seed: UInt64, work: TemporaryDirectory) throws -> (run: [Envelope], exitStatus: Int32, kills: Int, errors: String) {
        try configuration().write(toFile: work.file("config.yml"), atomically: true, encoding: .utf8)
        try scenario.write(toFile: work.file("scenario.yml"), atomically: true, encoding: .utf8)
        let runtime = RuntimeDirectory(path: work.file("run"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        process.arguments = ["run", "--config", work.file("config.yml"), "--scenario", work.file("scenario.yml"), "--runtime-dir", runtime.path,
                             "--journal", work.file("journal.jsonl"), "--state-dir", work.file("state"), "--quiet"]
        _ = FileManager.default.createFile(atPath: work.file("stderr"), contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: work.file("stderr"))
        try process.run()
        var random = SeededRandom(seed: seed ^ 0xFA17)
        var kills = 0
        var lastKilled: [String: Date] = [:]
        var nextKill = Date().addingTimeInterval(Double.random(in: 0.4...2, using: &random))
        let deadline = Date().addingTimeInterval(600)
        while process.isRunning && Date() < deadline {
            if Date() >= nextKill {
                let victim = Self.plugins.randomElement(using: &random)!
                nextKill = Date().addingTimeInterval(Double.random(in: 0.4...2, using: &random))
                if let last = lastKilled[victim], Date().timeIntervalSince(last) < 8 { continue }
                let connection = try? BusConnection(endpoint: runtime.brokerEndpoint(), hello: Hello(name: "fault-\(kills)", role: .tool, subscriptions: []))
                let status = try? connection?.status(timeoutMilliseconds: 1000)
                connection?.close()
                if let pid = status?["plugins"]?.arrayValue?.first(where: { $0["name"]?.stringValue == victim })?["pid"]?.intValue, pid > 0 {
                    kill(pid_t(pid), SIGKILL)
                    kills += 1
                    lastKilled[victim] = Date()
                }
            }
            usleep(5_000)  // a poll interval between kill moments, not a wait for something to happen
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: work.file("journal.jsonl"), encoding: .utf8)) ?? ""
        let journal = try text.split(separator: "\n").map { try WireCodec.decodeEnvelope(Array($0.utf8)) }
        return (journal, process.terminationStatus, kills, (try? String(contentsOfFile: work.file("stderr"), encoding: .utf8)) ?? "")
    }

    func testKillingEveryPluginAtRandomLosesNothing() throws {
        let environment = ProcessInfo.processInfo.environment
        let days = Int(environment["SHIELDBUS_FAULT_DAYS"] ?? "") ?? 1
        let seeds = (environment["SHIELDBUS_FAULT_SEEDS"] ?? "5").split(separator: ",").compactMap { UInt64($0) }
        let configuration = try configuration()
        let parsed = try ShieldBusConfiguration.parse(YAMLValue.parse(configuration, file: "habit-lock.yml"))
        let catalog = try AppCatalog.load(path: BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        let checker = try LockInvariantChecker(configuration: parsed, catalog: catalog)
        for seed in seeds {
            let scenario = HeavyUserDays(seed: seed, days: days).scenario
            let calm = TemporaryDirectory(prefix: "sbcalm")
            let reference = try ScenarioRun.run(configuration: configuration, scenario: scenario, stateDirectory: calm.file("state"), timeoutSeconds: 300)
            XCTAssertEqual(reference.exitStatus, 0, "seed \(seed): the fault-free run: \(reference.errors)")

            let work = TemporaryDirectory(prefix: "sbfault")
            let faulty = try runKilling(scenario, seed: seed, work: work)
            XCTAssertEqual(faulty.exitStatus, 0, "seed \(seed): the fault run: \(faulty.errors)")
            XCTAssertGreaterThan(faulty.kills, 0, "seed \(seed): no process was killed")
            let exits = faulty.run.filter { $0.topic == "plugin.exited" && $0.bodyValue["how"]?.stringValue?.contains("SIGKILL") == true }
            // A kill may come just as a short-lived extension ends by itself; most hit a running process.
            XCTAssertGreaterThan(exits.count, faulty.kills / 2, "seed \(seed): the kills hit running plugins")
            let violations = checker.verdicts(for: faulty.run).flatMap(\.violations)
            XCTAssertEqual(violations.map(\.description), [], "seed \(seed) (replay: SHIELDBUS_FAULT_SEEDS=\(seed) SHIELDBUS_FAULT_DAYS=\(days)) broke the lock invariant")
            let lost = faulty.run.filter { ["delivery-abandoned", "delivery-log-full", "storage-failed"].contains($0.bodyValue["code"]?.stringValue ?? "") }
            XCTAssertEqual(lost.map(\.bodyValue.jsonText), [], "seed \(seed): deliveries given up")
            let expected = try storedDays(calm.file("state"))
            XCTAssertFalse(expected.isEmpty)
            XCTAssertEqual(try storedDays(work.file("state")), expected, "seed \(seed): the daily usage differs from the fault-free run's (\(faulty.kills) kills)")
            print("fault run seed \(seed): \(days) day(s), \(faulty.kills) plugin processes killed, \(violations.count) violations")
        }
    }
}
