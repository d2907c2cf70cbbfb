import AppGroupStore
@testable import DeviceOS
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// A full disk under the state folder — the App-Group stores, not only the journal — through
/// the real broker, the reference plugins and `shieldbus do`: the action is answered with an error naming what
/// could not be recorded and where (never "done"), `status` counts it, nothing crashes, and once space returns
/// the same action is recorded. The disk is a real small tmpfs
/// (root only). (In CrashSafetyTests for its habit-lock configuration and journal reader.)
extension CrashSafetyTests {
    func testAFullStateDiskFailsTheActionOutLoudAndRecoversWhenSpaceReturns() throws {
        let work = TemporaryDirectory(prefix: "sbfull")
        let disk = try SmallDisk(size: "16m")
        let group = "group.dev.shieldbus.habitlock"
        let state = disk.path + "/state"
        let journal = work.file("journal.jsonl")
        let broker = try BrokerProcess(configuration: try habitLockConfiguration(),
                                       arguments: ["--no-scenario", "--state-dir", state, "--journal", journal])
        defer { broker.stop() }
        waitUntil("the plugins to be ready (log: \(broker.log(tail: 10)))") {
            self.journal(journal).contains { $0.topic == "bus.ready" }
        }
        func person(_ arguments: String...) throws -> (status: Int32, output: String) {
            try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path])
        }
        XCTAssertEqual(try person("habit", "walk").output, "done: habit walk\n", "with room, the habit is recorded")

        try disk.fill()
        let habit = try person("habit", "read")
        XCTAssertNotEqual(habit.status, 0, "never 'done' for a habit the app could not save: \(habit.output)")
        XCTAssertFalse(habit.output.contains("done"), habit.output)
        XCTAssertTrue(habit.output.contains("could not record the habit 'read'"), habit.output)
        XCTAssertTrue(habit.output.contains(group), "the store is named: \(habit.output)")

        let status = try broker.status()
        XCTAssertTrue(broker.process.isRunning, "no crash: \(broker.log())")
        XCTAssertGreaterThanOrEqual(status["counters"]?["storageErrors"]?.intValue ?? 0, 1, status.jsonText)
        XCTAssertNotNil(status["broker"]?["lastStorageError"]?.stringValue, status.jsonText)
        XCTAssertTrue(broker.log(tail: 400).contains("could not record the habit 'read'"), "said on the terminal: \(broker.log())")
        for plugin in status["plugins"]?.arrayValue ?? [] {
            XCTAssertEqual(plugin["state"]?.stringValue, "running", "no plugin crashed: \(plugin.jsonText)")
        }

        // Space returns: the same action is recorded, and the device writes what it could not.
        try disk.free()
        XCTAssertEqual(try person("habit", "read").output, "done: habit read\n")
        let defaults = try SharedDefaults(suiteName: group, container: AppGroupContainer(root: URL(fileURLWithPath: state + "/appgroups")))
        let habits = try defaults.allKeys.filter { $0.hasPrefix("habits.") }.flatMap { try defaults.value([String].self, forKey: $0) ?? [] }
        XCTAssertEqual(habits, ["walk", "read"], "the refused habit is recorded when done again, nothing twice")
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
}
