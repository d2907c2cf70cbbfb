import BusProtocol
import DeviceAPI
import Foundation
import ShieldBusTestSupport
import XCTest

/// Bedtime's wind-down notification at 22:15 on a live broker started hours before it: the monitor's check chain
/// goes on from check to check (each at most 44 minutes ahead) until the wind-down's minute. Through the real broker
/// and Bedtime's plugin processes, on a scaled clock — whose instants, like the real clock's, fall between whole
/// seconds. (A chain begun at such an instant stopped after its first check: the OS starts a schedule at a whole second
/// of the device clock, up to a second before the instant the call was planned for, so that check took its own call
/// for one still to come and planned no next one; nothing checked again before the night, and the wind-down never came.)
final class WindDownTests: XCTestCase {
    func testTheWindDownComesOnABrokerStartedHoursBefore() throws {
        let root = BuildProducts.repositoryRoot.path
        var text = try String(contentsOfFile: root + "/Config/bedtime.yml", encoding: .utf8)
        text = text.replacingOccurrences(of: "scenario: scenarios/bedtime-night.yml\n", with: "clock: {mode: scaled, speed: 300, start: \"2026-11-23T20:30\"}\n")
            .replacingOccurrences(of: "executable: bedtime", with: "executable: \(BuildProducts.path("bedtime"))")
        XCTAssertTrue(text.contains("clock: {mode: scaled"), "Config/bedtime.yml still names its scenario")
        let work = TemporaryDirectory(prefix: "sbwinddown")
        let journal = work.file("journal.jsonl")
        let broker = try BrokerProcess(configuration: text, arguments: ["--no-scenario", "--journal", journal])
        defer { broker.stop() }
        func events() -> [Envelope] {
            JournalLines.eventsSoFar(atPath: journal)
        }
        // Until the night's start at 22:30 (1 h 45 min of bus time at ×300: about 21 wall seconds).
        let minute = Int64(try XCTUnwrap(ISO8601DateFormatter().date(from: "2026-11-23T21:15:00Z")).timeIntervalSince1970 * 1000)
        waitUntil("the night's start (log: \(broker.log(tail: 10)))", timeoutSeconds: 120) { events().contains { $0.time >= minute + 15 * 60_000 } }
        let all = events()
        let posted = try XCTUnwrap(all.first { $0.topic == DeviceTopic.notificationPosted }, "no wind-down before the night")
        XCTAssertEqual(posted.bodyValue["title"]?.stringValue, "Bedtime at 22:30")
        let checks = all.filter { $0.topic == DeviceTopic.intervalDidStart && $0.seq < posted.seq
            && ($0.bodyValue["activity"]?.stringValue ?? "").hasPrefix("bedtime.reblock") }
        XCTAssertGreaterThanOrEqual(checks.count, 3, "the chain's checks from the start to the wind-down: two on the way, then the wind-down's own")
        // The check that posted it came in the wind-down's minute, 22:15 in Berlin. (The post itself comes as long
        // after as the plugins take to handle the check, times the clock's speed: on a busy machine, past the minute.)
        let windDownCheck = try XCTUnwrap(checks.last)
        XCTAssertTrue((minute..<minute + 60_000).contains(windDownCheck.time), "the wind-down's check in its minute: \(windDownCheck.time)")
        XCTAssertGreaterThanOrEqual(posted.time, windDownCheck.time)
    }
}
