// FaultClassTests: the fault classes beyond killed processes — a stalled broker, a full disk under the state folder,
// a damaged App-Group write-ahead log and the host's clock stepping — each a seeded slice of `make faults`.

import AppGroupStore
import BusProtocol
import Configuration
import Foundation
import LockInvariant
import ShieldBusTestSupport
import SQLite
import XCTest

extension FaultTests {
    /// What the lock checker and the handled-event records say of a fault run's journal: the violations, and the
    /// deliveries given up or stores that failed for good (a loss).
    func violationsAndLosses(_ journal: [Envelope], configuration: String, allowingStorageFailures: Bool = false) throws -> (violations: [String], losses: [String]) {
        let violations = try lockChecker(configuration).verdicts(for: journal).flatMap(\.violations).map(\.description)
        let lossCodes = ["delivery-abandoned", "delivery-log-full"] + (allowingStorageFailures ? [] : ["storage-failed"])
        let losses = journal.filter { lossCodes.contains($0.bodyValue["code"]?.stringValue ?? "") }.map(\.bodyValue.jsonText)
        return (violations, losses)
    }

    static func decodeJournal(_ path: String) throws -> [Envelope] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { try WireCodec.decodeEnvelope(Array($0.utf8)) }
    }

    // MARK: Stalls

    /// The broker stopped (SIGSTOP) for 0.5–7 s of wall time at seeded moments of a random day (virtual time) and
    /// woken again (SIGCONT): no plugin is killed for the broker's own silence, no call it never answered is taken
    /// as handled, nothing is given up, the lock invariant holds and the stored usage equals the fault-free run's.
    func testStallingTheBrokerKillsNoPluginAndLosesNothing() throws {
        let (days, seeds) = Self.daysAndSeeds
        let configuration = try configuration()
        for seed in seeds {
            let scenario = HeavyUserDays(seed: seed, days: days).scenario
            let calm = TemporaryDirectory(prefix: "sbcalm")
            let fullRun = try ScenarioRun.start(configuration: configuration, scenario: scenario, stateDirectory: calm.file("state"))
            let work = TemporaryDirectory(prefix: "sbstall")
            var stalled = 0.0
            // The first stall early: a virtual day may take only a few seconds of wall time.
            let faulty = try runFaulting(scenario, seed: seed ^ 0x57A1, pace: 1...4, firstFault: 0.2...0.8, work: work) { broker, _, random in
                let length = Double.random(in: 0.5...7, using: &random)
                kill(broker.processIdentifier, SIGSTOP)
                usleep(UInt32(length * 1_000_000))  // the stall's own length, not a wait for something to happen
                kill(broker.processIdentifier, SIGCONT)
                stalled += length
                return true
            }
            let reference = try fullRun.finish(timeoutSeconds: 300)
            XCTAssertEqual(reference.exitStatus, 0, "seed \(seed): the fault-free run: \(reference.errors)")
            let replay = "replay: SHIELDBUS_FAULT_SEEDS=\(seed) SHIELDBUS_FAULT_DAYS=\(days)"
            XCTAssertEqual(faulty.exitStatus, 0, "seed \(seed) (\(replay)): \(faulty.errors)")
            XCTAssertGreaterThan(faulty.faults, 0, "seed \(seed): the broker was never stopped")
            let killed = faulty.run.filter { ($0.topic == "plugin.down" && $0.bodyValue["reason"]?.stringValue?.contains("heartbeat") == true)
                || ($0.topic == "plugin.exited" && $0.bodyValue["how"]?.stringValue?.contains("SIGKILL") == true) }
            XCTAssertEqual(killed.map(\.bodyValue.jsonText), [], "seed \(seed) (\(replay)): no plugin killed for the broker's stall")
            let (violations, losses) = try violationsAndLosses(faulty.run, configuration: configuration)
            XCTAssertEqual(violations, [], "seed \(seed) (\(replay)) broke the lock invariant")
            XCTAssertEqual(losses, [], "seed \(seed) (\(replay)): deliveries given up")
            XCTAssertEqual(try storedDays(work.file("state")), try storedDays(calm.file("state")),
                           "seed \(seed) (\(replay)): the daily usage differs from the fault-free run's (\(faulty.faults) stalls)")
            print("fault class stalls seed \(seed): \(days) day(s), \(faulty.faults) stalls (\(Int(stalled.rounded())) s stopped), \(violations.count) violations, \(losses.count) losses")
        }
    }

    // MARK: A full disk

    /// The person's seeded actions (apps opened, habits done) on the habit lock (one-minute unlocks, bus time at 5×)
    /// whose state folder fills up and empties again at seeded moments: an action the device could not record is
    /// said (never "done"), and a habit so refused is done again once there is room, as the person told would.
    /// Then the broker is SIGKILLed: every habit answered "done" is stored, each ManagedSettings store holds what the
    /// journal last announced, nothing is given up, and the lock invariant holds.
    func testAFillingDiskLosesNothingTheDeviceSaidItDid() throws {
        let (_, seeds) = Self.daysAndSeeds
        let configuration = try configuration(unlockMinutes: 1)
        for seed in seeds {
            let disk = try SmallDisk(size: "16m")
            let work = TemporaryDirectory(prefix: "sbfill")
            let state = disk.path + "/state", journalPath = work.file("journal.jsonl")
            let broker = try BrokerProcess(configuration: configuration,
                                           arguments: ["--no-scenario", "--state-dir", state, "--journal", journalPath, "--clock", "scaled", "--speed", "5"])
            defer { broker.stop() }
            waitUntil("the plugins to be ready (log: \(broker.log(tail: 10)))") { ((try? Self.decodeJournal(journalPath)) ?? []).contains { $0.topic == "bus.ready" } }
            func person(_ arguments: [String]) throws -> Bool {
                try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path]).status == 0
            }
            var random = SeededRandom(seed: seed ^ 0xF111)
            var full = false, fills = 0, refused = 0
            var habitsDone: [String] = []
            let habits = ["read", "walk", "stretch"]
            let apps = HeavyUserDays.distracting + HeavyUserDays.other
            // Twenty actions; the third to fifth after the eighth are the habits. The disk fills or empties before
            // a third of them.
            for index in 0..<20 {
                if Double.random(in: 0..<1, using: &random) < 0.35 {
                    if full { try disk.free() } else { try disk.fill(); fills += 1 }
                    full.toggle()
                }
                if (8..<11).contains(index) {
                    let habit = habits[index - 8]
                    if try person(["habit", habit]) {
                        habitsDone.append(habit)
                        continue
                    }
                    XCTAssertTrue(full, "seed \(seed): the habit '\(habit)' refused with room on the disk: \(broker.log(tail: 20))")
                    refused += 1
                    // Told it was not recorded, the person does it again once there is room.
                    try disk.free()
                    full = false
                    XCTAssertTrue(try person(["habit", habit]), "seed \(seed): the habit '\(habit)' done again with room: \(broker.log(tail: 20))")
                    habitsDone.append(habit)
                } else {
                    let action = Bool.random(using: &random) ? ["home"] : ["open", apps.randomElement(using: &random)!]
                    _ = try person(action)  // refused on a full disk (the use could not be stored); the device went on
                }
            }
            if full { try disk.free() }
            // The one-minute unlock ends (12 s of wall time at 5×), and what the full disk held back is saved.
            let reblocked = waitUntil("the unlock to end and its re-block to be announced", timeoutSeconds: 60) {
                let journal = (try? Self.decodeJournal(journalPath)) ?? []
                guard let started = journal.last(where: { $0.topic == "app.unlock.started" }) else { return false }
                return journal.contains { $0.topic == "managedsettings.changed" && $0.seq > started.seq && $0.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false
                    && $0.time >= (started.bodyValue["until"]?.intValue ?? .max) }
            }
            if !reblocked {
                // What the device said of the unlock, the shields and its storage, to find out why.
                let said = ((try? Self.decodeJournal(journalPath)) ?? []).filter {
                    $0.topic.hasPrefix("app.unlock") || $0.topic == "managedsettings.changed" || $0.topic.hasPrefix("bus.error")
                        || $0.topic.hasPrefix("plugin.") || $0.topic.hasPrefix("deviceactivity.")
                }
                print("seed \(seed): the journal's unlock, shield, storage and plugin lines:\n"
                      + said.suffix(60).map { "\($0.seq) \($0.time) \($0.topic) \($0.bodyValue.jsonText.prefix(300))" }.joined(separator: "\n")
                      + "\nbroker log:\n\(broker.log(tail: 40))")
            }
            broker.stop(signal: SIGKILL)
            let journal = try Self.decodeJournal(journalPath)
            let replay = "replay: SHIELDBUS_FAULT_SEEDS=\(seed)"
            let (violations, losses) = try violationsAndLosses(journal, configuration: configuration, allowingStorageFailures: true)
            XCTAssertEqual(violations, [], "seed \(seed) (\(replay)) broke the lock invariant")
            XCTAssertEqual(losses, [], "seed \(seed) (\(replay)): deliveries given up")
            let stored = try storedValues(state).filter { $0.key.hasPrefix("habits.") }.values.joined()
            for habit in habitsDone { XCTAssertTrue(stored.contains(habit), "seed \(seed) (\(replay)): habit '\(habit)' answered done but not stored: \(stored)") }
            XCTAssertEqual(try storedShields(state), try announcedShields(journal), "seed \(seed) (\(replay)): the stores hold what the journal announced")
            let failures = journal.filter { $0.bodyValue["code"]?.stringValue == "storage-failed" }.count
            print("fault class full disk seed \(seed): \(fills) fills, \(failures) writes refused, \(refused) habits done again, \(violations.count) violations, \(losses.count) losses")
        }
    }

    /// What `device.sqlite` holds of each ManagedSettings store, by store, as JSON with sorted keys.
    func storedShields(_ state: String) throws -> [String: String] {
        let stored = try SQLiteConnection(path: state + "/device.sqlite", flags: [.readOnly])
        let json = try stored.withStatement("SELECT json FROM state WHERE key = 'managedsettings.stores'") { try $0.step() ? try $0.string(at: 0) ?? "{}" : "{}" }
        return (try JSONValue(parsing: Array(json.utf8)).objectValue ?? [:]).filter { !($0.value.objectValue?.isEmpty ?? false) }.mapValues(\.jsonText)
    }

    /// What the journal last announced of each store (`managedsettings.changed`); an empty shield is no store.
    func announcedShields(_ journal: [Envelope]) throws -> [String: String] {
        var shields: [String: String] = [:]
        for envelope in journal where envelope.topic == "managedsettings.changed" {
            guard let store = envelope.bodyValue["store"]?.stringValue else { continue }
            let shield = envelope.bodyValue["shield"] ?? .object([:])
            shields[store] = shield.objectValue?.isEmpty ?? true ? nil : shield.jsonText
        }
        return shields
    }

    // MARK: A damaged write-ahead log

    /// A random day's broker SIGKILLed at a seeded step, then the App-Group store's write-ahead log damaged — deleted,
    /// zeroed, cut at a seeded byte or with a seeded byte flipped — before `--resume`: the store is refused as damaged
    /// (naming it, nothing changed), or the resumed run loses nothing — its stored values equal those of the same
    /// resume from an undamaged copy. Never an older store taken silently.
    func testADamagedWriteAheadLogIsRefusedOrLosesNothing() throws {
        let (days, seeds) = Self.daysAndSeeds
        let configuration = try configuration()
        let damages = ["deleted", "zeroed", "cut", "flipped"]
        for seed in seeds {
            let scenario = HeavyUserDays(seed: seed, days: days).scenario
            var random = SeededRandom(seed: seed ^ 0x3A1D)
            let steps = scenario.split(separator: "\n").filter { $0.hasPrefix("  - at:") }.count
            let crash = Int.random(in: max(2, steps / 4)...max(2, steps - 2), using: &random)
            let damage = damages.randomElement(using: &random)!
            let work = TemporaryDirectory(prefix: "sbwal")
            let wal = work.file("state/appgroups/\(group).sqlite-wal")
            var walBytes = 0
            let copy = TemporaryDirectory(prefix: "sbwalref")
            let damaged = try runCrashingBroker(scenario, crashing: [["--crash-at-step", "\(crash)"]], configuration: configuration, afterKill: {
                // The undamaged copy first: the same state folder and journal, resumed as they are.
                _ = try runToEnd("/bin/cp", ["-a", work.path + "/.", copy.path])
                guard let data = FileManager.default.contents(atPath: wal), !data.isEmpty else { return }
                walBytes = data.count
                switch damage {
                case "deleted": try FileManager.default.removeItem(atPath: wal)
                case "zeroed": try Data(count: data.count).write(to: URL(fileURLWithPath: wal))
                case "cut": try data.prefix(Int.random(in: 0..<data.count, using: &random)).write(to: URL(fileURLWithPath: wal))
                default:
                    var flipped = data
                    flipped[Int.random(in: 0..<data.count, using: &random)] ^= 0x5A
                    try flipped.write(to: URL(fileURLWithPath: wal))
                }
            }, work: work)
            let replay = "replay: SHIELDBUS_FAULT_SEEDS=\(seed) SHIELDBUS_FAULT_DAYS=\(days); killed at step \(crash), the log \(damage)"
            XCTAssertEqual(damaged.endings.first, "signal \(SIGKILL)", "seed \(seed) (\(replay)): \(damaged.errors)")
            guard walBytes > 0 else {
                print("fault class damaged WAL seed \(seed): no write-ahead log was left at step \(crash) (nothing to damage)")
                continue
            }
            let reference = try resumeAsIs(scenario, configuration: configuration, work: copy)
            XCTAssertEqual(reference.ending, "exit 0", "seed \(seed) (\(replay)): the undamaged resume: \(reference.errors)")
            let outcome: String
            if damaged.endings.last == "exit 1" {
                XCTAssertTrue(damaged.errors.contains("the app-group store '\(work.file("state/appgroups/\(group).sqlite"))' is damaged"),
                              "seed \(seed) (\(replay)): refused naming the store: \(damaged.errors)")
                outcome = "refused as damaged"
            } else {
                XCTAssertEqual(damaged.endings.last, "exit 0", "seed \(seed) (\(replay)): \(damaged.errors)")
                let expected = try storedValues(copy.file("state")), stored = try storedValues(work.file("state"))
                for key in Set(expected.keys).union(stored.keys).sorted() where !key.hasPrefix("reports.recorder") {
                    XCTAssertEqual(stored[key], expected[key], "seed \(seed) (\(replay)): '\(key)' differs from the undamaged resume's")
                }
                let (violations, losses) = try violationsAndLosses(try Self.decodeJournal(work.file("journal.jsonl")), configuration: configuration)
                XCTAssertEqual(violations, [], "seed \(seed) (\(replay)) broke the lock invariant")
                XCTAssertEqual(losses, [], "seed \(seed) (\(replay))")
                outcome = "resumed losing nothing"
            }
            print("fault class damaged WAL seed \(seed): killed at step \(crash), a \(walBytes)-byte log \(damage): \(outcome); 0 violations, 0 losses")
        }
    }

    /// `shieldbus run --resume` of the scenario a killed broker left in `work`, to its end.
    func resumeAsIs(_ scenario: String, configuration: String, work: TemporaryDirectory) throws -> (ending: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        process.arguments = ["run", "--config", work.file("config.yml"), "--scenario", work.file("scenario.yml"), "--runtime-dir", work.file("run"),
                             "--journal", work.file("journal.jsonl"), "--state-dir", work.file("state"), "--quiet", "--resume"]
        try process.run(outputTo: nil, errorsTo: work.file("stderr-reference"))
        waitUntil("the undamaged resume to end", timeoutSeconds: 300) { !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let ending = process.terminationReason == .uncaughtSignal ? "signal \(process.terminationStatus)" : "exit \(process.terminationStatus)"
        return (ending, (try? String(contentsOfFile: work.file("stderr-reference"), encoding: .utf8)) ?? "")
    }

    // MARK: The host's clock stepping

    /// The host's clock stepped at seeded moments (back an hour, forward an hour, a few minutes either way) under a
    /// running broker in real time — libfaketime moves the broker's wall clock and not its clock of elapsed time —
    /// while the person earns a one-minute unlock; then the broker is SIGKILLed after a step back and started again.
    /// Bus time never runs back, runs at the true rate, the unlock re-blocks a minute of true time after it began,
    /// and the lock invariant holds.
    func testStepsOfTheHostClockNeverMoveBusTime() throws {
        let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
        guard FileManager.default.fileExists(atPath: library) else { throw XCTSkip("libfaketime is not installed (make deps installs it)") }
        let (_, seeds) = Self.daysAndSeeds
        // The plugins keep the host's clock (they read bus time anyway; a sandbox does not show libfaketime's files).
        var inPlugins = false
        let configuration = try configuration(unlockMinutes: 1).split(separator: "\n", omittingEmptySubsequences: false).flatMap { line -> [String] in
            if line == "plugins:" { inPlugins = true }
            guard inPlugins else { return [String(line)] }
            if line.hasPrefix("  - {name: ") { return [line.replacingOccurrences(of: "  - {", with: "  - {environment: {LD_PRELOAD: \"\"}, ")] }
            if line.hasPrefix("  - name: ") { return [String(line), "    environment: {LD_PRELOAD: \"\"}"] }
            return [String(line)]
        }.joined(separator: "\n")
        // libfaketime preloaded straight into a Swift program loses its arguments when it sets up its shared memory:
        // a C program (env) sets it up and starts the broker, which finds it.
        let launcher = ["/usr/bin/env"]
        for seed in seeds {
            var random = SeededRandom(seed: seed ^ 0xC10C)
            let work = TemporaryDirectory(prefix: "sbstep")
            let offsetFile = work.file("host-clock-offset")
            try "+0".write(toFile: offsetFile, atomically: true, encoding: .utf8)
            // The broker's wall clock reads the offset from the file (again every second); its elapsed-time clocks
            // are the host's own (DONT_FAKE_MONOTONIC).
            let environment = ["LD_PRELOAD": library, "FAKETIME_TIMESTAMP_FILE": offsetFile, "FAKETIME_CACHE_DURATION": "1", "DONT_FAKE_MONOTONIC": "1"]
            let state = work.file("state")
            var steps: [String] = []
            func stepHostClock() throws {
                let offset = [-3600, 3600, -600, 300, -90].randomElement(using: &random)!
                try "\(offset >= 0 ? "+" : "")\(offset)".write(toFile: offsetFile, atomically: true, encoding: .utf8)
                steps.append("\(offset) s")
            }
            func journal(_ name: String) -> [Envelope] { (try? Self.decodeJournal(work.file(name))) ?? [] }
            let wallStart = Date()
            let first = try BrokerProcess(configuration: configuration, arguments: ["--no-scenario", "--state-dir", state, "--journal", work.file("first.jsonl")],
                                          environment: environment, launcher: launcher)
            defer { first.stop() }
            waitUntil("the plugins to be ready (log: \(first.log(tail: 10)))") { journal("first.jsonl").contains { $0.topic == "bus.ready" } }
            func person(_ broker: BrokerProcess, _ arguments: String...) throws -> Int32 {
                try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path]).status
            }
            for habit in ["read", "walk", "stretch"] {
                if Bool.random(using: &random) { try stepHostClock() }
                XCTAssertEqual(try person(first, "habit", habit), 0, "seed \(seed): habit \(habit)")
            }
            let started = try XCTUnwrap(journal("first.jsonl").last { $0.topic == "app.unlock.started" }, "seed \(seed): the unlock started")
            // Two more steps while the unlock runs, at seeded moments of its minute.
            for _ in 0..<2 {
                let at = Date().addingTimeInterval(Double.random(in: 3...20, using: &random))
                waitUntil("the moment of the next step", timeoutSeconds: 25) { Date() >= at }
                try stepHostClock()
            }
            waitUntil("the unlock to end and the apps to be shielded again", timeoutSeconds: 120) {
                journal("first.jsonl").contains { $0.topic == "managedsettings.changed" && $0.seq > started.seq && $0.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false }
            }
            // Back an hour while no broker runs: the next one goes on from where this one stopped.
            try "-3600".write(toFile: offsetFile, atomically: true, encoding: .utf8)
            steps.append("-3600 s (while down)")
            first.stop(signal: SIGKILL)
            let second = try BrokerProcess(configuration: configuration, arguments: ["--no-scenario", "--state-dir", state, "--journal", work.file("second.jsonl")],
                                           environment: environment, launcher: launcher)
            defer { second.stop() }
            waitUntil("the restarted plugins to be ready (log: \(second.log(tail: 10)))") { journal("second.jsonl").contains { $0.topic == "bus.ready" } }
            second.stop()
            let wallElapsed = Int64(Date().timeIntervalSince(wallStart) * 1000)
            let whole = journal("first.jsonl") + journal("second.jsonl")
            let replay = "replay: SHIELDBUS_FAULT_SEEDS=\(seed); host clock steps \(steps)"
            XCTAssertTrue(zip(whole, whole.dropFirst()).allSatisfy { $0.time <= $1.time }, "seed \(seed) (\(replay)): bus time never runs back")
            let busElapsed = (whole.last?.time ?? 0) - (whole.first?.time ?? 0)
            XCTAssertLessThanOrEqual(busElapsed, wallElapsed + 2_000, "seed \(seed) (\(replay)): bus time ran ahead of true time")
            let reblock = try XCTUnwrap(whole.first { $0.topic == "managedsettings.changed" && $0.seq > started.seq && $0.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false })
            let until = try XCTUnwrap(started.bodyValue["until"]?.intValue)
            XCTAssertGreaterThanOrEqual(until - started.time, 59_000, "seed \(seed) (\(replay)): the unlock lasts its minute of bus time")
            XCTAssertGreaterThanOrEqual(reblock.time, until, "seed \(seed) (\(replay)): not re-blocked before its end")
            XCTAssertLessThan(reblock.time - until, 60_000, "seed \(seed) (\(replay)): re-blocked within a minute of its end, in true time")
            let (violations, losses) = try violationsAndLosses(whole, configuration: configuration)
            XCTAssertEqual(violations, [], "seed \(seed) (\(replay)) broke the lock invariant")
            XCTAssertEqual(losses, [], "seed \(seed) (\(replay))")
            print("fault class clock steps seed \(seed): \(steps.count) steps of the host's clock, \(violations.count) violations, \(losses.count) losses")
        }
    }
}
