@testable import Broker
import BusProtocol
import Logging
import SQLite
import ShieldBusTestSupport
import XCTest

/// A journal begins with `bus.started`: a storage failure met while the broker starts (a service's store opens and
/// commits before it) is said right after it, with the restart losses, and one met later at once.
final class RecorderTests: XCTestCase {
    func testStorageFailuresBeforeBusStartedAreSaidRightAfterIt() {
        let outbox = Outbox(), statistics = BusStatistics()
        let recorder = Recorder(ledger: DeliveryLedger(limit: 100, store: nil), outbox: outbox, statistics: statistics,
                                clock: BusClock(mode: .virtual, start: 0), logger: Logger(label: "recorder-test"))
        recorder.reportStorageFailure("cannot note a commit of device.sqlite")
        XCTAssertTrue(outbox.isEmpty, "nothing goes ahead of bus.started")
        XCTAssertEqual(recorder.lastStorageError, "cannot note a commit of device.sqlite", "status says it at once")
        outbox.emit(topic: "bus.started", body: [:])
        recorder.busStarted(restartLosses: ["bus.sqlite lost its last 2 committed write(s)"])
        recorder.reportStorageFailure("cannot write the journal")
        XCTAssertEqual(outbox.count, 4)
        let codes = outbox.waiting.map { $0.topic == "bus.error" ? (try? JSONValue(parsing: $0.body))?["code"]?.stringValue ?? "?" : $0.topic }
        XCTAssertEqual(codes, ["bus.started", "writes-lost", "storage-failed", "storage-failed"])
        XCTAssertEqual(statistics.errorsByCode["storage-failed"], 2)
    }

    /// The delivery store's write-ahead log is checkpointed after far fewer frames in virtual time, where nobody waits
    /// on the loop's idle moment, than in real or scaled time, where the checkpoint's syncs delay the shield decision.
    func testTheDeliveryStoresCheckpointLimitFollowsTheClock() throws {
        let directory = TemporaryDirectory(prefix: "sbcheckpointlimit")
        defer { withExtendedLifetime(directory) {} }
        XCTAssertLessThan(DeliveryStore.virtualTimeCheckpointLimit, LogCheckpoints.idleSoftLimit)
        for (mode, limit) in [(ClockMode.virtual, DeliveryStore.virtualTimeCheckpointLimit), (.real, LogCheckpoints.idleSoftLimit),
                              (.scaled(speed: 60), LogCheckpoints.idleSoftLimit)] {
            let ledger = DeliveryLedger(limit: 100, store: nil)
            let recorder = Recorder(ledger: ledger, outbox: Outbox(), statistics: BusStatistics(), clock: BusClock(mode: mode, start: 0),
                                    logger: Logger(label: "recorder-test"))
            _ = try recorder.openDeliveryStore(path: directory.path + "/\(mode.name).sqlite", plugins: [], continuingTheRun: false)
            XCTAssertEqual(ledger.store?.checkpointLimit, limit, mode.name)
        }
    }
}
