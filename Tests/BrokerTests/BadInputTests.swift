import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// Malformed input through the real broker: each fault gets a `bus.error` naming it and the sender, an
/// `error` back to the sender, a count in `status` — and the broker keeps serving everyone else.
final class BadInputTests: XCTestCase {
    // Set in `class func setUp` before this class's tests and cleared in `class func tearDown` after them; XCTest runs
    // them one at a time, so nothing reads it while it is written.
    nonisolated(unsafe) static var broker: BrokerProcess!

    override class func setUp() {
        broker = try! BrokerProcess(configuration: "name: bad-input\nbus:\n  maxBodyBytes: 1024\n")
    }

    override class func tearDown() {
        broker.stop()
        broker = nil
    }

    var broker: BrokerProcess { Self.broker }

    /// Sends raw frames from a fresh DEALER (optionally after a valid hello) and returns what came back and
    /// the `bus.error` event a watching tap saw.
    func send(_ frames: [[UInt8]], helloFirst name: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> (reply: BrokerMessage?, busError: JSONValue?) {
        let tap = try broker.connect(name: "watch-\(UUID().uuidString.prefix(6).lowercased())", subscriptions: ["bus.error"])
        defer { tap.close() }
        let context = try Context()
        let dealer = try Socket(context, .dealer)
        try dealer.setReceiveTimeout(milliseconds: 5000)
        try dealer.connect(broker.runtime.brokerEndpoint())
        if let name {
            try dealer.send(WireCodec.encode(.hello(Hello(name: name, role: .generic, subscriptions: [], credential: broker.runtime.cookie()))))
            guard case .welcome? = try dealer.receive().map(WireCodec.decodeBrokerMessage) else {
                XCTFail("no welcome", file: file, line: line)
                return (nil, nil)
            }
        }
        try dealer.send(frames)
        let reply = try dealer.receive().map(WireCodec.decodeBrokerMessage)
        let events = try collectEvents(from: tap, timeoutSeconds: 5) { !$0.isEmpty }
        return (reply, events.first?.bodyValue)
    }

    func assertRefused(_ frames: [[UInt8]], code: String, helloFirst name: String? = nil, messageContains: String? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try broker.status()["counters"]?["errorsByCode"]?[code]?.intValue ?? 0
        let (reply, busError) = try send(frames, helloFirst: name, file: file, line: line)
        guard case .error(let report)? = reply else { return XCTFail("expected an error reply, got \(String(describing: reply))", file: file, line: line) }
        XCTAssertEqual(report.code, code, report.message, file: file, line: line)
        if let messageContains { XCTAssertTrue(report.message.contains(messageContains), report.message, file: file, line: line) }
        XCTAssertEqual(busError?["code"]?.stringValue, code, file: file, line: line)
        if let name { XCTAssertEqual(busError?["sender"]?.stringValue, name, "the bus.error names the sender", file: file, line: line) }
        else { XCTAssertTrue(busError?["sender"]?.stringValue?.hasPrefix("peer-") == true, "an unknown sender is named by its peer id", file: file, line: line) }
        let after = try broker.status()["counters"]?["errorsByCode"]?[code]?.intValue ?? 0
        XCTAssertEqual(after, before + 1, "status counts the fault", file: file, line: line)
        // Everyone else is still served.
        let other = try broker.connect(name: "still-\(UUID().uuidString.prefix(6).lowercased())", subscriptions: ["app.ok"])
        try other.publish(Publish(topic: "app.ok", body: ["fine": true]))
        XCTAssertEqual(try collectEvents(from: other) { !$0.isEmpty }.first?.topic, "app.ok", file: file, line: line)
        other.close()
    }

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testWrongNumberOfFrames() throws {
        try assertRefused([bytes("publish"), bytes("{}"), bytes("extra")], code: "wrong-frame-count", helloFirst: "frames")
    }

    func testBytesThatAreNotJSON() throws {
        try assertRefused([bytes("publish"), [0xFF, 0x00, 0x13]], code: "not-json", helloFirst: "garbage")
    }

    /// A key written twice is refused as JSON that is not the bus's, naming the key — in the message, in the body as the
    /// Swift SDK writes a publish (the one-pass reader's form), and nested in a body written otherwise.
    func testARepeatedKeyIsRefusedNamingIt() throws {
        try assertRefused([bytes("publish"), bytes(#"{"v":1,"topic":"app.x","topic":"app.y","body":{}}"#)], code: "not-json", helloFirst: "twice-top",
                          messageContains: "the key 'topic' appears twice in one object")
        try assertRefused([bytes("publish"), bytes(#"{"v":1,"topic":"app.x","body":{"member":"individual","member":"child"}}"#)], code: "not-json",
                          helloFirst: "twice-body", messageContains: "the key 'member' appears twice in one object")
        try assertRefused([bytes("publish"), bytes(#"{"v":1, "topic":"app.x", "body":{"a":[{"b":1, "b":2}]}}"#)], code: "not-json",
                          helloFirst: "twice-nested", messageContains: "the key 'b' appears twice in one object")
    }

    func testEnvelopeWithMissingField() throws {
        try assertRefused([bytes("publish"), bytes(#"{"v":1,"body":{}}"#)], code: "missing-field", helloFirst: "missing", messageContains: "'topic'")
    }

    func testEnvelopeWithMistypedField() throws {
        try assertRefused([bytes("publish"), bytes(#"{"v":1,"topic":"app.x","body":"text"}"#)], code: "mistyped-field", helloFirst: "mistyped", messageContains: "'body'")
    }

    func testUnsupportedProtocolVersionIsRefusedWithTheSupportedVersions() throws {
        try assertRefused([bytes("hello"), bytes(#"{"v":9,"name":"future","role":"monitor","subscribe":[]}"#)], code: "unsupported-version", messageContains: "speaks version(s) 1")
    }

    func testUnknownMessageKind() throws {
        try assertRefused([bytes("teleport"), bytes(#"{"v":1}"#)], code: "unknown-kind", helloFirst: "kind")
    }

    func testBodyOverTheConfiguredLimit() throws {
        let body = #"{"v":1,"topic":"app.big","body":{"s":""# + String(repeating: "x", count: 2048) + "\"}}"
        try assertRefused([bytes("publish"), bytes(body)], code: "body-too-large", helloFirst: "big", messageContains: "limit is 1024")
    }

    func testUnknownTopic() throws {
        try assertRefused([bytes("publish"), bytes(#"{"v":1,"topic":"weather.rain","body":{}}"#)], code: "unknown-topic", helloFirst: "topic")
    }

    func testPublishingBeforeHello() throws {
        try assertRefused([bytes("publish"), bytes(#"{"v":1,"topic":"app.x","body":{}}"#)], code: "hello-required")
    }

    /// Screen Time's own sources are its table's, and the broker refuses them as names by that table.
    func testAHelloUnderTheSystemsOwnNameIsRefused() throws {
        for name in ["scenario", "system"] {
            try assertRefused(WireCodec.encode(.hello(Hello(name: name, role: .generic, subscriptions: [], credential: broker.runtime.cookie()))),
                              code: "bad-name", messageContains: "is reserved")
        }
    }

    func testASecondClientCannotTakeALiveClientsName() throws {
        let first = try broker.connect(name: "unique-name", role: .generic, subscriptions: [])
        defer { first.close() }
        try assertRefused(WireCodec.encode(.hello(Hello(name: "unique-name", role: .generic, subscriptions: [], credential: broker.runtime.cookie()))), code: "name-taken")
        XCTAssertNoThrow(try first.publish(Publish(topic: "app.still.mine", body: [:])))
    }

    func testAGapReportThatEndsBeforeItStartsDoesNotHurtTheBroker() throws {
        try assertRefused([bytes("gap"), bytes(#"{"v":1,"from":5,"to":1}"#)], code: "mistyped-field", helloFirst: "gapper")
    }

    func testADuplicateCorrelationIdIsRefused() throws {
        let asker = try broker.connect(name: "asker", role: .generic, subscriptions: [])
        defer { asker.close() }
        try asker.publish(Publish(topic: "app.thing.request", body: [:], corr: "same-id", deadline: 0))
        try assertRefused([bytes("publish"), bytes(#"{"v":1,"topic":"app.thing.request","corr":"same-id","body":{}}"#)], code: "duplicate-corr", helloFirst: "copycat")
    }

    func testPublishingIntoABrokerOnlyNamespace() throws {
        try assertRefused([bytes("publish"), bytes(#"{"v":1,"topic":"clock.tick","body":{}}"#)], code: "reserved-topic", helloFirst: "forger")
    }
}
