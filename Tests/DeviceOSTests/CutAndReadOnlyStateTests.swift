import Foundation
import ShieldBusTestSupport
import SQLite
import XCTest

/// Issue 11's storage faults beyond the empty file and the full disk, through the real `shieldbus run`: a store cut
/// partway, and a state disk that is read-only. Each is refused out loud, naming the file, and changes nothing.
/// (In CrashSafetyTests for its habit-lock configuration and day.)
extension CrashSafetyTests {
    /// Every file under `folder` (relative path → bytes) but SQLite's shared-memory indexes (`-shm`), which a
    /// reader may rewrite and which hold nothing of their own, and the lock, which names the last broker to take it.
    func files(under folder: String) -> [String: Data] {
        var found: [String: Data] = [:]
        for case let name as String in FileManager.default.enumerator(atPath: folder)?.allObjects ?? []
        where !name.hasSuffix("-shm") && name != "state.lock" {
            if let data = FileManager.default.contents(atPath: folder + "/" + name) { found[name] = data }
        }
        return found
    }

    /// The files whose bytes differ between two listings.
    func changed(_ now: [String: Data], _ expected: [String: Data]) -> [String] {
        Set(now.keys).union(expected.keys).filter { now[$0] != expected[$0] }.sorted()
    }

    func testAStoreCutPartwayIsRefusedNamingItAndNothingElseIsLost() throws {
        let state = TemporaryDirectory(prefix: "sbcut")
        let first = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, stateDirectory: state.path)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        let device = state.path + "/device.sqlite", store = StatePaths.appGroupStore("group.dev.shieldbus.habitlock", in: state.path)
        // Everything into the main files, so a cut takes away written pages, not a log that would be replayed.
        for path in [device, store] { try SQLiteConnection(path: path).execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        let sound = files(under: state.path)
        let refusals = [device: "the device state \(device) is damaged", store: "the app-group store '\(store)' is damaged"]
        for (path, refusal) in refusals.sorted(by: { $0.key < $1.key }) {
            let original = try XCTUnwrap(FileManager.default.contents(atPath: path))
            // Half the bytes, all but the last byte, and the header alone.
            for cut in [original.count / 2, original.count - 1, 100] {
                try original.prefix(cut).write(to: URL(fileURLWithPath: path))
                let run = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: ["--keep-state"], stateDirectory: state.path)
                XCTAssertEqual(run.exitStatus, 1, "\(path) cut to \(cut) of \(original.count) bytes: \(run.errors)")
                XCTAssertTrue(run.errors.contains(refusal), "cut to \(cut) bytes: \(run.errors)")
                XCTAssertFalse(run.errors.contains("Fatal error"), run.errors)
                XCTAssertTrue(run.journal.isEmpty, "nothing started")
                var expected = sound
                expected[String(path.dropFirst(state.path.count + 1))] = original.prefix(cut)
                XCTAssertEqual(changed(files(under: state.path), expected), [], "the cut file was left as it was and nothing else changed (cut to \(cut) bytes)")
                try original.write(to: URL(fileURLWithPath: path))
            }
        }
        // The file restored from its copy, the device goes on.
        let restored = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: ["--keep-state"], stateDirectory: state.path)
        XCTAssertEqual(restored.exitStatus, 0, restored.errors)
    }

    func testAReadOnlyStateDiskIsRefusedOutLoudAndChangesNothing() throws {
        let disk = try SmallDisk(size: "16m")
        let state = disk.path + "/state"
        let first = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, stateDirectory: state)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        let before = files(under: state)
        // A disk goes read-only under a stopped device (the kernel refuses it while a store is open for writing).
        try disk.remount(readOnly: true)
        let refused = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: ["--keep-state"], stateDirectory: state)
        XCTAssertEqual(refused.exitStatus, 1, refused.errors)
        XCTAssertTrue(refused.errors.contains("the state folder \(state)"), "the state folder is named: \(refused.errors)")
        XCTAssertTrue(refused.errors.lowercased().contains("read-only"), "the reason is said: \(refused.errors)")
        XCTAssertFalse(refused.errors.contains("Fatal error"), refused.errors)
        XCTAssertTrue(refused.journal.isEmpty, "nothing started")

        try disk.remount(readOnly: false)
        XCTAssertEqual(changed(files(under: state), before), [], "nothing in the state folder changed")
        let writable = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: ["--keep-state"], stateDirectory: state)
        XCTAssertEqual(writable.exitStatus, 0, writable.errors)
    }

    /// A power cut under `synchronous = NORMAL` can take a store's last commits (a bounded few: architecture.md
    /// § 7). The stores as the disk held them — each note two commits ahead, from the boot before, beside a log with
    /// a whole header and no frames — open, and what each lost reaches the person: a `bus.error` `writes-lost` per
    /// store right after `bus.started`, counted in `status`, and a line on the terminal.
    func testStoresAPowerCutSetBackAreSaidOnTheBus() throws {
        let state = TemporaryDirectory(prefix: "sbpowercut")
        let first = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, stateDirectory: state.path)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        let stores = [state.path + "/device.sqlite", StatePaths.appGroupStore("group.dev.shieldbus.habitlock", in: state.path), state.path + "/bus.sqlite"]
        try PowerCut.setBack(stores)
        let run = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: ["--keep-state"], stateDirectory: state.path)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let said = run.events("bus.error").filter { $0.bodyValue["code"]?.stringValue == "writes-lost" }.compactMap { $0.bodyValue["message"]?.stringValue }
        XCTAssertEqual(said.count, stores.count, "\(said)")
        for store in stores {
            let loss = "\(store) lost its last 2 committed write(s) with the machine's restart"
            XCTAssertTrue(said.contains { $0.hasPrefix(loss) }, "\(store): \(said)")
            XCTAssertTrue(run.errors.contains(loss), run.errors)
        }
        let started = try XCTUnwrap(run.journal.firstIndex { $0.topic == "bus.started" })
        XCTAssertTrue(run.journal[started + 1].topic == "bus.error", "said right after bus.started")
    }

    /// A commit note the broker cannot write — a folder in its place, which even root cannot write as a file — leaves
    /// every commit standing, and is said once on the bus (`storage-failed`, counted in `status`) and the terminal:
    /// a write-ahead log lost meanwhile would go unnoticed.
    func testACommitNoteTheBrokerCannotWriteIsSaidOnTheBus() throws {
        let state = TemporaryDirectory(prefix: "sbnote")
        let first = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, stateDirectory: state.path)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        let device = state.path + "/device.sqlite", note = CommitNote.path(besides: state.path + "/device.sqlite")
        try FileManager.default.removeItem(atPath: note)
        try FileManager.default.createDirectory(atPath: note, withIntermediateDirectories: false)
        let run = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, arguments: ["--keep-state"], stateDirectory: state.path)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let said = run.events("bus.error").filter { $0.bodyValue["code"]?.stringValue == "storage-failed" }.compactMap { $0.bodyValue["message"]?.stringValue }
        XCTAssertEqual(said, ["cannot note a commit of \(device): cannot write the commit note \(note): Is a directory; its commits stand, but until this is fixed a lost write-ahead log or a power cut may go unnoticed or lose more"])
        XCTAssertTrue(run.errors.contains("cannot note a commit of \(device)"), run.errors)
        // The device's first commit comes while the broker starts: said after bus.started, which a journal begins with.
        XCTAssertEqual(run.journal.first?.topic, "bus.started")
    }
}
