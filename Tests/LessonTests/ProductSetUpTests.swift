// ProductSetUpTests: a MonitorKit product's set-up refused by a full disk is said and done again once there is room.

import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

extension FaultTests {
    /// Bedtime, approved while its state folder is full: its app cannot save the person's pick, so nothing is
    /// registered. It says so on the bus (`state.call-failed`), and once the disk has room it sets itself up again
    /// on its retry timer — the nightly schedule monitored — without waiting for a launch or another approval.
    func testABedtimeSetUpThatAFullDiskRefusedIsDoneAgainOnceThereIsRoom() throws {
        let disk = try SmallDisk(size: "16m")
        let work = TemporaryDirectory(prefix: "sbbedsetup")
        let state = disk.path + "/state", journalPath = work.file("journal.jsonl")
        let configuration = try ScenarioRun.shippedConfiguration("bedtime").replacingOccurrences(of: "authorization: approve", with: "authorization: ask")
            + "\ncatalog: \(BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)\n"
        XCTAssertTrue(configuration.contains("authorization: ask"), "the shipped bedtime configuration has no authorization policy to change")
        let broker = try BrokerProcess(configuration: configuration,
                                       arguments: ["--no-scenario", "--state-dir", state, "--journal", journalPath, "--clock", "scaled", "--speed", "5"])
        defer { broker.stop() }
        func journal() -> [Envelope] { JournalLines.eventsSoFar(atPath: journalPath) }
        func registersTheNight(_ envelope: Envelope) -> Bool {
            envelope.topic == "deviceactivity.start-monitoring.request" && envelope.source == "app" && envelope.bodyValue["activity"]?.stringValue == "bedtime.night"
        }
        waitUntil("the app to ask for authorization (log: \(broker.log(tail: 10)))", timeoutSeconds: 60) {
            journal().contains { $0.topic == "familycontrols.authorization.request" && $0.source == "app" }
        }
        try disk.fill()
        _ = try runToEnd(BuildProducts.path("shieldbus"), ["do", "authorize", "approve", "--runtime-dir", broker.runtime.path])
        guard let failure = try setUpRefusal(saying: "bedtime's set-up after the approval failed", broker: broker, disk: disk, journal: journal) else { return }
        XCTAssertFalse(journal().contains { registersTheNight($0) && $0.seq < failure.seq }, "the night was registered before the set-up failed")
        var registered: Envelope?
        waitUntil("the app to register the night once there is room (log: \(broker.log(tail: 60)))", timeoutSeconds: 60) {
            let events = journal()
            guard let request = events.first(where: { registersTheNight($0) && $0.seq > failure.seq }) else { return false }
            registered = events.first { $0.topic == "deviceactivity.start-monitoring.reply" && $0.corr == request.corr }
            return registered != nil
        }
        XCTAssertEqual(registered?.bodyValue["ok"]?.boolValue, true, "the OS took the night: \(registered?.bodyValue.jsonText ?? "no reply")")
    }
}
