// StorageWaitTests: a plugin whose app group a full disk keeps from opening waits for room, never given up on.

import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

extension SupervisionTests {
    /// The device restarted on a full disk, and no process had the plugin's app group open: SQLite had removed the
    /// group's shared-memory file with its last connection, and a new one cannot be made without room. The plugin's
    /// start says so and exits with status 75 (EX_TEMPFAIL); the broker starts it again, backing off, past the
    /// crash-loop limit, the bus going on without it meanwhile, and it runs again once the disk has room — not marked
    /// failed until a device restart as a configuration error is. Found by `FaultTests.testASetUpThatAFullDiskRefusedIsDoneAgainOnceThereIsRoom` under load.
    func testAPluginWhoseAppGroupAFullDiskKeepsClosedWaitsForRoomAndComesBack() throws {
        let disk = try SmallDisk(size: "16m")
        let group = "group.dev.shieldbus.focus"
        let config = configuration([("keeper", ", environment: {SHIELDBUS_APP_GROUP: \(group)}"), ("steady", "")],
                                   top: "appGroups:\n  - {name: \(group), slices: {keeper: [\"*\"]}}\n")
        let broker = try BrokerProcess(configuration: config, arguments: ["--state-dir", disk.path + "/state"])
        waitConnected("keeper", in: broker)
        waitConnected("steady", in: broker)
        let store = disk.path + "/state/appgroups/\(group).sqlite"
        // The plugin's start opened the group to check it and closed it: nothing holds it.
        XCTAssertFalse(FileManager.default.fileExists(atPath: store + "-shm"), "the group's last connection removed its shared memory")

        try disk.fill()
        // The restart happens; the command fails all the same, saying the device could not save its timers.
        _ = try CommandRun.shieldbus(["do", "restart", "--runtime-dir", broker.runtime.path])
        let crashLoop = 5
        waitUntil("the plugin to be started again more often than a crash loop allows (log: \(broker.log(tail: 10)))", timeoutSeconds: 60) {
            (plugin("keeper", in: broker)?["restarts"]?.intValue ?? 0) > Int64(crashLoop)
        }
        let waiting = try XCTUnwrap(plugin("keeper", in: broker))
        XCTAssertEqual(waiting["state"]?.stringValue, "waiting-for-storage", waiting.jsonText)
        let error = waiting["lastError"]?.stringValue ?? ""
        XCTAssertTrue(error.contains("exited with status 75"), error)
        XCTAssertTrue(error.contains("(appGroup: \(group)) cannot be opened now"), error)
        // Out of action, it holds nobody up: the other plugin answers.
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup."])
        XCTAssertNotNil(try ping(1, through: tap), "the bus goes on while a plugin waits for its storage")
        XCTAssertEqual(broker.log().components(separatedBy: "plugin cannot use its storage; starting it again until it can").count - 1, 1,
                       "the wait is logged once, not at every start: \(broker.log(tail: 20))")

        try disk.free()
        waitUntil("the plugin to run again once the disk has room (log: \(broker.log(tail: 10)))", timeoutSeconds: 60) {
            let entry = plugin("keeper", in: broker)
            return entry?["connected"]?.boolValue == true && entry?["state"]?.stringValue == "running"
        }
        XCTAssertTrue(broker.log().contains("plugin can use its storage again"), broker.log(tail: 20))
    }
}
