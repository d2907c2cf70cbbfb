import AppGroupStore
import Foundation
import SQLite
import ShieldBusTestSupport
import XCTest

/// A state folder kept from when each App Group and each plugin's record of handled events was one file beside the
/// others (before each had a folder a sandbox could show alone): the broker moves them into their folders at start,
/// losing nothing; `shieldbus state` says what to do instead of "no app groups".
final class StateLayoutTests: XCTestCase {
    let group = "group.dev.shieldbus.focus"

    func testAStateFolderKeptOneFilePerStoreIsMovedAtStartWithNothingLost() throws {
        let kept = TemporaryDirectory(prefix: "sbflatkept"), state = TemporaryDirectory(prefix: "sbflatstate")
        let flat = AppGroupContainer(rootPath: kept.file("appgroups"), layout: .flat)
        try flat.createGroup(group)
        let writer = try SharedDefaults(suiteName: group, container: flat, writer: SharedDefaults.administrator)
        _ = try writer.set(7, forKey: "kept")
        try FileManager.default.createDirectory(atPath: kept.file("cursors"), withIntermediateDirectories: true)
        let record = try SQLiteConnection(path: kept.file("cursors/monitor.sqlite"), flags: [.readWrite, .create])
        try record.enableWAL()
        try record.execute("CREATE TABLE handled (seq INTEGER PRIMARY KEY); INSERT INTO handled VALUES (41)")
        // The folder as a killed device leaves it: both writes still in their logs.
        for name in ["appgroups", "cursors"] { try FileManager.default.copyItem(atPath: kept.file(name), toPath: state.file(name)) }
        withExtendedLifetime((writer, record)) {}
        XCTAssertGreaterThan(FileSize.of(state.file("appgroups/\(group).sqlite-wal")) ?? 0, 0)
        XCTAssertGreaterThan(FileSize.of(state.file("cursors/monitor.sqlite-wal")) ?? 0, 0)

        let before = try CommandRun.shieldbus(["state", "list", "--state-dir", state.path])
        XCTAssertNotEqual(before.status, 0)
        XCTAssertTrue(before.errors.contains("(\(group)) are kept as an older ShieldBus kept them, one file per group: start the broker once on this state folder"), before.errors)

        let broker = try BrokerProcess(configuration: "name: kept\nappGroups:\n  - {name: \(group), slices: {}}\n", arguments: ["--state-dir", state.path])
        defer { broker.stop() }
        let get = try CommandRun.shieldbus(["state", "get", "kept", "--runtime-dir", broker.runtime.path])
        XCTAssertEqual(get.output, "7\n", get.errors)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state.file("appgroups/\(group).sqlite")))
        let moved = try SQLiteConnection(path: StatePaths.handledEventsRecord("monitor", in: state.path), flags: .readOnly)
        XCTAssertTrue(try moved.prepare("SELECT 1 FROM handled WHERE seq = 41").step(), "the plugin's record came along, its log with it")
        XCTAssertFalse(FileManager.default.fileExists(atPath: state.file("cursors/monitor.sqlite")))
    }

    /// A plugin's `writable:` or `readable:` inside the device's state folder would show it every group and record
    /// over its sandbox's hiding: refused before anything starts, naming the plugin, the key and the folder.
    func testAGivenPathInTheStateFolderIsRefused() throws {
        let state = TemporaryDirectory(prefix: "sbgiven")
        for key in ["writable", "readable"] {
            let configuration = """
                name: given
                appGroups:
                  - {name: \(group), slices: {}}
                plugins:
                  - {name: nosy, executable: /bin/true, role: generic, restart: never, \(key): ["\(state.path)/appgroups"]}

                """
            let run = try ScenarioRun.run(configuration: configuration, scenario: "name: s\nstart: 2026-11-23T09:00\nend: after 1m\nsteps: []\n",
                                          stateDirectory: state.path)
            XCTAssertEqual(run.exitStatus, 2, "a configuration error: \(run.errors)")
            XCTAssertTrue(run.errors.contains("plugin 'nosy': its \(key): path \(state.path)/appgroups is in "), run.errors)
            XCTAssertTrue(run.journal.isEmpty, "nothing started")
        }
    }
}
