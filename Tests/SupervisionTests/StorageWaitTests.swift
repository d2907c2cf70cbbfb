// StorageWaitTests: a plugin whose app group a full disk keeps from opening waits for room, never given up on.

import BusProtocol
import Foundation
import ShieldBusTestSupport
import SQLite
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
        let work = TemporaryDirectory(prefix: "sbwait"), journalPath = work.file("journal.jsonl")
        let broker = try BrokerProcess(configuration: config, arguments: ["--state-dir", disk.path + "/state", "--journal", journalPath])
        /// Whether the journal has a pong from `name` (the tap's session, not kept alive meanwhile, may have ended).
        func journalHasPong(from name: String) -> Bool {
            JournalLines.eventsSoFar(atPath: journalPath).contains { $0.topic == "app.sup.pong" && $0.source == name }
        }
        waitConnected("keeper", in: broker)
        waitConnected("steady", in: broker)
        let store = StatePaths.appGroupStore(group, in: disk.path + "/state")
        // The plugin's start opened the group to check it and closed it: nothing holds it.
        XCTAssertFalse(FileManager.default.fileExists(atPath: store + "-shm"), "the group's last connection removed its shared memory")

        // The other plugin's record of handled events held open across the restart (as CompanionSetUpTests
        // holds an app group): its shared-memory file stays, so only the keeper waits for the disk.
        let holder = try SQLiteConnection(path: StatePaths.handledEventsRecord("steady", in: disk.path + "/state"), flags: .readOnly)
        try holder.execute("SELECT count(*) FROM sqlite_master")
        defer { withExtendedLifetime(holder) {} }
        try disk.fill()
        // The restart happens; the command fails all the same, saying the device could not save its timers.
        _ = try CommandRun.shieldbus(["do", "restart", "--runtime-dir", broker.runtime.path])
        let crashLoop = 5
        waitUntil("the plugin to be started again more often than a crash loop allows (log: \(broker.log(tail: 10)))", timeoutSeconds: 60) {
            let entry = plugin("keeper", in: broker)
            return (entry?["restarts"]?.intValue ?? 0) > Int64(crashLoop) && entry?["state"]?.stringValue == "waiting-for-storage"
        }
        let waiting = try XCTUnwrap(plugin("keeper", in: broker))
        XCTAssertEqual(waiting["state"]?.stringValue, "waiting-for-storage", waiting.jsonText)
        let error = waiting["lastError"]?.stringValue ?? ""
        XCTAssertTrue(error.contains("exited with status 75"), error)
        XCTAssertTrue(error.contains("(appGroup: \(group)) cannot be opened now"), error)
        // Out of action, it holds nobody up: the other plugin answers. What is for it waits in its mailbox.
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup."])
        try tap.publish(Publish(topic: "app.sup.ping", body: ["n": .int(1)]))
        let seen = try collectEvents(from: tap) { $0.contains { $0.topic == "app.sup.pong" && $0.source == "steady" } }
        XCTAssertTrue(seen.contains { $0.topic == "app.sup.pong" && $0.source == "steady" }, "the bus goes on while a plugin waits for its storage")
        XCTAssertFalse(journalHasPong(from: "keeper"))

        let waitsBegun = broker.log().split(separator: "\n").filter { $0.contains("plugin=keeper") && $0.contains("plugin cannot use its storage; starting it again until it can") }
        XCTAssertEqual(waitsBegun.count, 1, "the wait is logged once, not at every start: \(broker.log(tail: 20))")

        try disk.free()
        waitUntil("the plugin to run again once the disk has room (log: \(broker.log(tail: 10)))", timeoutSeconds: 60) {
            let entry = plugin("keeper", in: broker)
            return entry?["connected"]?.boolValue == true && entry?["state"]?.stringValue == "running"
        }
        XCTAssertTrue(broker.log().contains("plugin can use its storage again"), broker.log(tail: 20))
        waitUntil("the ping kept for it while it waited to reach it once it is back (log: \(broker.log(tail: 10)))") { journalHasPong(from: "keeper") }
    }
}
