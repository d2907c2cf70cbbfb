// FaultClassTests: the fault classes beyond killed processes — a stalled broker, connection churn beside the plugins,
// a full disk under the state folder, a damaged write-ahead log of each store and the host's clock stepping — each a
// seeded slice of `make faults`. (One file for the classes: they share the harness's helpers and checks.)

import AppGroupStore
import BusClient
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

    /// The supervised plugins a run's broker took down for silence or SIGKILLed (as JSON): none, when nothing but
    /// the broker's own load or stall kept them quiet.
    func pluginsKilled(_ run: [Envelope]) -> [String] {
        run.filter { Self.plugins.contains($0.bodyValue["name"]?.stringValue ?? "") }.filter {
            ($0.topic == "plugin.down" && $0.bodyValue["reason"]?.stringValue?.contains("heartbeat") == true)
                || ($0.topic == "plugin.exited" && $0.bodyValue["how"]?.stringValue?.contains("SIGKILL") == true)
        }.map(\.bodyValue.jsonText)
    }

    // MARK: Stalls

    /// One seed of a fault class played beside the calm: the seed's random days run fault-free and, at once, with
    /// `inject` at seeded moments (`faultSeed`, every `pace` seconds of wall time) in a folder named from `prefix`;
    /// `ended` runs as the faulty run ends. Then both ended well, no supervised plugin was killed beside the fault,
    /// the lock invariant held, nothing was given up and the stored usage equals the calm run's. Returns the faults
    /// injected, and the violations and losses (none when the checks passed).
    func playBesideCalm(seed: UInt64, days: Int, configuration: String, faultSeed: UInt64, pace: ClosedRange<Double>, prefix: String,
                        beside fault: String, inject: (_ broker: Process, _ runtime: RuntimeDirectory, _ random: inout SeededRandom) throws -> Bool,
                        ended: () throws -> Void = {}) throws -> (faults: Int, violations: [String], losses: [String]) {
        let scenario = HeavyUserDays(seed: seed, days: days).scenario
        let calmWork = TemporaryDirectory(prefix: "sbcalm")
        let calm = try ScenarioRun.start(configuration: configuration, scenario: scenario, stateDirectory: calmWork.file("state"))
        let work = TemporaryDirectory(prefix: prefix)
        // The first fault early: a virtual day may take only a few seconds of wall time.
        let faulty = try runFaulting(scenario, seed: faultSeed, pace: pace, firstFault: 0.2...0.8, work: work, inject: inject)
        try ended()
        let reference = try calm.finish(timeoutSeconds: 300)
        XCTAssertEqual(reference.exitStatus, 0, "seed \(seed): the fault-free run: \(reference.errors)")
        let replay = "replay: SHIELDBUS_FAULT_SEEDS=\(seed) SHIELDBUS_FAULT_DAYS=\(days)"
        XCTAssertEqual(faulty.exitStatus, 0, "seed \(seed) (\(replay)): \(faulty.errors)")
        XCTAssertEqual(pluginsKilled(faulty.run), [], "seed \(seed) (\(replay)): no plugin killed beside \(fault)")
        let (violations, losses) = try violationsAndLosses(faulty.run, configuration: configuration)
        XCTAssertEqual(violations, [], "seed \(seed) (\(replay)) broke the lock invariant")
        XCTAssertEqual(losses, [], "seed \(seed) (\(replay)): deliveries given up")
        XCTAssertEqual(try storedDays(work.file("state")), try storedDays(calmWork.file("state")),
                       "seed \(seed) (\(replay)): the daily usage differs from the fault-free run's (\(faulty.faults) faults: \(fault))")
        return (faulty.faults, violations, losses)
    }

    /// The broker stopped (SIGSTOP) for 0.5–7 s of wall time at seeded moments of a random day (virtual time) and
    /// woken again (SIGCONT): no plugin is killed for the broker's own silence, no call it never answered is taken
    /// as handled, nothing is given up, the lock invariant holds and the stored usage equals the fault-free run's.
    func testStallingTheBrokerKillsNoPluginAndLosesNothing() throws {
        let (days, seeds) = Self.daysAndSeeds
        let configuration = try configuration()
        for seed in seeds {
            var stalled = 0.0
            let outcome = try playBesideCalm(seed: seed, days: days, configuration: configuration, faultSeed: seed ^ 0x57A1, pace: 1...4,
                                             prefix: "sbstall", beside: "the broker's stall") { broker, _, random in
                let length = Double.random(in: 0.5...7, using: &random)
                kill(broker.processIdentifier, SIGSTOP)
                usleep(UInt32(length * 1_000_000))  // the stall's own length, not a wait for something to happen
                kill(broker.processIdentifier, SIGCONT)
                stalled += length
                return true
            }
            XCTAssertGreaterThan(outcome.faults, 0, "seed \(seed): the broker was never stopped")
            print("fault class stalls seed \(seed): \(days) day(s), \(outcome.faults) stalls (\(Int(stalled.rounded())) s stopped), \(outcome.violations.count) violations, \(outcome.losses.count) losses")
        }
    }

    // MARK: Connection churn

    /// Outside clients connecting, saying hello and leaving as fast as they can (four threads, rounds of 50 connections),
    /// switched on and off at seeded moments of a random day (virtual time) beside the six supervised plugins: no
    /// plugin is killed for silence, no delivery is abandoned, the lock invariant holds and the stored usage equals
    /// the fault-free run's.
    func testConnectionChurnKillsNoPluginAndAbandonsNothing() throws {
        let (days, seeds) = Self.daysAndSeeds
        let configuration = try configuration()
        for seed in seeds {
            var churn: ConnectionChurn?
            var churned = (hellos: 0, welcomes: 0)
            let outcome = try playBesideCalm(seed: seed, days: days, configuration: configuration, faultSeed: seed ^ 0xC4A2, pace: 0.5...3,
                                             prefix: "sbchurn", beside: "the churn", inject: { _, runtime, _ in
                if churn == nil {
                    guard let cookie = runtime.cookie() else { return false }  // the broker is not listening yet
                    churn = try ConnectionChurn(endpoint: runtime.brokerEndpoint(), cookie: cookie)
                }
                churn?.toggle()
                return true
            }, ended: { churned = try churn?.stop() ?? churned })
            XCTAssertGreaterThan(churned.hellos, 0, "seed \(seed): no client churned")
            print("fault class churn seed \(seed): \(days) day(s), \((outcome.faults + 1) / 2) churn bursts, \(churned.hellos) hellos (\(churned.welcomes) welcomed), 0 plugins killed, \(outcome.violations.count) violations, \(outcome.losses.count) losses")
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
            waitUntil("the plugins to be ready (log: \(broker.log(tail: 10)))") { JournalLines.eventsSoFar(atPath: journalPath).contains { $0.topic == "bus.ready" } }
            func person(_ arguments: [String]) throws -> Bool {
                try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path]).status == 0
            }
            var random = SeededRandom(seed: seed ^ 0xF111)
            var full = false, fills = 0, refused = 0
            var habitsDone: [String] = []
            let habits = ["Read", "Walk", "Stretch"]
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
                let journal = JournalLines.eventsSoFar(atPath: journalPath)
                guard let started = journal.last(where: { $0.topic == "app.unlock.started" }) else { return false }
                return journal.contains { $0.topic == "managedsettings.changed" && $0.seq > started.seq && $0.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false
                    && $0.time >= (started.bodyValue["until"]?.intValue ?? .max) }
            }
            if !reblocked {
                // What the device said of the unlock, the shields and its storage, to find out why.
                let said = JournalLines.eventsSoFar(atPath: journalPath).filter {
                    $0.topic.hasPrefix("app.unlock") || $0.topic == "managedsettings.changed" || $0.topic.hasPrefix("bus.error")
                        || $0.topic.hasPrefix("plugin.") || $0.topic.hasPrefix("deviceactivity.")
                }
                print("seed \(seed): the journal's unlock, shield, storage and plugin lines:\n"
                      + said.suffix(60).map { "\($0.seq) \($0.time) \($0.topic) \($0.bodyValue.jsonText.prefix(300))" }.joined(separator: "\n")
                      + "\nbroker log:\n\(broker.log(tail: 40))")
            }
            broker.stop(signal: SIGKILL)
            let journal = try JournalLines.read(journalPath)
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

    // MARK: A state folder going read-only

    /// The person's seeded actions on the habit lock (one-minute unlocks, bus time at 5×) while the state folder,
    /// every store in it open, goes read-only (EROFS, as a failing disk does) and writable again at seeded moments: an
    /// action the device could not record is said ("could not record", never "done"), a habit so refused is done
    /// again once the folder is writable, and what the device held back is written by itself — then the broker is
    /// SIGKILLed: every habit answered "done" is stored, each ManagedSettings store holds what the journal last
    /// announced, nothing is given up, and the lock invariant holds.
    func testAStateFolderGoingReadOnlyMidRunLosesNothingTheDeviceSaidItDid() throws {
        let (_, seeds) = Self.daysAndSeeds
        let configuration = try configuration(unlockMinutes: 1)
        for seed in seeds {
            let disk = try ReadOnlySwitchDisk()
            let work = TemporaryDirectory(prefix: "sbro")
            let state = disk.path + "/state", journalPath = work.file("journal.jsonl")
            let broker = try BrokerProcess(configuration: configuration,
                                           arguments: ["--no-scenario", "--state-dir", state, "--journal", journalPath, "--clock", "scaled", "--speed", "5"])
            defer { broker.stop() }
            // Mid-run: once the app has set the product up (its selection saved, the lock shielding it). A set-up on an
            // unwritable folder fails and is not tried again (the companion app's launch), which is not this fault.
            waitUntil("the lock to shield the selection (log: \(broker.log(tail: 10)))", timeoutSeconds: 60) {
                JournalLines.eventsSoFar(atPath: journalPath).contains { $0.topic == "managedsettings.changed" && $0.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false }
            }
            func person(_ arguments: [String]) throws -> (status: Int32, output: String) {
                try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path])
            }
            let replay = "replay: SHIELDBUS_FAULT_SEEDS=\(seed)"
            var random = SeededRandom(seed: seed ^ 0x0E0F)
            var readOnly = false, switches = 0, refused = 0
            var habitsDone: [String] = []
            let habits = ["Read", "Walk", "Stretch"]
            let apps = HeavyUserDays.distracting + HeavyUserDays.other
            // Twelve actions; the fifth to seventh are the habits. The folder switches before a third of them.
            for index in 0..<12 {
                if Double.random(in: 0..<1, using: &random) < 0.35 {
                    readOnly.toggle()
                    try disk.setReadOnly(readOnly)
                    switches += 1
                }
                guard (4..<7).contains(index) else {
                    let action = Bool.random(using: &random) ? ["home"] : ["open", apps.randomElement(using: &random)!]
                    _ = try person(action)  // refused on a read-only folder (the use could not be stored); the device went on
                    continue
                }
                let habit = habits[index - 4]
                let answer = try person(["habit", habit])
                if answer.status == 0 {
                    habitsDone.append(habit)
                    continue
                }
                XCTAssertTrue(readOnly, "seed \(seed) (\(replay)): the habit '\(habit)' refused on a writable folder: \(answer.output) \(broker.log(tail: 20))")
                XCTAssertTrue(answer.output.contains("could not record"), "seed \(seed) (\(replay)): the refusal says what was not recorded: \(answer.output)")
                refused += 1
                // Told it was not recorded, the person does it again once the folder is writable.
                try disk.setReadOnly(false)
                readOnly = false
                let again = try person(["habit", habit])
                XCTAssertEqual(again.status, 0, "seed \(seed) (\(replay)): the habit '\(habit)' done again on a writable folder: \(again.output) \(broker.log(tail: 20))")
                if again.status == 0 { habitsDone.append(habit) }
            }
            try disk.setReadOnly(false)
            // The one-minute unlock ends (12 s of wall time at 5×); its re-block is announced once saved.
            waitUntil("the unlock to end and its re-block to be announced", timeoutSeconds: 90) {
                let journal = JournalLines.eventsSoFar(atPath: journalPath)
                guard let started = journal.last(where: { $0.topic == "app.unlock.started" }) else { return false }
                return journal.contains { $0.topic == "managedsettings.changed" && $0.seq > started.seq && $0.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false
                    && $0.time >= (started.bodyValue["until"]?.intValue ?? .max) }
            }
            broker.stop(signal: SIGKILL)
            let journal = try JournalLines.read(journalPath)
            let (violations, losses) = try violationsAndLosses(journal, configuration: configuration, allowingStorageFailures: true)
            XCTAssertEqual(violations, [], "seed \(seed) (\(replay)) broke the lock invariant")
            XCTAssertEqual(losses, [], "seed \(seed) (\(replay)): deliveries given up")
            XCTAssertEqual(habitsDone.count, 3, "seed \(seed) (\(replay)): every habit done")
            let stored = try storedValues(state).filter { $0.key.hasPrefix("habits.") }.values.joined()
            for habit in habitsDone { XCTAssertTrue(stored.contains(habit), "seed \(seed) (\(replay)): habit '\(habit)' answered done but not stored: \(stored)") }
            XCTAssertEqual(try storedShields(state), try announcedShields(journal), "seed \(seed) (\(replay)): the stores hold what the journal announced")
            let failures = journal.filter { $0.bodyValue["code"]?.stringValue == "storage-failed" }
            if switches > 0 && refused > 0 {
                XCTAssertFalse(failures.isEmpty, "seed \(seed) (\(replay)): the refused writes were said on the bus (storage-failed)")
            }
            print("fault class read-only folder seed \(seed): \(switches) switches, \(failures.count) writes refused, \(refused) habits done again, \(violations.count) violations, \(losses.count) losses")
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

    /// A store of the state folder and how a refusal of it reads: each names its file.
    struct DamagedStore {
        let name: String
        /// The store file's path relative to the state folder.
        let file: String
        /// What the refusal says, given the file's full path, and how it says what to do.
        let refusal: (String) -> String
        var remedy = "--reset-state"
    }

    /// The stores whose logs are damaged: the App Group's, the device's, the broker's delivery store and a plugin's
    /// record of handled events (`cursor` names the plugin).
    func damagedStores(cursor: String) -> [DamagedStore] {
        [DamagedStore(name: "app group", file: "appgroups/\(group)/Library/Preferences/\(group).sqlite", refusal: { "the app-group store '\($0)' is damaged" }, remedy: "Restore it from a backup"),
         DamagedStore(name: "device.sqlite", file: "device.sqlite") { "the device state \($0) is damaged" },
         DamagedStore(name: "bus.sqlite", file: "bus.sqlite") { "the delivery store \($0) is damaged" },
         DamagedStore(name: "cursor of \(cursor)", file: StateFolder.handledEventsRecord(plugin: cursor)) { "the record of handled events \($0) is damaged" }]
    }

    /// Damages the write-ahead log `wal` as `damage` says (deleted, zeroed, cut at a seeded byte or with a seeded
    /// byte flipped); returns its size before, 0 when there was none to damage.
    func damage(_ wal: String, _ damage: String, random: inout SeededRandom) throws -> Int {
        guard let data = FileManager.default.contents(atPath: wal), !data.isEmpty else { return 0 }
        switch damage {
        case "deleted": try FileManager.default.removeItem(atPath: wal)
        case "zeroed": try Data(count: data.count).write(to: URL(fileURLWithPath: wal))
        case "cut": try data.prefix(Int.random(in: 0..<data.count, using: &random)).write(to: URL(fileURLWithPath: wal))
        default:
            var flipped = data
            flipped[Int.random(in: 0..<data.count, using: &random)] ^= 0x5A
            try flipped.write(to: URL(fileURLWithPath: wal))
        }
        return data.count
    }

    /// A random day's broker SIGKILLed at a seeded step; then, in a copy of the state folder each, the write-ahead log
    /// of each store — the App Group's, `device.sqlite`, `bus.sqlite` and a seeded plugin's record of handled events —
    /// damaged (deleted, zeroed, cut at a seeded byte or with a seeded byte flipped) before `--resume`: the store is
    /// refused as damaged, naming it and what to do, or the resumed run loses nothing — its stored values equal those
    /// of the same resume from an undamaged copy. Never an older store taken silently.
    func testADamagedWriteAheadLogIsRefusedOrLosesNothing() throws {
        let (days, seeds) = Self.daysAndSeeds
        let configuration = try configuration()
        let damages = ["deleted", "zeroed", "cut", "flipped"]
        for seed in seeds {
            let scenario = HeavyUserDays(seed: seed, days: days).scenario
            var random = SeededRandom(seed: seed ^ 0x3A1D)
            let steps = scenario.split(separator: "\n").filter { $0.hasPrefix("  - at:") }.count
            let crash = Int.random(in: max(2, steps / 4)...max(2, steps - 2), using: &random)
            // The plugin whose record is damaged: one that had recorded events when the broker was killed.
            var cursor = Self.plugins[0], stores = damagedStores(cursor: cursor)
            let kinds = stores.map { _ in damages.randomElement(using: &random)! }
            // The App Group's copy is the crashed run's own folder; the other stores' are copies of it.
            let works = stores.indices.map { TemporaryDirectory(prefix: "sbwal\($0)") }
            var walBytes = Array(repeating: 0, count: stores.count)
            let copy = TemporaryDirectory(prefix: "sbwalref")
            let damaged = try runCrashingBroker(scenario, crashing: [["--crash-at-step", "\(crash)"]], configuration: configuration, afterKill: {
                // The undamaged copy first: the same state folder and journal, resumed as they are.
                for target in [copy] + works.dropFirst() { _ = try runToEnd("/bin/cp", ["-a", works[0].path + "/.", target.path]) }
                let recorded = Self.plugins.filter { ((try? CommitNote.read(besides: StatePaths.handledEventsRecord($0, in: works[0].file("state")))) ?? 0) > 0 }
                cursor = recorded.randomElement(using: &random) ?? cursor
                stores = damagedStores(cursor: cursor)
                for (index, store) in stores.enumerated() {
                    walBytes[index] = try damage(works[index].file("state/\(store.file)-wal"), kinds[index], random: &random)
                }
            }, work: works[0])
            let replay = "replay: SHIELDBUS_FAULT_SEEDS=\(seed) SHIELDBUS_FAULT_DAYS=\(days); killed at step \(crash)"
            XCTAssertEqual(damaged.endings.first, "signal \(SIGKILL)", "seed \(seed) (\(replay)): \(damaged.errors)")
            let reference = try resumeAsIs(scenario, configuration: configuration, work: copy)
            XCTAssertEqual(reference.ending, "exit 0", "seed \(seed) (\(replay)): the undamaged resume: \(reference.errors)")
            let expected = try storedValues(copy.file("state"))
            var outcomes: [String] = []
            for (index, store) in stores.enumerated() {
                let work = works[index], path = work.file("state/\(store.file)")
                let what = "seed \(seed) (\(replay), the \(store.name) log \(kinds[index]))"
                guard walBytes[index] > 0 else {
                    outcomes.append("\(store.name): no log left (nothing to damage)")
                    continue
                }
                let resumed = index == 0 ? (ending: damaged.endings.last ?? "", errors: damaged.errors) : try resumeAsIs(scenario, configuration: configuration, work: work)
                // A plugin's record is refused by the plugin's process, in its log; the others by the broker.
                let pluginLog = (try? String(contentsOfFile: work.file("run/logs/\(cursor).log"), encoding: .utf8)) ?? ""
                let refusal = store.refusal(path)
                let outcome: String
                if resumed.errors.contains(refusal) || (store.file.hasPrefix("cursors/") && pluginLog.contains(refusal)) {
                    let said = store.file.hasPrefix("cursors/") ? pluginLog : resumed.errors
                    XCTAssertTrue(said.contains(store.remedy), "\(what): the refusal says what to do: \(said.suffix(2000))")
                    if !store.file.hasPrefix("cursors/") { XCTAssertEqual(resumed.ending, "exit 1", "\(what): nothing started") }
                    outcome = "refused"
                } else {
                    XCTAssertEqual(resumed.ending, "exit 0", "\(what): neither refused nor resumed: \(resumed.errors.suffix(2000)) \(pluginLog.suffix(1000))")
                    let stored = try storedValues(work.file("state"))
                    for key in Set(expected.keys).union(stored.keys).sorted() where !key.hasPrefix("reports.recorder") {
                        XCTAssertEqual(stored[key], expected[key], "\(what): '\(key)' differs from the undamaged resume's")
                    }
                    let journal = try JournalLines.read(work.file("journal.jsonl"))
                    let (violations, losses) = try violationsAndLosses(journal, configuration: configuration)
                    XCTAssertEqual(violations, [], "\(what) broke the lock invariant")
                    XCTAssertEqual(losses, [], what)
                    // Nothing rewound: no sequence number given twice, and the device holds the shields it announced.
                    XCTAssertTrue(zip(journal, journal.dropFirst()).allSatisfy { $0.seq < $1.seq }, "\(what): a sequence number given twice")
                    XCTAssertEqual(try storedShields(work.file("state")), try announcedShields(journal), "\(what): the stores hold what the journal announced")
                    outcome = "resumed losing nothing"
                }
                outcomes.append("\(store.name): a \(walBytes[index])-byte log \(kinds[index]), \(outcome)")
            }
            print("fault class damaged WAL seed \(seed): killed at step \(crash); \(outcomes.joined(separator: "; ")); 0 violations, 0 losses")
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
            func journal(_ name: String) -> [Envelope] { JournalLines.eventsSoFar(atPath: work.file(name)) }
            let wallStart = Date()
            let first = try BrokerProcess(configuration: configuration, arguments: ["--no-scenario", "--state-dir", state, "--journal", work.file("first.jsonl")],
                                          environment: environment, launcher: launcher)
            defer { first.stop() }
            waitUntil("the plugins to be ready (log: \(first.log(tail: 10)))") { journal("first.jsonl").contains { $0.topic == "bus.ready" } }
            func person(_ broker: BrokerProcess, _ arguments: String...) throws -> Int32 {
                try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path]).status
            }
            for habit in ["Read", "Walk", "Stretch"] {
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
