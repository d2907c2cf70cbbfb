import Broker
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// A tool steers the bus clock (`clock.control.request`, protocol.md § 7.4) of a broker in this process on a virtual
/// clock: paused, time stands still; a step fires the next timer alone; a jump fires each timer on the way at its own
/// instant; nothing moves time back; every control is told to taps as `clock.changed`. `shieldbus clock` on a real
/// clock, through real processes, is in DeviceOSTests (ClockCommandTests); the Studio's clock bar in StudioBrowserTests.
final class ClockControlTests: XCTestCase {
    /// Asked with `app.schedule {at: [ms…]}`, sets a bus timer at each instant, which says `app.fired {at}`.
    private final class AlarmService: BrokerService {
        let subscriptions = ["app.schedule"]
        private var bus: (any ServiceBus)!
        func attach(to bus: any ServiceBus) { self.bus = bus }
        func handle(_ envelope: Envelope) {
            for time in (envelope.bodyValue["at"]?.arrayValue ?? []).compactMap(\.intValue) {
                bus.schedule(at: time) { [unowned self] in bus.emit(topic: "app.fired", body: ["at": .int(time)]) }
            }
        }
    }

    private var corrs = 0

    /// Sends a control from `tool` and returns the reply's body.
    private func control(_ tool: BusConnection, _ body: JSONValue, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        corrs += 1
        let corr = "clock-tool-\(corrs)"
        try tool.publish(Publish(topic: Topic.clockControlRequest, body: body, corr: corr))
        let deadline = monotonicMilliseconds() + 10_000
        while monotonicMilliseconds() < deadline {
            if case .event(let envelope, _)? = try tool.receive(timeoutMilliseconds: 100), envelope.corr == corr, envelope.topic == "clock.control.reply" {
                return envelope.bodyValue
            }
        }
        XCTFail("no reply to \(body.jsonText) within 10 s", file: file, line: line)
        throw CancellationError()
    }

    func testAToolPausesStepsAndJumpsVirtualTimeForwardOnly() throws {
        let work = TemporaryDirectory()
        let broker = try VirtualBroker(directory: work.path, services: [AlarmService()])
        defer { broker.stop() }
        let tap = try broker.connect("clock-tap", role: .tap, subscriptions: ["app.fired", Topic.clockChanged])
        let tool = try broker.connect("clock-tool", role: .tool, subscriptions: [])

        let paused = try control(tool, ["action": "pause"])
        XCTAssertEqual(paused["ok"], true, paused.jsonText)
        XCTAssertEqual(paused["value"]?["paused"], true)
        let again = try control(tool, ["action": "pause"])
        XCTAssertEqual(again["error"]?["code"]?.stringValue, "already-paused", "a pause that changes nothing is no success: \(again.jsonText)")
        // Three timers a minute apart: paused, none fires until a step.
        try tool.publish(Publish(topic: "app.schedule", body: ["at": [60_000, 120_000, 180_000]]))
        let step = try control(tool, ["action": "step"])
        XCTAssertEqual(step["value"]?["time"]?.intValue, 60_000, "a step goes to the next timer: \(step.jsonText)")
        XCTAssertEqual(step["value"]?["paused"], true, "and stays paused")
        XCTAssertEqual(step["value"]?["nextTimer"]?.intValue, 120_000)

        let jump = try control(tool, ["action": "jump", "by": 90_000])
        XCTAssertEqual(jump["value"]?["time"]?.intValue, 150_000, jump.jsonText)
        XCTAssertEqual(jump["value"]?["paused"], true, "a paused clock stays paused where it jumped to")

        let back = try control(tool, ["action": "jump", "time": 100_000])
        XCTAssertEqual(back["ok"], false)
        XCTAssertEqual(back["error"]?["code"]?.stringValue, "clock-backwards", back.jsonText)
        XCTAssertTrue(back["error"]?["message"]?.stringValue?.contains("1970-01-01 00:01:40 +0000") == true, "a time a person reads: \(back.jsonText)")
        let speed = try control(tool, ["action": "speed", "speed": 60])
        XCTAssertEqual(speed["error"]?["code"]?.stringValue, "clock-virtual", "virtual time has no speed: \(speed.jsonText)")
        XCTAssertEqual(try control(tool, ["action": "rewind"])["error"]?["code"]?.stringValue, "bad-request")

        let resumed = try control(tool, ["action": "resume"])
        XCTAssertEqual(resumed["value"]?["paused"], false, resumed.jsonText)
        XCTAssertEqual(try control(tool, ["action": "resume"])["error"]?["code"]?.stringValue, "not-paused")
        // What the taps saw: each timer at its own instant, each control told once, and time never back.
        let seen = try collectEvents(from: tap) { events in events.contains { $0.topic == "app.fired" && $0.bodyValue["at"]?.intValue == 180_000 } }
        XCTAssertEqual(seen.map { "\($0.topic) \($0.bodyValue["action"]?.stringValue ?? "") @\($0.time)" }, [
            "clock.changed pause @0", "app.fired  @60000", "clock.changed step @60000", "app.fired  @120000", "clock.changed jump @150000",
            "clock.changed resume @150000", "app.fired  @180000",
        ])
        XCTAssertEqual(seen.first { $0.bodyValue["action"]?.stringValue == "jump" }?.bodyValue["from"]?.intValue, 60_000)
        XCTAssertEqual(seen.first?.bodyValue["by"]?.stringValue, "clock-tool")

        // Only tools steer the clock.
        let plugin = try broker.connect("clock-plugin", role: .generic, subscriptions: [])
        try plugin.publish(Publish(topic: Topic.clockControlRequest, body: ["action": "pause"], corr: "plugin-1"))
        let refusal = try collectMessages(plugin) { if case .error(let report) = $0 { return report } else { return nil } }
        XCTAssertEqual(refusal.code, "reserved-topic")
        XCTAssertTrue(refusal.message.contains("only tools"), refusal.message)
    }

    private func collectMessages<T>(_ connection: BusConnection, _ pick: (BrokerMessage) -> T?) throws -> T {
        let deadline = monotonicMilliseconds() + 10_000
        while monotonicMilliseconds() < deadline {
            if let message = try connection.receive(timeoutMilliseconds: 100), let picked = pick(message) { return picked }
        }
        XCTFail("nothing within 10 s")
        throw CancellationError()
    }
}
