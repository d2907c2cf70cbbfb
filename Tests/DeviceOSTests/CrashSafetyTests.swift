import AppGroupStore
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import SQLite
import XCTest

/// A broker killed with SIGKILL comes back as it was, and a damaged or shared state folder stops a run before
/// anything starts — through the real broker and real plugin processes.
final class CrashSafetyTests: XCTestCase {
    let root = BuildProducts.repositoryRoot.path
    let day = "name: day\nstart: 2026-11-23T09:00\nsteps:\n  - at: \"09:05\"\n    habit: read\nend: \"09:10\"\n"

    func habitLockConfiguration(unlockMinutes: Int = 30) throws -> String {
        var text = try String(contentsOfFile: root + "/Config/habit-lock.yml", encoding: .utf8)
        text = text.replacingOccurrences(of: "scenario: scenarios/habit-lock-day.yml\n", with: "")
        // The plugins' unlock and the promise's, in step.
        text = text.replacingOccurrences(of: "unlockMinutes: 30", with: "unlockMinutes: \(unlockMinutes)")
            .replacingOccurrences(of: "{habits: 3, minutes: 30}", with: "{habits: 3, minutes: \(unlockMinutes)}")
        for name in ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "report-builder", "notifier"] {
            text = text.replacingOccurrences(of: "executable: \(name)", with: "executable: \(BuildProducts.path(name))")
        }
        return text
    }

    /// The envelopes written so far to a journal file.
    func journal(_ path: String) -> [Envelope] {
        JournalLines.eventsSoFar(atPath: path)
    }

    // MARK: Broker SIGKILL

    func testABrokerKilledMidUnlockReblocksAtExpiryAndItsClockDoesNotRunBack() throws {
        let configuration = try habitLockConfiguration(unlockMinutes: 1)
        let work = TemporaryDirectory(prefix: "sbcrash")
        let runtime = work.file("run")
        // Ten bus seconds a wall second: the one-minute unlock ends six wall seconds after it starts.
        let clock = ["--no-scenario", "--clock", "scaled", "--speed", "10"]
        let first = try BrokerProcess(configuration: configuration, arguments: clock + ["--journal", work.file("before.jsonl")], runtimeDirectory: runtime)
        waitUntil("the plugins to be ready (log: \(first.log(tail: 10)))") { journal(work.file("before.jsonl")).contains { $0.topic == "bus.ready" } }
        let tool = try first.connect(name: "person", role: .tool, subscriptions: [])
        for (n, habit) in ["Read", "Walk", "Stretch"].enumerated() {
            try tool.publish(Publish(topic: "input.habit.request", body: ["habit": .string(habit)], corr: "person-\(n)"))
        }
        // Mid-unlock means the unlock is in effect: the app's timer set and the monitor's lift written (the monitor
        // answers the app's flag, before or after the app's timer). A broker killed before the lift leaves the shields
        // up all along (the monitor's write dies with it), and there is then nothing for the expiry to re-block.
        waitUntil("the app to set its unlock timer and the monitor to lift the shields") {
            let written = journal(work.file("before.jsonl"))
            let shield = written.last { $0.topic == "managedsettings.changed" }?.bodyValue["shield"]
            return written.contains { $0.topic == "app.timer.reply" } && shield != nil && shield?["applications"]?.arrayValue?.isEmpty != false
        }
        first.stop(signal: SIGKILL)
        let before = journal(work.file("before.jsonl"))
        let started = try XCTUnwrap(before.first { $0.topic == "app.unlock.started" })
        let until = try XCTUnwrap(started.bodyValue["until"]?.intValue)
        XCTAssertFalse(before.contains { $0.topic == "app.timer.fired" }, "the broker was killed before the timer fired")

        let second = try BrokerProcess(configuration: configuration, arguments: clock + ["--journal", work.file("after.jsonl")], runtimeDirectory: runtime)
        defer { second.stop() }
        waitUntil("the app's timer to fire after the restart", timeoutSeconds: 30) {
            journal(work.file("after.jsonl")).contains { $0.topic == "app.timer.fired" }
        }
        let after = journal(work.file("after.jsonl"))
        let fired = try XCTUnwrap(after.first { $0.topic == "app.timer.fired" })
        XCTAssertEqual(fired.bodyValue["id"]?.stringValue, "unlock-expiry")
        XCTAssertEqual(fired.bodyValue["scheduledFor"]?.intValue, until, "the timer the app set before the crash")
        XCTAssertGreaterThanOrEqual(fired.time, until)
        XCTAssertLessThan(fired.time - until, 60_000, "the re-block comes at expiry, not from a later check")
        XCTAssertGreaterThanOrEqual(after.first!.time, before.last!.time, "bus time does not run backwards across the crash")
        XCTAssertGreaterThan(after.first!.seq, before.last!.seq, "sequence numbers go on")

        // The app re-blocks: its flag goes down, and the monitor shields the selection again.
        let container = AppGroupContainer(root: URL(fileURLWithPath: runtime + "/state/appgroups"))
        let defaults = try SharedDefaults(suiteName: "group.dev.shieldbus.habitlock", container: container)
        // A deadline as long as the timer's: under load the restarted plugins can take many wall seconds to catch up.
        waitUntil("isCurrentlyUnlocked to be false", timeoutSeconds: 30) { (try? defaults.bool(forKey: "isCurrentlyUnlocked")) == false }
        waitUntil("the monitor to shield the apps again", timeoutSeconds: 30) {
            journal(work.file("after.jsonl")).contains { envelope in
                envelope.topic == "managedsettings.changed" && envelope.seq > fired.seq
                    && envelope.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false
            }
        }
    }

    /// The outage rule under the scaled clock (60 bus seconds a wall second): a broker SIGKILLed while an app is in
    /// use, and a new one started on the same state. Bus time goes on from where the dead broker stopped — never
    /// back, even when the bus was quiet before the kill — and the outage takes at most about a wall second of bus
    /// time, however long the broker was down. The use left in progress is recorded up to the new broker's start,
    /// as the checker and the report builder close it there.
    func testAcrossAnOutageUnderTheScaledClockBusTimeGoesOnFromWhereItStopped() throws {
        let configuration = try habitLockConfiguration()
        let work = TemporaryDirectory(prefix: "sboutage")
        let runtime = work.file("run")
        let clock = ["--no-scenario", "--clock", "scaled", "--speed", "60"]
        let first = try BrokerProcess(configuration: configuration, arguments: clock + ["--journal", work.file("before.jsonl")], runtimeDirectory: runtime)
        waitUntil("the plugins to be ready (log: \(first.log(tail: 10)))") { journal(work.file("before.jsonl")).contains { $0.topic == "bus.ready" } }
        let opened = try runToEnd(BuildProducts.path("shieldbus"), ["do", "open", "Maps", "--runtime-dir", runtime])
        XCTAssertEqual(opened.status, 0, opened.output)
        let openedAt = try XCTUnwrap(first.status()["broker"]?["time"]?.intValue)
        // Three wall seconds of use, with little or nothing on the bus.
        var killedAt: Int64 = 0
        waitUntil("three bus minutes of use") {
            killedAt = (try? first.status()["broker"]?["time"]?.intValue ?? 0) ?? 0
            return killedAt - openedAt >= 180_000
        }
        first.stop(signal: SIGKILL)

        let second = try BrokerProcess(configuration: configuration, arguments: clock + ["--journal", work.file("after.jsonl")], runtimeDirectory: runtime)
        defer { second.stop() }
        let device = try SQLiteConnection(path: runtime + "/state/device.sqlite", flags: [.readOnly])
        func spans() -> [JSONValue] {
            guard let rows = try? device.prepare("SELECT json FROM usage_span") else { return [] }
            var values: [JSONValue] = []
            while (try? rows.step()) == true {
                if let json = try? rows.string(at: 0), let value = try? JSONValue(parsing: Array(json.utf8)) { values.append(value) }
            }
            return values
        }
        waitUntil("the new broker's journal to start") { journal(work.file("after.jsonl")).contains { $0.topic == "bus.started" } }
        let restarted = try XCTUnwrap(journal(work.file("after.jsonl")).first { $0.topic == "bus.started" })
        XCTAssertGreaterThanOrEqual(restarted.time, killedAt, "bus time goes on from where the dead broker stopped, never back")
        XCTAssertLessThanOrEqual(restarted.time - killedAt, 2 * 60_000, "the outage takes about a wall second of bus time at most (reserved ahead), not its wall duration at 60×")
        // The use is stored in pieces (the OS records a span whenever DeviceActivity asks for the count so far);
        // the last piece is the one the dead broker left in progress.
        func mapsUse() -> [(start: Int64, end: Int64)] {
            spans().filter { $0["use"]?["bundleIdentifier"]?.stringValue == "com.apple.Maps" }
                .compactMap { span in span["start"]?.intValue.flatMap { start in span["end"]?.intValue.map { (start, $0) } } }
                .sorted { $0.end < $1.end }
        }
        waitUntil("the new broker to record the use left in progress up to its start (Maps: \(mapsUse()))") {
            (mapsUse().last?.end ?? 0) >= restarted.time
        }
        let pieces = mapsUse()
        XCTAssertLessThanOrEqual(try XCTUnwrap(pieces.first).start, openedAt)
        XCTAssertTrue(zip(pieces, pieces.dropFirst()).allSatisfy { $0.end == $1.start }, "one use, without a hole: \(pieces)")
    }

    // MARK: Damaged state

    /// Runs the day once so the state folder holds a device, then damages it with `damage` and runs again on it.
    /// Returns the second run and the state folder (removed when the returned directory goes).
    func runOnDamagedState(arguments: [String] = [], _ damage: (String) throws -> Void, file: StaticString = #filePath, line: UInt = #line) throws -> (ScenarioRun, TemporaryDirectory) {
        let state = TemporaryDirectory(prefix: "sbdamaged")
        let first = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: arguments, stateDirectory: state.path)
        XCTAssertEqual(first.exitStatus, 0, first.errors, file: file, line: line)
        try damage(state.path)
        let second = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: arguments + ["--keep-state"], stateDirectory: state.path)
        return (second, state)
    }

    /// The processes whose environment names `state` as their state folder (a supervised plugin's).
    func processes(withStateFolder state: String) -> [String] {
        let wanted = "SHIELDBUS_STATE_DIR=" + state
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { pid in
            guard Int32(pid) != nil, let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return environment.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == wanted }
        }
    }

    /// The plugins start while the broker opens its delivery store: one that cannot be opened stops the run naming
    /// it, with nothing journaled, and no plugin is left running — unsandboxed too, where no sandbox ends with the
    /// broker (the broker stops them, and each asked to die with it).
    func testADeliveryStoreThatCannotBeOpenedStopsTheRunAndLeavesNoPluginRunning() throws {
        let (run, state) = try runOnDamagedState(arguments: ["--no-sandbox"]) { state in
            try? FileManager.default.removeItem(atPath: state + "/bus.sqlite-wal")
            try Data(repeating: 0x5A, count: 8_192).write(to: URL(fileURLWithPath: state + "/bus.sqlite"))
        }
        XCTAssertNotEqual(run.exitStatus, 0, run.errors)
        XCTAssertTrue(run.errors.contains(state.path + "/bus.sqlite"), run.errors)
        XCTAssertTrue(run.journal.isEmpty, "no event")
        XCTAssertEqual(processes(withStateFolder: state.path), [], "every plugin started was stopped")
        // Each would die with the broker anyway (asked to): the broker's own stopping is what its log says.
        XCTAssertTrue(run.errors.contains("stopping plugin: the run could not start"), run.errors)
    }

    func testAnEmptyDeviceStateIsRefusedWithWhatToDoNeverStartedFresh() throws {
        let (run, state) = try runOnDamagedState { state in XCTAssertEqual(truncate(state + "/device.sqlite", 0), 0) }
        let path = state.path + "/device.sqlite"
        XCTAssertEqual(run.exitStatus, 1, run.errors)
        XCTAssertTrue(run.errors.contains("the device state \(path) is empty (0 bytes)"), run.errors)
        XCTAssertTrue(run.errors.contains("--reset-state"), "it says how to start fresh deliberately: \(run.errors)")
        XCTAssertTrue(run.journal.isEmpty, "nothing started")
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: path))[.size] as? Int, 0, "the file was left as it was")
    }

    func testGarbageInTheDeviceStateIsRefused() throws {
        let (run, state) = try runOnDamagedState { state in
            try? FileManager.default.removeItem(atPath: state + "/device.sqlite-wal")
            try Data(repeating: 0x5A, count: 8_192).write(to: URL(fileURLWithPath: state + "/device.sqlite"))
        }
        XCTAssertEqual(run.exitStatus, 1, run.errors)
        XCTAssertTrue(run.errors.contains("the device state \(state.path)/device.sqlite is damaged"), run.errors)
        XCTAssertTrue(run.journal.isEmpty, "nothing started")
    }

    func testAValueThatDoesNotDecodeIsAClearErrorNotACrash() throws {
        let (run, state) = try runOnDamagedState { state in
            let connection = try SQLiteConnection(path: state + "/device.sqlite")
            try connection.prepare("UPDATE state SET json = '{\"lock\": 42}' WHERE key = 'managedsettings.stores'").run()
        }
        XCTAssertEqual(run.exitStatus, 1, run.errors)
        XCTAssertTrue(run.errors.contains("the device state \(state.path)/device.sqlite holds a value for 'managedsettings.stores' that does not decode"), run.errors)
        XCTAssertFalse(run.errors.contains("Fatal error"), run.errors)
        XCTAssertTrue(run.journal.isEmpty, "nothing started")
    }

    func testAnEmptyAppGroupStoreIsRefusedAndResetStateStartsFreshDeliberately() throws {
        let state = TemporaryDirectory(prefix: "sbemptygroup")
        let first = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, stateDirectory: state.path)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        let store = StatePaths.appGroupStore("group.dev.shieldbus.habitlock", in: state.path)
        try? FileManager.default.removeItem(atPath: store + "-wal")
        XCTAssertEqual(truncate(store, 0), 0)
        let refused = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: ["--keep-state"], stateDirectory: state.path)
        XCTAssertEqual(refused.exitStatus, 1, refused.errors)
        XCTAssertTrue(refused.errors.contains("the app-group store '\(store)' is damaged (the file is empty (0 bytes)"), refused.errors)
        XCTAssertTrue(refused.journal.isEmpty, "nothing started")

        let fresh = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: ["--reset-state"], stateDirectory: state.path)
        XCTAssertEqual(fresh.exitStatus, 0, fresh.errors)
        XCTAssertGreaterThan((try FileManager.default.attributesOfItem(atPath: store))[.size] as? Int ?? 0, 0)
    }

    // MARK: Two brokers

    func testASecondBrokerOnTheSameStateFolderIsRefusedAndChangesNothing() throws {
        let configuration = try habitLockConfiguration()
        let first = try BrokerProcess(configuration: configuration, arguments: ["--no-scenario"])
        defer { first.stop() }
        let state = first.runtime.path + "/state"
        let container = AppGroupContainer(root: URL(fileURLWithPath: state + "/appgroups"))
        let slices = try container.slices(group: "group.dev.shieldbus.habitlock")

        // Another runtime directory, the same state folder, and a scenario (which would start from a fresh device).
        let other = TemporaryDirectory(prefix: "sbsecond")
        let changed = configuration.replacingOccurrences(of: "monitor: [\"monitor.*\"]", with: "monitor: [\"other.*\"]")
        let second = try ScenarioRun.run(configuration: changed, scenario: day, arguments: ["--runtime-dir", other.file("run")], stateDirectory: state)
        XCTAssertEqual(second.exitStatus, 1, second.errors)
        XCTAssertTrue(second.errors.contains("the state folder \(state) is in use by another broker (pid \(first.process.processIdentifier))"), second.errors)
        XCTAssertEqual(try container.slices(group: "group.dev.shieldbus.habitlock"), slices, "the slice table is untouched")
        XCTAssertTrue(FileManager.default.fileExists(atPath: state + "/device.sqlite"), "the device state was not wiped")

        // The same runtime directory: refused before the slices are declared again.
        let third = try ScenarioRun.run(configuration: changed, scenario: day, arguments: ["--runtime-dir", first.runtime.path], stateDirectory: other.file("state"))
        XCTAssertEqual(third.exitStatus, 1, third.errors)
        XCTAssertTrue(third.errors.contains("a broker is already running on \(first.runtime.path)"), third.errors)
        XCTAssertEqual(try container.slices(group: "group.dev.shieldbus.habitlock"), slices)
        XCTAssertNotNil(try first.status()["broker"], "the first broker still serves")
    }
}
