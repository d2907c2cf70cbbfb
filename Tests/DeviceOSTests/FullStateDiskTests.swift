import AppGroupStore
@testable import DeviceOS
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import ScreenTime
import SQLite
import XCTest

/// A full disk under the state folder — the App-Group stores, not only the journal — through
/// the real broker, the reference plugins and `shieldbus do`: the action is answered with an error naming what
/// could not be recorded and where (never "done"), `status` counts it, nothing crashes, and once space returns
/// the same action is recorded. The disk is a real small tmpfs
/// (root only). (In CrashSafetyTests for its habit-lock configuration and journal reader.)
extension CrashSafetyTests {
    /// The habit lock running with its state folder on a small disk, ready; and `shieldbus do` for the person.
    struct DeviceOnSmallDisk {
        let disk: SmallDisk
        let state: String
        let broker: BrokerProcess
        let work: TemporaryDirectory

        func person(_ arguments: String...) throws -> (status: Int32, output: String) {
            try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path])
        }
    }

    func startDeviceOnSmallDisk(unlockMinutes: Int = 30, clock: [String] = []) throws -> DeviceOnSmallDisk {
        let work = TemporaryDirectory(prefix: "sbfull")
        let disk = try SmallDisk(size: "16m")
        let state = disk.path + "/state"
        let journal = work.file("journal.jsonl")
        let broker = try BrokerProcess(configuration: try habitLockConfiguration(unlockMinutes: unlockMinutes),
                                       arguments: ["--no-scenario", "--state-dir", state, "--journal", journal] + clock)
        waitUntil("the plugins to be ready (log: \(broker.log(tail: 10)))") {
            self.journal(journal).contains { $0.topic == "bus.ready" }
        }
        return DeviceOnSmallDisk(disk: disk, state: state, broker: broker, work: work)
    }

    func testAFullStateDiskFailsTheActionOutLoudAndRecoversWhenSpaceReturns() throws {
        let device = try startDeviceOnSmallDisk()
        let (disk, state, broker, person) = (device.disk, device.state, device.broker, device.person)
        defer { broker.stop() }
        let group = "group.dev.shieldbus.habitlock"
        XCTAssertTrue(try person("habit", "Walk").output.hasPrefix("done: habit Walk — "), "with room, the habit is recorded")

        try disk.fill()
        let habit = try person("habit", "Read")
        XCTAssertNotEqual(habit.status, 0, "never 'done' for a habit the app could not save: \(habit.output)")
        XCTAssertFalse(habit.output.contains("done"), habit.output)
        XCTAssertTrue(habit.output.contains("could not record the habit 'Read'"), habit.output)
        XCTAssertTrue(habit.output.contains(group), "the store is named: \(habit.output)")

        let status = try broker.status()
        XCTAssertTrue(broker.process.isRunning, "no crash: \(broker.log())")
        XCTAssertGreaterThanOrEqual(status["counters"]?["storageErrors"]?.intValue ?? 0, 1, status.jsonText)
        XCTAssertNotNil(status["broker"]?["lastStorageError"]?.stringValue, status.jsonText)
        XCTAssertTrue(broker.log(tail: 400).contains("could not record the habit 'Read'"), "said on the terminal: \(broker.log())")
        for plugin in status["plugins"]?.arrayValue ?? [] {
            XCTAssertEqual(plugin["state"]?.stringValue, "running", "no plugin crashed: \(plugin.jsonText)")
        }

        // Space returns: the same action is recorded, and the device writes what it could not.
        try disk.free()
        XCTAssertTrue(try person("habit", "Read").output.hasPrefix("done: habit Read — "))
        let defaults = try SharedDefaults(suiteName: group, container: AppGroupContainer(root: URL(fileURLWithPath: state + "/appgroups")))
        let habits = try defaults.allKeys.filter { $0.hasPrefix("habits.") }.flatMap { try defaults.value([String].self, forKey: $0) ?? [] }
        XCTAssertEqual(habits, ["Walk", "Read"], "the refused habit is recorded when done again, nothing twice")
    }
}

extension CrashSafetyTests {
    /// The device's own store (`device.sqlite`) on a full disk under `shieldbus do`: opening an app stores the
    /// use in progress there, and when that cannot be written the person's tool is told so, naming the file —
    /// never "done" — `status` counts it, and once space returns the next save writes what was kept.
    func testAFullDiskUnderTheDeviceStoreFailsTheToolOutLoud() throws {
        let device = try startDeviceOnSmallDisk()
        let (disk, state, broker, person) = (device.disk, device.state, device.broker, device.person)
        defer { broker.stop() }
        XCTAssertEqual(try person("open", "Maps").output, "done: open Maps — Maps in use\n", "with room, the use is stored")

        try disk.fill()
        let opened = try person("open", "Duolingo")
        XCTAssertNotEqual(opened.status, 0, "never 'done' for a use the device could not store: \(opened.output)")
        XCTAssertFalse(opened.output.contains("done"), opened.output)
        XCTAssertTrue(opened.output.contains(state + "/device.sqlite"), "the file is named: \(opened.output)")
        let status = try broker.status()
        XCTAssertTrue(broker.process.isRunning, "no crash: \(broker.log())")
        XCTAssertGreaterThanOrEqual(status["counters"]?["storageErrors"]?.intValue ?? 0, 1, status.jsonText)
        XCTAssertTrue(status["broker"]?["lastStorageError"]?.stringValue != nil, status.jsonText)
        XCTAssertTrue(broker.log(tail: 400).contains("device.sqlite"), "said on the terminal: \(broker.log())")

        // Space returns: the next action is recorded, and with it what the device kept.
        try disk.free()
        XCTAssertEqual(try person("home").output, "done: home — the home screen\n")
        let stored = try SQLiteConnection(path: state + "/device.sqlite", flags: [.readOnly])
        let spans = try stored.prepare("SELECT json FROM usage_span")
        var used: [String] = []
        while try spans.step() { used.append(try spans.string(at: 0) ?? "") }
        XCTAssertTrue(used.contains { $0.contains("com.apple.Maps") }, "Maps' use is stored: \(used)")
        XCTAssertTrue(used.contains { $0.contains("com.duolingo.DuolingoMobile") }, "Duolingo's use, opened on the full disk, is stored too: \(used)")
    }
}

extension CrashSafetyTests {
    /// What could not be saved on a full disk is saved once space returns, without waiting for the next change —
    /// which may come long after, and a crash meanwhile (here a SIGKILL) would lose it.
    func testWhatCouldNotBeSavedIsSavedSoonAfterSpaceReturnsAndSurvivesAKill() throws {
        let device = try startDeviceOnSmallDisk()
        let (disk, state, broker, person) = (device.disk, device.state, device.broker, device.person)
        defer { broker.stop() }
        XCTAssertEqual(try person("open", "Maps").output, "done: open Maps — Maps in use\n")
        try disk.fill()
        XCTAssertNotEqual(try person("open", "Duolingo").status, 0, "the use could not be stored")
        try disk.free()
        // The use in progress (Duolingo, opened on the full disk) is what the device kept in memory.
        func storedUseInProgress() throws -> String {
            let stored = try SQLiteConnection(path: state + "/device.sqlite", flags: [.readOnly])
            return try stored.withStatement("SELECT json FROM state WHERE key = 'usage.inProgress'") { try $0.step() ? try $0.string(at: 0) ?? "" : "" }
        }
        waitUntil("the use kept in memory to be stored with nothing else happening", timeoutSeconds: 10) {
            ((try? storedUseInProgress()) ?? "").contains("com.duolingo.DuolingoMobile")
        }
        broker.stop(signal: SIGKILL)
        XCTAssertTrue(try storedUseInProgress().contains("com.duolingo.DuolingoMobile"), "stored before the kill, not lost with it")
    }
}

/// `device.sqlite` on a full disk: a value that cannot be saved is kept and written with the next save once
/// there is room — not only when its own key changes again.
final class DeviceStateFullDiskTests: XCTestCase {
    func testAValueThatCouldNotBeSavedIsWrittenWithTheNextSave() throws {
        let disk = try SmallDisk(size: "4m")
        let store = try DeviceStateStore(path: disk.path + "/device.sqlite")
        try store.save(1, key: "tokens.epoch")
        try disk.fill()
        // Larger than anything the write-ahead log holds yet, so it needs new space.
        let stores = Array(repeating: "app.0123456789abcdef", count: 20_000)
        XCTAssertThrowsError(try store.save(stores, key: "managedsettings.stores"), "the disk is full")
        XCTAssertNil(try store.load([String].self, key: "managedsettings.stores"))

        try disk.free()
        try store.save(2, key: "tokens.epoch")
        XCTAssertEqual(try store.load(Int.self, key: "tokens.epoch"), 2)
        XCTAssertEqual(try store.load([String].self, key: "managedsettings.stores"), stores, "written with the next save")
        let reopened = try DeviceStateStore(path: disk.path + "/device.sqlite")
        XCTAssertEqual(try reopened.load([String].self, key: "managedsettings.stores")?.count, stores.count)
    }

    /// A span of use that could not be written goes first in the store's next write, whatever that write is: the use in
    /// progress staged after it (the one that follows the span) is never stored without it.
    func testAUseInProgressIsNeverStoredWithoutTheSpanBeforeIt() throws {
        struct Span: Decodable { let pad: String }
        let disk = try SmallDisk(size: "4m")
        let store = try DeviceStateStore(path: disk.path + "/device.sqlite")
        try store.save(1, key: "tokens.epoch")
        try disk.fill()
        let pad = String(repeating: "s", count: 1_500_000)
        store.stage(json: Array(#""after the span""#.utf8), key: "usage.inProgress")
        XCTAssertThrowsError(try store.appendUsage(json: Array(#"{"pad":"\#(pad)"}"#.utf8), endMilliseconds: 1_000, horizonMilliseconds: 0))
        try disk.free()
        try store.save(2, key: "tokens.epoch")  // an unrelated write
        XCTAssertFalse(store.hasUnsaved)
        let reopened = try DeviceStateStore(path: disk.path + "/device.sqlite")
        XCTAssertEqual(try reopened.usageSpans(Span.self).map(\.pad.count), [pad.count], "the span went in with the next write")
        XCTAssertEqual(try reopened.load(String.self, key: "usage.inProgress"), "after the span")
    }

    /// `saveUnsaved` writes what failed — values, list changes and spans of use — with no new change to carry it.
    func testWhatCouldNotBeSavedIsWrittenByItselfOnceThereIsRoom() throws {
        let disk = try SmallDisk(size: "4m")
        let store = try DeviceStateStore(path: disk.path + "/device.sqlite")
        try store.save(1, key: "tokens.epoch")
        try disk.fill()
        let big = Array(repeating: "app.0123456789abcdef", count: 20_000)
        XCTAssertThrowsError(try store.save(big, key: "managedsettings.stores"))
        XCTAssertThrowsError(try store.appendItem(big, id: "n-1", list: "notifications"))
        XCTAssertTrue(store.hasUnsaved)
        XCTAssertThrowsError(try store.saveUnsaved(), "still full: kept for the next try")
        XCTAssertTrue(store.hasUnsaved)
        try disk.free()
        try store.saveUnsaved()
        XCTAssertFalse(store.hasUnsaved)
        let reopened = try DeviceStateStore(path: disk.path + "/device.sqlite")
        XCTAssertEqual(try reopened.load([String].self, key: "managedsettings.stores")?.count, big.count)
        XCTAssertEqual(try reopened.items([String].self, list: "notifications").count, 1)
    }
}

/// Lists kept one row per item (delivered notifications): many generated runs of appends, replacements and removals
/// read back in the model's order, also from a reopened store; a change that could not be written (a full disk) is
/// written with the next one.
final class DeviceStateListTests: XCTestCase {
    func testGeneratedChangesReadBackInOrderAfterAReopen() throws {
        let work = TemporaryDirectory(prefix: "sblist")
        var seed: UInt64 = 2026_1124
        for round in 0..<40 {
            let path = work.file("device-\(round).sqlite")
            var store = try DeviceStateStore(path: path)
            var model: [(id: String, value: Int)] = []
            for step in 0..<60 {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                let id = "n\(seed >> 60)"  // 16 ids: replacements and removals of present ones are common
                if (seed >> 32) % 4 == 0 {
                    try store.removeItem(id: id, list: "notifications.delivered")
                    model.removeAll { $0.id == id }
                } else {
                    try store.appendItem(step, id: id, list: "notifications.delivered")
                    model.removeAll { $0.id == id }
                    model.append((id, step))
                }
                if step % 20 == 19 { store = try DeviceStateStore(path: path) }
                XCTAssertEqual(try store.items(Int.self, list: "notifications.delivered"), model.map(\.value), "round \(round), step \(step)")
            }
            XCTAssertEqual(try store.items(Int.self, list: "another"), [], "lists are apart")
        }
    }

    func testAChangeThatCouldNotBeWrittenIsWrittenWithTheNextOne() throws {
        let disk = try SmallDisk(size: "4m")
        let store = try DeviceStateStore(path: disk.path + "/device.sqlite")
        try store.appendItem("first", id: "a", list: "notifications.delivered")
        try disk.fill()
        let large = String(repeating: "x", count: 2_000_000)
        XCTAssertThrowsError(try store.appendItem(large, id: "b", list: "notifications.delivered"), "the disk is full")
        try disk.free()
        try store.removeItem(id: "a", list: "notifications.delivered")
        XCTAssertEqual(try DeviceStateStore(path: disk.path + "/device.sqlite").items(String.self, list: "notifications.delivered"), [large])
    }
}

extension CrashSafetyTests {
    /// What `device.sqlite` holds of each ManagedSettings store, read as a restarted device reads it.
    func storedShields(_ state: String) throws -> [String: ShieldSettings] {
        let stored = try SQLiteConnection(path: state + "/device.sqlite", flags: [.readOnly])
        let json = try stored.withStatement("SELECT json FROM state WHERE key = 'managedsettings.stores'") { try $0.step() ? try $0.string(at: 0) ?? "{}" : "{}" }
        return try JSONDecoder().decode([String: ShieldSettings].self, from: Data(json.utf8))
    }

    /// What the journal last announced of each store (`managedsettings.changed`); an empty shield is no store.
    func announcedShields(_ journal: [Envelope]) throws -> [String: ShieldSettings] {
        var shields: [String: ShieldSettings] = [:]
        for envelope in journal where envelope.topic == "managedsettings.changed" {
            let store = try XCTUnwrap(envelope.bodyValue["store"]?.stringValue)
            let shield = try JSONDecoder().decode(ShieldSettings.self, from: Data((envelope.bodyValue["shield"] ?? .object([:])).jsonText.utf8))
            shields[store] = shield.isEmpty ? nil : shield
        }
        return shields
    }

    /// An earned unlock and its re-block are durable before they are announced: the re-block at the unlock's end,
    /// due while `device.sqlite` is on a full disk, is neither in force nor announced until it is saved, so a
    /// SIGKILL at any moment leaves a store holding what the journal last said — the lift while the disk is full,
    /// the re-block once space returns (announced then, and the broker killed right after). A restarted device
    /// has nothing to state again. (The device announced the re-block it could not save, and a crash then left a
    /// journal told "shielded" over a store that held the unlock.)
    func testAReblockIsDurableBeforeItIsAnnouncedEvenOnAFullDisk() throws {
        // Ten bus seconds a wall second: the one-minute unlock ends six wall seconds after it starts.
        let device = try startDeviceOnSmallDisk(unlockMinutes: 1, clock: ["--clock", "scaled", "--speed", "10"])
        let (disk, state, broker, person) = (device.disk, device.state, device.broker, device.person)
        defer { broker.stop() }
        let journalPath = device.work.file("journal.jsonl")
        for habit in ["Read", "Walk", "Stretch"] { XCTAssertEqual(try person("habit", habit).status, 0, "with room, the habit is recorded") }
        func shielded(_ envelope: Envelope) -> Bool { envelope.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false }
        waitUntil("the monitor to lift the shields (log: \(broker.log(tail: 10)))") {
            journal(journalPath).last { $0.topic == "managedsettings.changed" }.map { !shielded($0) } ?? false
        }
        let lifted = try announcedShields(journal(journalPath))
        XCTAssertEqual(try storedShields(state), lifted, "the unlock is stored as announced")

        // The disk fills before the unlock ends: the re-block cannot be saved.
        try disk.fill()
        waitUntil("the re-block at the unlock's end to fail to be saved", timeoutSeconds: 30) {
            journal(journalPath).contains { $0.topic == "bus.error" && $0.bodyValue["message"]?.stringValue?.contains("ManagedSettings stores") == true }
        }
        XCTAssertEqual(try announcedShields(journal(journalPath)), lifted, "a re-block the disk did not take is not announced")
        XCTAssertEqual(try storedShields(state), lifted, "and the store holds what was announced")

        // Space returns: the re-block is saved, then announced; a kill right after the announcement keeps it.
        try disk.free()
        waitUntil("the re-block to be announced once saved", timeoutSeconds: 30) {
            journal(journalPath).last { $0.topic == "managedsettings.changed" }.map(shielded) ?? false
        }
        broker.stop(signal: SIGKILL)
        let announced = try announcedShields(journal(journalPath))
        XCTAssertNotEqual(announced, lifted)
        XCTAssertEqual(try storedShields(state), announced, "the store holds the re-block announced before the kill")

        // The restarted device has nothing to state again: its journal says the same of every store.
        let after = device.work.file("after.jsonl")
        let restarted = try BrokerProcess(configuration: try habitLockConfiguration(unlockMinutes: 1),
                                          arguments: ["--no-scenario", "--state-dir", state, "--journal", after, "--clock", "scaled", "--speed", "10"])
        defer { restarted.stop() }
        waitUntil("the restarted device to be ready (log: \(restarted.log(tail: 10)))") { journal(after).contains { $0.topic == "bus.ready" } }
        XCTAssertEqual(try storedShields(state), announced)
        for change in journal(after) where change.topic == "managedsettings.changed" {
            let store = try XCTUnwrap(change.bodyValue["store"]?.stringValue)
            let shield = try JSONDecoder().decode(ShieldSettings.self, from: Data((change.bodyValue["shield"] ?? .object([:])).jsonText.utf8))
            XCTAssertEqual(shield.isEmpty ? nil : shield, announced[store], "the restarted device states \(store) as announced before the kill")
        }
    }
}
