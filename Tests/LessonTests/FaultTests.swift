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

/// The fault runs: the soak's random days under ios-realistic, with every plugin process SIGKILLed at random,
/// seeded moments, and with the broker itself SIGKILLed at seeded steps and continued by `shieldbus run --resume`.
/// Nothing is lost: the lock invariant holds and the stored usage equals the reference run's. More days or seeds:
/// SHIELDBUS_FAULT_DAYS, SHIELDBUS_FAULT_SEEDS (`make faults`).
final class FaultTests: XCTestCase {
    static let plugins = ["monitor", "shield", "action", "app", "reports", "notifier"]
    let group = "group.dev.shieldbus.habitlock"

    /// The habit lock, its unlocks (the plugins' and the promise's) lasting `unlockMinutes`.
    func configuration(unlockMinutes: Int = 30) throws -> String {
        var text = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Config/habit-lock.yml"), encoding: .utf8)
        text = text.replacingOccurrences(of: "scenario: scenarios/habit-lock-day.yml\n", with: "")
            .replacingOccurrences(of: "unlockMinutes: 30", with: "unlockMinutes: \(unlockMinutes)")
            .replacingOccurrences(of: "{habits: 3, minutes: 30}", with: "{habits: 3, minutes: \(unlockMinutes)}")
        for name in ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "report-builder", "notifier"] {
            text = text.replacingOccurrences(of: "executable: \(name)", with: "executable: \(BuildProducts.path(name))")
        }
        return text + "\ncatalog: \(BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)\n"
    }

    /// How many days and which seeds: one day of seed 5 unless SHIELDBUS_FAULT_DAYS / SHIELDBUS_FAULT_SEEDS say otherwise.
    static var daysAndSeeds: (days: Int, seeds: [UInt64]) {
        let environment = ProcessInfo.processInfo.environment
        return (Int(environment["SHIELDBUS_FAULT_DAYS"] ?? "") ?? 1,
                (environment["SHIELDBUS_FAULT_SEEDS"] ?? "5").split(separator: ",").compactMap { UInt64($0) })
    }

    /// The lock invariant of the product the fault runs play.
    func lockChecker(_ configuration: String) throws -> LockInvariantChecker {
        let parsed = try ShieldBusConfiguration.parse(YAMLValue.parse(configuration, file: "habit-lock.yml"))
        let catalog = try AppCatalog.load(path: BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        return try LockInvariantChecker(configuration: parsed, catalog: catalog)
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
        var lastKilled: [String: Date] = [:]
        var kills = 0
        let run = try runFaulting(scenario, seed: seed ^ 0xFA17, work: work) { _, runtime, random in
            let victim = Self.plugins.randomElement(using: &random)!
            if let last = lastKilled[victim], Date().timeIntervalSince(last) < 8 { return false }
            let connection = try? BusConnection(endpoint: runtime.brokerEndpoint(), hello: Hello(name: "fault-\(kills)", role: .tool, subscriptions: []))
            let status = try? connection?.status(timeoutMilliseconds: 1000)
            connection?.close()
            guard let pid = status?["plugins"]?.arrayValue?.first(where: { $0["name"]?.stringValue == victim })?["pid"]?.intValue, pid > 0 else { return false }
            kill(pid_t(pid), SIGKILL)
            kills += 1
            lastKilled[victim] = Date()
            return true
        }
        return (run.run, run.exitStatus, run.faults, run.errors)
    }

    /// Runs `scenario` (virtual time) while `inject` puts a fault into the running device — the broker's process,
    /// its runtime directory — at seeded moments `pace` seconds of wall time apart, and says whether it did; returns
    /// the journal, the exit status, how many faults were injected and the broker's output.
    func runFaulting(_ scenario: String, seed: UInt64, pace: ClosedRange<Double> = 0.4...2, firstFault: ClosedRange<Double>? = nil, work: TemporaryDirectory,
                     inject: (_ broker: Process, _ runtime: RuntimeDirectory, _ random: inout SeededRandom) throws -> Bool)
        throws -> (run: [Envelope], exitStatus: Int32, faults: Int, errors: String) {
        try configuration().write(toFile: work.file("config.yml"), atomically: true, encoding: .utf8)
        try scenario.write(toFile: work.file("scenario.yml"), atomically: true, encoding: .utf8)
        let runtime = RuntimeDirectory(path: work.file("run"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        process.arguments = ["run", "--config", work.file("config.yml"), "--scenario", work.file("scenario.yml"), "--runtime-dir", runtime.path,
                             "--journal", work.file("journal.jsonl"), "--state-dir", work.file("state"), "--quiet"]
        try process.run(outputTo: nil, errorsTo: work.file("stderr"))
        var random = SeededRandom(seed: seed)
        var faults = 0
        var nextFault = Date().addingTimeInterval(Double.random(in: firstFault ?? pace, using: &random))
        let deadline = Date().addingTimeInterval(600)
        while process.isRunning && Date() < deadline {
            if Date() >= nextFault {
                if try inject(process, runtime, &random) { faults += 1 }
                nextFault = Date().addingTimeInterval(Double.random(in: pace, using: &random))
            }
            usleep(5_000)  // a poll interval between fault moments, not a wait for something to happen
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let journal = try JournalLines.read(work.file("journal.jsonl"))
        return (journal, process.terminationStatus, faults, (try? String(contentsOfFile: work.file("stderr"), encoding: .utf8)) ?? "")
    }

    func testKillingEveryPluginAtRandomLosesNothing() throws {
        let (days, seeds) = Self.daysAndSeeds
        let configuration = try configuration()
        let checker = try lockChecker(configuration)
        for seed in seeds {
            let scenario = HeavyUserDays(seed: seed, days: days).scenario
            let calm = TemporaryDirectory(prefix: "sbcalm")
            // Played beside the fault run: a virtual run keeps about one core busy.
            let fullRun = try ScenarioRun.start(configuration: configuration, scenario: scenario, stateDirectory: calm.file("state"))
            let work = TemporaryDirectory(prefix: "sbfault")
            let faulty = try runKilling(scenario, seed: seed, work: work)
            let reference = try fullRun.finish(timeoutSeconds: 300)
            XCTAssertEqual(reference.exitStatus, 0, "seed \(seed): the fault-free run: \(reference.errors)")

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

    // MARK: The broker killed mid-scenario

    /// Plays `scenario` with `shieldbus run`, the broker killing itself (SIGKILL) when each step of `crashes` is
    /// due and `shieldbus run --resume` going on from there on the same state folder and journal; returns the
    /// journal and how each broker process ended.
    /// With `clock` and `killAfter` instead: each broker but the last is SIGKILLed by this test that many seconds of
    /// wall time after its start-up `bus.ready`.
    func runCrashingBroker(_ scenario: String, at crashes: [Int], clock: [String] = [], killAfter: [Double] = [],
                           configuration chosen: String? = nil,
                           work: TemporaryDirectory) throws -> (journal: Data, endings: [String], errors: String) {
        try runCrashingBroker(scenario, crashing: killAfter.isEmpty ? crashes.map { ["--crash-at-step", "\($0)"] } : killAfter.map { _ in [] },
                              clock: clock, killAfter: killAfter, configuration: chosen, work: work)
    }

    /// As `runCrashingBroker(_:at:…)`, each broker but the last killing itself where its arguments in `crashes` say
    /// (`--crash-at-step N`, `--crash-before-saving TOPIC`…; none with `killAfter`); `afterKill` looks at the state
    /// folder a killed broker left, before the next one starts.
    func runCrashingBroker(_ scenario: String, crashing crashes: [[String]], clock: [String] = [], killAfter: [Double] = [],
                           configuration chosen: String? = nil, afterKill: () throws -> Void = {},
                           work: TemporaryDirectory) throws -> (journal: Data, endings: [String], errors: String) {
        try (chosen ?? configuration()).write(toFile: work.file("config.yml"), atomically: true, encoding: .utf8)
        try scenario.write(toFile: work.file("scenario.yml"), atomically: true, encoding: .utf8)
        var endings: [String] = []
        var errors = ""
        for (run, crash) in (crashes + [[]]).enumerated() {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
            process.arguments = ["run", "--config", work.file("config.yml"), "--scenario", work.file("scenario.yml"), "--runtime-dir", work.file("run"),
                                 "--journal", work.file("journal.jsonl"), "--state-dir", work.file("state"), "--quiet"]
                + clock + (run > 0 ? ["--resume"] : []) + crash
            let errorPath = work.file("stderr-\(run)")
            try process.run(outputTo: nil, errorsTo: errorPath)
            if run < killAfter.count {
                let readyBefore = run
                waitUntil("broker run \(run) to be ready", timeoutSeconds: 60) {
                    let text = (try? String(contentsOfFile: work.file("journal.jsonl"), encoding: .utf8)) ?? ""
                    return text.components(separatedBy: "\"startup\":true").count - 1 > readyBefore || !process.isRunning
                }
                let killAt = Date().addingTimeInterval(killAfter[run])
                waitUntil("the moment to kill broker run \(run)", timeoutSeconds: killAfter[run] + 5) { Date() >= killAt || !process.isRunning }
                kill(process.processIdentifier, SIGKILL)
            }
            waitUntil("broker run \(run) to end", timeoutSeconds: 300) { !process.isRunning }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            endings.append(process.terminationReason == .uncaughtSignal ? "signal \(process.terminationStatus)" : "exit \(process.terminationStatus)")
            errors += (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            if run < crashes.count { try afterKill() }
        }
        return (FileManager.default.contents(atPath: work.file("journal.jsonl")) ?? Data(), endings, errors)
    }

    /// Every App-Group value of the product's group (habits, unlock, passes, stored days…), as JSON.
    func storedValues(_ state: String) throws -> [String: String] {
        let defaults = try SharedDefaults(suiteName: group, container: AppGroupContainer(root: URL(fileURLWithPath: state + "/appgroups")))
        var values: [String: String] = [:]
        for key in try defaults.allKeys { values[key] = try defaults.entry(forKey: key).map(\.rawJSON) }
        return values
    }

    /// The broker SIGKILLed at seeded steps of random days (virtual time) and resumed each time: every step is
    /// played once, sequence numbers and bus time go on, nothing is given up, the lock invariant holds, the
    /// product's stored state (habits, unlocks, daily usage) equals that of the same days with the crashes played
    /// in-process (`crashBroker`, which loses what a crash loses and nothing else), and the same seed and crash
    /// points give the same journal, byte for byte.
    func testKillingTheBrokerMidScenarioLosesNothingAndRepeatsByteForByte() throws {
        let (days, seeds) = Self.daysAndSeeds
        let configuration = try configuration()
        let checker = try lockChecker(configuration)
        for seed in seeds {
            let scenario = HeavyUserDays(seed: seed, days: days).scenario
            let lines = scenario.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            // Steps are numbered from 1; a crash comes where a step has a time of its own (not "after" the last).
            var steps = 0
            var timed: [Int] = []
            for line in lines where line.hasPrefix("  - ") {
                steps += 1
                if line.hasPrefix("  - at:") { timed.append(steps) }
            }
            var random = SeededRandom(seed: seed ^ 0xB20C)
            let crashes = Set((0..<(1 + days)).map { _ in timed.randomElement(using: &random)! }).sorted()
            var reference: [String] = []
            steps = 0
            for line in lines {
                if line.hasPrefix("  - ") {
                    steps += 1
                    if crashes.contains(steps) { reference += [line, "    crashBroker: true"] }
                }
                reference.append(line)
            }
            let calm = TemporaryDirectory(prefix: "sbcalm")
            // Played beside the killed run: a virtual run keeps about one core busy.
            let inProcess = try ScenarioRun.start(configuration: configuration, scenario: reference.joined(separator: "\n"), stateDirectory: calm.file("state"))
            let first = TemporaryDirectory(prefix: "sbkill")
            let killed = try runCrashingBroker(scenario, at: crashes, work: first)
            let simulated = try inProcess.finish(timeoutSeconds: 300)
            XCTAssertEqual(simulated.exitStatus, 0, "seed \(seed): the run with the crashes played in-process: \(simulated.errors)")

            let replay = "replay: SHIELDBUS_FAULT_SEEDS=\(seed) SHIELDBUS_FAULT_DAYS=\(days); crashes before steps \(crashes)"
            XCTAssertEqual(killed.endings, crashes.map { _ in "signal \(SIGKILL)" } + ["exit 0"], "seed \(seed) (\(replay)): \(killed.errors)")
            let journal = try JournalLines.decode(killed.journal)
            XCTAssertEqual(journal.filter { $0.topic == "bus.started" }.count, crashes.count + 1)
            XCTAssertTrue(zip(journal, journal.dropFirst()).allSatisfy { $0.seq < $1.seq && $0.time <= $1.time },
                          "seed \(seed): sequence numbers and bus time go on across the crashes")
            let played = journal.compactMap { $0.topic == "scenario.step" ? $0.bodyValue["step"]?.intValue : nil }
            XCTAssertEqual(played, (1...Int64(steps)).map { $0 }, "seed \(seed): every step played once, in order (\(replay))")
            XCTAssertTrue(journal.contains { $0.topic == "scenario.ended" })
            let violations = checker.verdicts(for: journal).flatMap(\.violations)
            XCTAssertEqual(violations.map(\.description), [], "seed \(seed) broke the lock invariant (\(replay))")
            let lost = journal.filter { ["delivery-abandoned", "delivery-log-full", "storage-failed"].contains($0.bodyValue["code"]?.stringValue ?? "") }
            XCTAssertEqual(lost.map(\.bodyValue.jsonText), [], "seed \(seed): deliveries given up")
            let expected = try storedValues(calm.file("state"))
            XCTAssertFalse(expected.isEmpty)
            let stored = try storedValues(first.file("state"))
            for key in Set(expected.keys).union(stored.keys).sorted() where !key.hasPrefix("reports.recorder") {
                XCTAssertEqual(stored[key], expected[key], "seed \(seed): '\(key)' differs from the run with in-process crashes (\(replay))")
            }

            let second = TemporaryDirectory(prefix: "sbkill")
            let again = try runCrashingBroker(scenario, at: crashes, work: second)
            XCTAssertTrue(again.journal == killed.journal, "seed \(seed): the same crashes give the same journal, byte for byte (\(replay))")
            print("broker fault run seed \(seed): \(days) day(s), \(steps) steps, broker killed before steps \(crashes), \(violations.count) violations")
        }
    }

    /// The broker SIGKILLed while an app is in use (a real kill records nothing as it dies): the use up to the kill
    /// still counts toward the speed bump's threshold, which comes when the use adds up to 30 minutes — whatever
    /// the moment of the kill. Facebook is used from 07:31 for `m` minutes, the broker is killed, Snapchat is
    /// opened at 07:32 + m: the threshold is due at 08:02 on every day (without the stored use in progress it came
    /// m minutes later).
    func testABrokerKilledDuringUseStillCountsThatUseTowardTheThreshold() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        for (minutes, zone) in [(20, "America/New_York"), (7, "Europe/Berlin"), (28, "Asia/Tokyo"), (1, "Australia/Sydney")] {
            func clock(_ minutesAfterSeven: Int) -> String { String(format: "%02d:%02d:00", 7 + minutesAfterSeven / 60, minutesAfterSeven % 60) }
            let scenario = """
                name: speed-bump-killed-during-use
                start: 2026-03-07T07:30
                timeZone: \(zone)
                profile: faithful
                end: day 1 08:30
                steps:
                  - {at: "\(clock(31))", open: Facebook}
                  - {at: "\(clock(31 + minutes))", home: true}
                  - {at: "\(clock(32 + minutes))", open: Snapchat}

                """
            let work = TemporaryDirectory(prefix: "sbkilluse")
            let killed = try runCrashingBroker(scenario, at: [2], configuration: configuration, work: work)
            let context = "killed after \(minutes) min of use, \(zone): \(killed.errors)"
            XCTAssertEqual(killed.endings, ["signal \(SIGKILL)", "exit 0"], "the resumed run ends cleanly, the invariant held; \(context)")
            let journal = try JournalLines.decode(killed.journal)
            let start = try XCTUnwrap(journal.first { $0.topic == "bus.started" }, context).time
            let reached = journal.filter { $0.topic == "deviceactivity.event-did-reach-threshold" && $0.bodyValue["event"]?.stringValue == "speed-bump.limit" }
            XCTAssertEqual(reached.count, 1, context)
            // The scenario starts at 07:30; the threshold is due 32 minutes later.
            XCTAssertEqual(try XCTUnwrap(reached.first, context).time - start, 32 * 60 * 1000, context)
            XCTAssertTrue(killed.errors.contains("lock invariant    held"), context)
        }
    }

    /// The broker SIGKILLed from outside at seeded wall-clock moments of a scaled-clock run (the real-time case:
    /// the kill lands anywhere, with deliveries in flight) and resumed each time: no step is played twice, bus
    /// time never runs back, nothing is given up, the lock invariant holds and every habit played is recorded.
    func testKillingTheBrokerAtRandomMomentsInScaledTimeLosesNothing() throws {
        let (_, seeds) = Self.daysAndSeeds
        let configuration = try configuration()
        let checker = try lockChecker(configuration)
        for seed in seeds {
            // The first two hours of a random day, at 240 bus seconds a wall second: 30 s of wall time, two kills.
            var lines: [String] = []
            for line in HeavyUserDays(seed: seed, days: 1).scenario.split(separator: "\n").map(String.init) {
                if line.hasPrefix("  - at: \"day 1 08:") || line.hasPrefix("end:") { break }
                lines.append(line)
            }
            let scenario = (lines + ["end: day 1 08:00"]).joined(separator: "\n") + "\n"
            var random = SeededRandom(seed: seed ^ 0x5CA1)
            let kills = [Double.random(in: 3...12, using: &random), Double.random(in: 3...12, using: &random)]
            let work = TemporaryDirectory(prefix: "sbkillrt")
            let run = try runCrashingBroker(scenario, at: [], clock: ["--clock", "scaled", "--speed", "240"], killAfter: kills, work: work)
            let replay = "replay: SHIELDBUS_FAULT_SEEDS=\(seed); kills \(kills) s after each start"
            XCTAssertEqual(run.endings, ["signal \(SIGKILL)", "signal \(SIGKILL)", "exit 0"], "seed \(seed) (\(replay)): \(run.errors)")
            let journal = try JournalLines.decode(run.journal)
            XCTAssertTrue(zip(journal, journal.dropFirst()).allSatisfy { $0.seq < $1.seq && $0.time <= $1.time },
                          "seed \(seed): sequence numbers and bus time go on across the kills")
            let played = journal.compactMap { $0.topic == "scenario.step" ? $0.bodyValue["step"]?.intValue : nil }
            XCTAssertEqual(played, played.sorted(), "seed \(seed): steps in order")
            XCTAssertEqual(Set(played).count, played.count, "seed \(seed): no step played twice (\(replay))")
            // A step is played at most once: one the kill interrupted (its progress saved, its events not yet
            // journaled) is lost, as a tap during a phone's crash is.
            let steps = lines.filter { $0.hasPrefix("  - ") }.count
            XCTAssertGreaterThanOrEqual(played.count, steps - kills.count, "seed \(seed): at most one step lost per kill (\(replay))")
            XCTAssertTrue(journal.contains { $0.topic == "scenario.ended" })
            let violations = checker.verdicts(for: journal).flatMap(\.violations)
            XCTAssertEqual(violations.map(\.description), [], "seed \(seed) broke the lock invariant (\(replay))")
            let lost = journal.filter { ["delivery-abandoned", "delivery-log-full", "storage-failed"].contains($0.bodyValue["code"]?.stringValue ?? "") }
            XCTAssertEqual(lost.map(\.bodyValue.jsonText), [], "seed \(seed): deliveries given up")
            let habits = journal.filter { $0.topic == "activity.habit.completed" }.compactMap { $0.bodyValue["habit"]?.stringValue }
            let stored = try storedValues(work.file("state")).filter { $0.key.hasPrefix("habits.") }.values.joined()
            for habit in habits { XCTAssertTrue(stored.contains(habit), "seed \(seed): habit '\(habit)' recorded (\(replay)); stored: \(stored)") }
            print("broker fault run (scaled clock) seed \(seed): broker killed \(kills) s after its starts, \(played.count) steps played, \(violations.count) violations")
        }
    }
}
