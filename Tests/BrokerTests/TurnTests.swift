import Broker
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Virtual-time turns, with clients that acknowledge by hand so that each test decides exactly when every
/// acknowledgement arrives. The broker runs in this process on a virtual clock with nothing scheduled (no device,
/// no scenario), so time stands still and only the turns move. The reference plugins' turns through
/// `shieldbus run` are in LessonTests (ObserverTurnsTests).
final class TurnTests: XCTestCase {
    /// The next event on `connection` (within the deadline), skipping `bus.*` and heartbeats.
    private func nextEvent(_ connection: BusConnection, file: StaticString = #filePath, line: UInt = #line) throws -> Envelope {
        let deadline = monotonicMilliseconds() + 10_000
        while monotonicMilliseconds() < deadline {
            guard case .event(let envelope, _)? = try connection.receive(timeoutMilliseconds: 100) else { continue }
            if envelope.topic.hasPrefix("bus.") { continue }
            return envelope
        }
        XCTFail("no event within 10 s", file: file, line: line)
        throw CancellationError()
    }

    private func counter(_ broker: VirtualBroker, _ name: String) throws -> Int64 {
        try XCTUnwrap(broker.status()["counters"]?[name]?.intValue)
    }

    func testDeliveriesQueuedForOnePluginGoInOneTurn() throws {
        let work = TemporaryDirectory()
        let broker = try VirtualBroker(directory: work.path)
        defer { broker.stop() }
        let alpha = try broker.connect("alpha", role: .generic, subscriptions: ["app.batch."])
        let tap = try broker.connect("batch-tap", role: .tap, subscriptions: ["app.batch."])
        let sender = try broker.connect("batch-sender", role: .tool, subscriptions: [])
        for index in 1...3 { try sender.publish(Publish(topic: "app.batch.\(index)", body: [:])) }
        // All three are sequenced (the tap sees them) while alpha still holds the first without acknowledging it.
        XCTAssertEqual(try collectEvents(from: tap) { $0.count >= 3 }.map(\.topic), ["app.batch.1", "app.batch.2", "app.batch.3"])
        let first = try nextEvent(alpha)
        XCTAssertEqual(first.topic, "app.batch.1")
        let turnsBefore = try counter(broker, "turns")
        try alpha.acknowledge(seq: first.seq)
        // The two waiting for alpha come together: the third arrives without the second being acknowledged.
        XCTAssertEqual(try nextEvent(alpha).topic, "app.batch.2")
        let third = try nextEvent(alpha)
        XCTAssertEqual(third.topic, "app.batch.3")
        try alpha.acknowledge(seq: third.seq)
        XCTAssertTrue(waitUntil("the broker to count the turn") { (try? counter(broker, "turns")) == turnsBefore + 1 })
    }

    func testAnObserverTakesNoTurnAndItsPublicationsWaitUntilTheBusSettles() throws {
        let work = TemporaryDirectory()
        let broker = try VirtualBroker(directory: work.path)
        defer { broker.stop() }
        // By name, the observer comes first: without `observe`, the other would wait for its acknowledgement.
        let observer = try broker.connect("a-observer", role: .generic, subscriptions: ["app.use.", "app.ask."], observing: ["app.use."])
        let other = try broker.connect("b-other", role: .generic, subscriptions: ["app.use."])
        let tap = try broker.connect("observe-tap", role: .tap, subscriptions: ["app."])
        let sender = try broker.connect("observe-sender", role: .tool, subscriptions: [])

        try sender.publish(Publish(topic: "app.use.opened", body: [:]))
        let observed = try nextEvent(observer)
        XCTAssertEqual(observed.topic, "app.use.opened")
        // The observer publishes while observing, before anyone else acts, and does not acknowledge yet.
        try observer.publish(Publish(topic: "app.observer.recorded", body: [:]))
        // A request while observing is refused: the observer would block on a broker that does not wait for it.
        try observer.publish(Publish(topic: "app.observer.lookup.request", body: [:], corr: "observer-1"))
        var refusal: ErrorReport?
        XCTAssertTrue(waitUntil("the refusal of the request") {
            if case .error(let report)? = try? observer.receive(timeoutMilliseconds: 50) { refusal = report }
            return refusal != nil
        })
        XCTAssertEqual(refusal?.code, "request-while-observing")

        // The other subscriber gets the event without waiting for the observer: no turn for observing.
        XCTAssertEqual(try nextEvent(other).seq, observed.seq)
        try other.publish(Publish(topic: "app.other.reacted", body: [:]))
        try other.acknowledge(seq: observed.seq)
        // The sender is another connection: it asks only once the reaction is sequenced, or the broker could read
        // the two sockets in either order.
        let reacted = try collectEvents(from: tap) { events in events.contains { $0.topic == "app.other.reacted" } }
        try sender.publish(Publish(topic: "app.ask.report", body: [:]))
        // The observer's turn (a topic it does not observe) waits until it has acknowledged what it observed.
        let sequenced = reacted + (try collectEvents(from: tap) { events in events.contains { $0.topic == "app.ask.report" } })
        XCTAssertTrue(try broker.status()["plugins"]?.arrayValue?.contains {
            $0["name"]?.stringValue == "a-observer" && $0["delivered"]?.intValue == 1 && $0["lag"]?.intValue == 1
        } == true, "the turn waits for the observer's acknowledgement")
        try observer.acknowledge(seq: observed.seq)
        let ask = try nextEvent(observer)
        XCTAssertEqual(ask.topic, "app.ask.report")
        try observer.acknowledge(seq: ask.seq)

        // What the observer published first is sequenced after the other's reaction: at the point where the bus
        // settled, not when it arrived.
        let all = sequenced + (try collectEvents(from: tap) { events in events.contains { $0.topic == "app.observer.recorded" } })
        let order = all.map(\.topic).filter { ["app.other.reacted", "app.observer.recorded", "app.ask.report"].contains($0) }
        XCTAssertEqual(order, ["app.other.reacted", "app.ask.report", "app.observer.recorded"])
    }
}
