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

    /// A group's folder that is a dangling symbolic link (a member's sandbox could have planted it) is refused by
    /// name before anything starts, as every open of the group's store refuses it — not as a folder that exists.
    func testALinkPlantedAtAGroupsFolderIsRefusedByNameBeforeAnythingStarts() throws {
        let state = TemporaryDirectory(prefix: "sbplanted")
        try FileManager.default.createDirectory(atPath: state.file("appgroups"), withIntermediateDirectories: true)
        let folder = state.file("appgroups/\(group)")
        try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: state.file("nowhere"))
        let run = try ScenarioRun.run(configuration: memberConfiguration, scenario: Self.minute, arguments: ["--keep-state"],
                                      stateDirectory: state.path)
        XCTAssertNotEqual(run.exitStatus, 0, run.errors)
        XCTAssertTrue(run.errors.contains("\(folder) is a symbolic link"), run.errors)
        XCTAssertTrue(run.journal.isEmpty, "nothing started")
        XCTAssertFalse(FileManager.default.fileExists(atPath: state.file("nowhere")), "the link was not followed")
    }

    /// When both the group's store and the device's are damaged, the group's is said: the groups' stores are made
    /// first, even while the device's is made beside them.
    func testWhenAGroupsStoreAndTheDevicesAreDamagedTheGroupsIsSaid() throws {
        let state = TemporaryDirectory(prefix: "sbbothdamaged")
        let groupOnly = "name: group-only\nappGroups:\n  - {name: \(group), slices: {}}\n"
        let first = try ScenarioRun.run(configuration: groupOnly, scenario: Self.minute, stateDirectory: state.path)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        let groupStore = state.file("appgroups/\(group)/Library/Preferences/\(group).sqlite")
        for store in [groupStore, state.file("device.sqlite")] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: store), store)
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: store))
        }
        let run = try ScenarioRun.run(configuration: groupOnly, scenario: Self.minute, arguments: ["--keep-state"], stateDirectory: state.path)
        XCTAssertNotEqual(run.exitStatus, 0, run.errors)
        XCTAssertTrue(run.errors.contains("the app-group store '\(groupStore)' is damaged"), run.errors)
        XCTAssertFalse(run.errors.contains("the device state"), run.errors)
    }

    /// A configuration with one plugin of the group, which a run shows the group's folder.
    var memberConfiguration: String {
        """
        name: member
        appGroups:
          - {name: \(group), slices: {}}
        plugins:
          - {name: member, executable: /bin/true, role: generic, restart: never, appGroup: \(group)}

        """
    }

    static let minute = "name: s\nstart: 2026-11-23T09:00\nend: after 1m\nsteps: []\n"

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
