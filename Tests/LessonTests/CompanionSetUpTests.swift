// CompanionSetUpTests: the companion app's set-up refused by a full disk is said and done again once there is room.

import BusProtocol
import DeviceAPI
import Foundation
import ShieldBusTestSupport
import SQLite
import XCTest

extension FaultTests {
    /// The device restarted while its state folder is full: the companion app's launch cannot save the picker's
    /// selection. It says so on the bus (`state.call-failed`), and once the disk has room it sets itself up again —
    /// its schedules registered anew — without waiting for a launch that may be days away. Found by the full-disk
    /// fault class: a fill that came while the app was setting up left the lock shielding nothing for good.
    func testASetUpThatAFullDiskRefusedIsDoneAgainOnceThereIsRoom() throws {
        let disk = try SmallDisk(size: "16m")
        let work = TemporaryDirectory(prefix: "sbsetup")
        let state = disk.path + "/state", journalPath = work.file("journal.jsonl")
        let broker = try BrokerProcess(configuration: try configuration(unlockMinutes: 1),
                                       arguments: ["--no-scenario", "--state-dir", state, "--journal", journalPath, "--clock", "scaled", "--speed", "5"])
        defer { broker.stop() }
        func journal() -> [Envelope] { JournalLines.eventsSoFar(atPath: journalPath) }
        waitUntil("the lock to shield the selection (log: \(broker.log(tail: 10)))", timeoutSeconds: 60) {
            journal().contains { $0.topic == "managedsettings.changed" && $0.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false }
        }
        // The group held open across the restart, as a Studio watching the state holds it: when the last process
        // that has it open closes it, SQLite removes its shared-memory file, and a new one cannot be made on a full
        // disk — the plugins would then fail to open the group at all, before any set-up (not this test's case).
        let holder = try SQLiteConnection(path: StatePaths.appGroupStore("group.dev.shieldbus.habitlock", in: state), flags: .readOnly)
        try holder.execute("SELECT count(*) FROM sqlite_master")
        defer { withExtendedLifetime(holder) {} }
        try disk.fill()
        _ = try runToEnd(BuildProducts.path("shieldbus"), ["do", "restart", "--runtime-dir", broker.runtime.path])
        // The bus cannot number anything while the disk is full: the broker's log says it first.
        guard let failure = try setUpRefusal(saying: "the companion app's set-up at launch failed", broker: broker, disk: disk, journal: journal) else { return }
        waitUntil("the companion app to register its schedules again (log: \(broker.log(tail: 20)))", timeoutSeconds: 60) {
            journal().contains { $0.topic == "deviceactivity.start-monitoring.request" && $0.source == "app" && $0.seq > failure.seq }
        }
    }

    /// Waits for the app's log line `saying` that its set-up was refused, gives the disk its room back, and returns the
    /// refusal as the app said it on the bus (`state.call-failed`, naming the set-up); nil, failed, when either
    /// never came.
    func setUpRefusal(saying: String, broker: BrokerProcess, disk: SmallDisk, journal: () -> [Envelope]) throws -> Envelope? {
        let refused = waitUntil("the app to say its set-up was refused (log: \(broker.log(tail: 20)))", timeoutSeconds: 60) {
            broker.log(tail: 400).contains(saying)
        }
        try disk.free()
        guard refused else { return nil }
        var failure: Envelope?
        waitUntil("the refusal to be said on the bus (log: \(broker.log(tail: 20)))", timeoutSeconds: 60) {
            failure = journal().first { $0.topic == DeviceTopic.callFailed && $0.source == "app" }
            return failure != nil
        }
        if let failure { XCTAssertTrue(failure.bodyValue["call"]?.stringValue?.contains("set-up") == true, failure.bodyValue.jsonText) }
        return failure
    }
}
