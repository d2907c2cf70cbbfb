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
        let state = TemporaryDirectory(prefix: "sbflatstate")
        let flat = AppGroupContainer(rootPath: state.file("appgroups"), layout: .flat)
        try flat.createGroup(group)
        _ = try SharedDefaults(suiteName: group, container: flat, writer: SharedDefaults.administrator).set(7, forKey: "kept")
        try FileManager.default.createDirectory(atPath: state.file("cursors"), withIntermediateDirectories: true)
        let record = try SQLiteConnection(path: state.file("cursors/monitor.sqlite"), flags: [.readWrite, .create])
        try record.execute("CREATE TABLE handled (seq INTEGER PRIMARY KEY); INSERT INTO handled VALUES (41)")

        let before = try CommandRun.shieldbus(["state", "list", "--state-dir", state.path])
        XCTAssertNotEqual(before.status, 0)
        XCTAssertTrue(before.errors.contains("(\(group)) are kept as an older ShieldBus kept them, one file per group: start the broker once on this state folder"), before.errors)

        let broker = try BrokerProcess(configuration: "name: kept\nappGroups:\n  - {name: \(group), slices: {}}\n", arguments: ["--state-dir", state.path])
        defer { broker.stop() }
        let get = try CommandRun.shieldbus(["state", "get", "kept", "--runtime-dir", broker.runtime.path])
        XCTAssertEqual(get.output, "7\n", get.errors)
        XCTAssertFalse(FileManager.default.fileExists(atPath: state.file("appgroups/\(group).sqlite")))
        let moved = try SQLiteConnection(path: StatePaths.handledEventsRecord("monitor", in: state.path), flags: .readOnly)
        XCTAssertTrue(try moved.prepare("SELECT 1 FROM handled WHERE seq = 41").step(), "the plugin's record came along")
        XCTAssertFalse(FileManager.default.fileExists(atPath: state.file("cursors/monitor.sqlite")))
        withExtendedLifetime(record) {}
    }
}
