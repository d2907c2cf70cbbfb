@testable import Broker
import BusClient
import BusProtocol
import DeviceAPI
@testable import DeviceOS
import Foundation
import ScreenTime
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// The broker's core over its transport seam: one exchange between test peers, driven step by step from the test,
/// gives the same journal byte for byte over libzmq and over the in-memory transport. The broker runs in this
/// process on a virtual clock with no device and no scenario; its plugins are the test's peers (outside clients), so
/// nothing but the transport differs between the two runs.
final class TransportSeamTests: XCTestCase {
    /// Virtual-time turns, an observer's publication held until the bus settles, a reply the OS alone may give refused,
    /// and a goodbye: each step is one peer's message, then every peer takes in what the broker sent it.
    func testOneExchangeJournalsTheSameOverLibzmqAndInMemory() throws {
        let overZeroMQ = try journal(of: .zeroMQ)
        let inMemory = try journal(of: .inMemory)
        let topics = inMemory.split(separator: 0x0A).compactMap { try? WireCodec.decodeEnvelope(Array($0)).topic }
        // The exchange happened: the held publication came after the ask, the refusal and the goodbye were sequenced.
        XCTAssertEqual(topics.filter { $0.hasPrefix("app.") }, Self.exchanged)
        XCTAssertEqual(topics.filter { $0.hasPrefix("plugin.") || $0 == "bus.error" }, ["plugin.up", "plugin.up", "bus.error", "plugin.down"])
        XCTAssertEqual(topics.last, "bus.stopping")
        XCTAssertEqual(overZeroMQ, inMemory, "the journals differ:\n--- libzmq\n\(String(decoding: overZeroMQ, as: UTF8.self))--- in memory\n\(String(decoding: inMemory, as: UTF8.self))")
    }

    /// The in-memory transport delivers nothing until the test turns the loop, and each pass takes in what waits.
    func testTheInMemoryTransportMovesOnlyWhenTheTestTurnsTheLoop() throws {
        let exchange = try SteppedExchange(.inMemory)
        defer { exchange.finish() }
        let tap = try exchange.join("seam-tap", role: .tap, subscriptions: ["app."])
        let sender = try exchange.join("seam-sender", role: .tool, subscriptions: [])
        exchange.transport.arrive(from: sender.identity, WireCodec.encode(.publish(Publish(topic: "app.quiet", body: [:]))))
        XCTAssertTrue(exchange.transport.takeSent(to: tap.identity).isEmpty, "nothing moves before the loop turns")
        try exchange.broker.serveOnce()
        let delivered = exchange.transport.takeSent(to: tap.identity).compactMap { frames -> String? in
            guard case .event(let envelope, _)? = try? WireCodec.decodeBrokerMessage(frames) else { return nil }
            return envelope.topic
        }
        XCTAssertEqual(delivered, ["app.quiet"])
    }

    /// A plugin that stops acknowledging is excused after the limit, and the report says how many events it left.
    func testAnAcknowledgementTimeoutSaysHowManyEventsWereLeft() throws {
        let exchange = try SteppedExchange(.inMemory, acknowledgementTimeout: 200)
        defer { exchange.finish() }
        let watcher = try exchange.join("seam-tap", role: .tap, subscriptions: ["bus.error"])
        let sender = try exchange.join("seam-sender", role: .tool, subscriptions: [])
        let lazy = try exchange.join("lazy", role: .generic, subscriptions: ["app.work."])
        // The first is its turn; the others wait behind it for its acknowledgement, until it is excused.
        for n in 1...3 { try exchange.step(sender, .publish(Publish(topic: "app.work.\(n)", body: [:]))) }
        XCTAssertEqual(lazy.topics, ["app.work.1"])
        let reported = try exchange.turnUntil(watcher) { $0.topics.contains("bus.error") }
        let report = try XCTUnwrap(reported.events.first { $0.topic == "bus.error" }?.bodyValue)
        XCTAssertEqual(report["code"]?.stringValue, "ack-timeout")
        let message = try XCTUnwrap(report["message"]?.stringValue)
        XCTAssertTrue(message.hasPrefix("lazy left 1 event(s) unacknowledged for ") && message.hasSuffix(" ms; virtual time no longer waits for it"), message)
        XCTAssertGreaterThanOrEqual(Int(message.split(separator: " ")[6]) ?? 0, 200, "the time it was waited for: \(message)")
        XCTAssertEqual(try exchange.turnUntil(lazy) { $0.topics.count == 3 }.topics, ["app.work.1", "app.work.2", "app.work.3"],
                       "excused, it gets the rest without turns")
    }

    /// The device OS in the broker, over each transport: the test's peers play the app, the shield renderer, the action
    /// delegate and the person through a shield drawn and lifted; the two journals are the same byte for byte.
    func testADeviceDayJournalsTheSameOverLibzmqAndInMemory() throws {
        let overZeroMQ = try deviceDay(over: .zeroMQ)
        let inMemory = try deviceDay(over: .inMemory)
        let topics = inMemory.split(separator: 0x0A).compactMap { try? WireCodec.decodeEnvelope(Array($0)).topic }
        // The deferred shield is asked for again once the bus is quiet; the app's unlock takes it down before it is drawn.
        XCTAssertEqual(topics.filter { $0.hasPrefix("shield.") && !$0.hasSuffix(".reply") }, [
            DeviceTopic.configurationRequest, DeviceTopic.shieldShown, DeviceTopic.actionRequest, DeviceTopic.actionHandled,
            DeviceTopic.configurationRequest, DeviceTopic.shieldDismissed,
        ])
        XCTAssertEqual(topics.filter { $0 == DeviceTopic.appOpened }.count, 1, "used once its shield is lifted")
        XCTAssertEqual(overZeroMQ, inMemory, "the journals differ:\n--- libzmq\n\(String(decoding: overZeroMQ, as: UTF8.self))--- in memory\n\(String(decoding: inMemory, as: UTF8.self))")
    }

    private func deviceDay(over kind: SteppedExchange.Kind) throws -> [UInt8] {
        let catalog = try FocusDevice.catalog()
        var settings = FocusDevice.settings(catalog: catalog)
        // Wall-time deadlines out of reach: a slow step on a loaded machine must not put up the system's shield in one run only.
        settings.replyTimeoutMilliseconds = 600_000
        var device: DeviceOS?
        let exchange = try SteppedExchange(kind, grants: [ClientGrant(roles: [.tap, .app, .shield, .action])]) { work in
            device = try DeviceOS(settings: settings, catalog: catalog, statePath: work.path + "/device.sqlite")
            return [device!]
        }
        let instagram = try XCTUnwrap(device).tokens.application("com.burbn.instagram")
        func body<Body: Encodable>(_ value: Body) -> JSONValue { try! JSONValue(parsing: DeviceAPICoding.encode(value)) }
        // Passive peers (no acks): nothing waits for their turns, so no wall-time wait decides what is journaled.
        _ = try exchange.join("seam-tap", role: .tap, subscriptions: [""])
        let app = try exchange.join("app", role: .app, subscriptions: ["familycontrols.", "managedsettings."], acknowledges: false)
        let shield = try exchange.join("shield", role: .shield, subscriptions: ["shield.configuration."], acknowledges: false)
        let action = try exchange.join("action", role: .action, subscriptions: ["shield.action."], acknowledges: false)
        let person = try exchange.join("person", role: .tool, subscriptions: [])
        try exchange.step(app, .publish(Publish(topic: DeviceTopic.authorizationRequest, body: body(AuthorizationRequest(member: .individual)), corr: "app-1")))
        try exchange.step(app, .publish(Publish(topic: DeviceTopic.settingsWriteRequest, body: body(ManagedSettingsWrite(store: "focus", shield: ShieldSettings(applications: [instagram]))), corr: "app-2")))
        try exchange.step(person, .publish(Publish(topic: "input.open.request", body: ["app": "Instagram"], corr: "do-1")))
        let drawn = try XCTUnwrap(shield.events.last { $0.topic == DeviceTopic.configurationRequest }?.corr)
        let configuration = ShieldConfiguration(title: .init(text: "Not now", color: .black))
        try exchange.step(shield, .publish(Publish(topic: DeviceTopic.configurationReply, body: body(ShieldConfigurationReply(configuration: configuration)), corr: drawn)))
        try exchange.step(person, .publish(Publish(topic: "input.press.request", body: ["button": "primary"], corr: "do-2")))
        let pressed = try XCTUnwrap(action.events.last { $0.topic == DeviceTopic.actionRequest }?.corr)
        try exchange.step(action, .publish(Publish(topic: DeviceTopic.actionReply, body: body(ShieldActionReply(response: .defer)), corr: pressed)))
        try exchange.step(app, .publish(Publish(topic: DeviceTopic.settingsWriteRequest, body: body(ManagedSettingsWrite(store: "focus", shield: ShieldSettings())), corr: "app-3")))
        XCTAssertEqual(app.refusals + shield.refusals + action.refusals + person.refusals, [])
        XCTAssertEqual(person.events.filter(\.isReply).map { $0.bodyValue["ok"] }, [true, true], "the person's open and press were handled")
        XCTAssertEqual(app.events.filter(\.isReply).map { $0.bodyValue["ok"] }, [true, true, true], "authorized, shielded, unlocked")
        exchange.finish()
        return try Array(Data(contentsOf: URL(fileURLWithPath: exchange.journalPath)))
    }

    // MARK: The exchange

    /// What the exchange sequences of its own, in order.
    private static let exchanged = ["app.use.opened", "app.other.reacted", "app.ask.report", "app.observer.recorded", "app.lookup.request"]

    private func journal(of kind: SteppedExchange.Kind) throws -> [UInt8] {
        let exchange = try SteppedExchange(kind)
        // The observer comes first by name: without `observe` the other would wait for its acknowledgement.
        let tap = try exchange.join("seam-tap", role: .tap, subscriptions: ["app."])
        let sender = try exchange.join("seam-sender", role: .tool, subscriptions: [])
        let observer = try exchange.join("a-observer", role: .generic, subscriptions: ["app.use.", "app.ask."], observing: ["app.use."])
        let other = try exchange.join("b-other", role: .generic, subscriptions: ["app.use.", "app.lookup."])
        try exchange.step(sender, .publish(Publish(topic: "app.use.opened", body: [:])))
        // Observing, out of its turn: held until the bus settles.
        try exchange.step(observer, .publish(Publish(topic: "app.observer.recorded", body: [:])))
        try exchange.step(other, .publish(Publish(topic: "app.other.reacted", body: [:])))
        try exchange.step(other, .ack(seq: other.lastSeq))
        try exchange.step(sender, .publish(Publish(topic: "app.ask.report", body: [:])))
        // Its turn waited for this acknowledgement of what it observed; then it has the ask, and the bus settles.
        try exchange.step(observer, .ack(seq: observer.lastSeq))
        try exchange.step(observer, .ack(seq: observer.lastSeq))
        // A request in the OS's namespace: only the OS may answer it.
        try exchange.step(sender, .publish(Publish(topic: "app.lookup.request", body: [:], corr: "lookup-1")))
        try exchange.step(other, .publish(Publish(topic: "app.lookup.reply", body: ["found": true], corr: "lookup-1")))
        XCTAssertEqual(other.refusals, ["reply-refused"])
        try exchange.step(other, .ack(seq: other.lastSeq))
        try exchange.step(other, .bye)
        XCTAssertEqual(tap.topics, Self.exchanged, "the tap saw it all")
        exchange.finish()
        return try Array(Data(contentsOf: URL(fileURLWithPath: exchange.journalPath)))
    }
}
