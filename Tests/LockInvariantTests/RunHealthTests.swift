import BusProtocol
import DeviceAPI
import Foundation
import LockInvariant
import XCTest

/// A degraded run fails on its own: the bus's degradations and a callback loop, read from the journal.
final class RunHealthTests: XCTestCase {
    func health(_ journal: JournalBuilder) -> [String] {
        var health = RunHealth()
        for envelope in journal.envelopes { health.read(envelope) }
        return health.problems.map(\.kind)
    }

    func callbacks(_ count: Int, within seconds: Int) -> JournalBuilder {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.add("2026-11-23 08:00", DeviceTopic.startMonitoringRequest, ["activity": "check"], source: "monitor")
        for index in 0..<count {
            let at = j.instant("2026-11-23 09:00").addingTimeInterval(Double(index * seconds) / Double(max(1, count)))
            j.add(at, DeviceTopic.intervalDidStart, JSONValue.object(["activity": "check"]).jsonBytes)
        }
        j.end("2026-11-23 10:00")
        return j
    }

    func testMoreThanSixtyCallbacksInAMinuteIsALoop() {
        XCTAssertEqual(health(callbacks(60, within: 59)), [])
        XCTAssertEqual(health(callbacks(61, within: 59)), ["callback-loop"])
        XCTAssertEqual(health(callbacks(200, within: 3600)), [], "spread over an hour: a busy monitor, not a loop")
        var health = RunHealth()
        for envelope in callbacks(61, within: 1).envelopes { health.read(envelope) }
        XCTAssertTrue(health.problems.first?.detail.contains("for monitor's activities") ?? false, "\(health.problems)")
    }

    func testTheBusDegradationsFailARunAndOtherErrorsDoNot() {
        var j = JournalBuilder(start: "2026-11-23 08:00")
        j.add("2026-11-23 08:10", "bus.error", ["code": "ack-timeout", "message": "monitor left 3 event(s) unacknowledged"])
        j.add("2026-11-23 08:11", "bus.error", ["code": "delivery-abandoned", "receiver": "app"])
        j.add("2026-11-23 08:12", "bus.error", ["code": "unknown-input", "message": "a typo"])
        j.add("2026-11-23 08:13", "bus.error", ["code": "ack-timeout"], source: "impostor")
        XCTAssertEqual(health(j), ["ack-timeout", "delivery-abandoned"])
        XCTAssertEqual(health(JournalBuilder(start: "2026-11-23 08:00")), [])
    }
}
