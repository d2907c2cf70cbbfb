import XCTest
@testable import BusProtocol
import DeviceAPI

final class WireCodecTests: XCTestCase {
    func frames(_ kind: String, _ json: String) -> ArraySlice<[UInt8]> { [Array(kind.utf8), Array(json.utf8)][...] }

    func decodeError(_ frames: ArraySlice<[UInt8]>, limit: Int = 1024, roles: [Role]? = nil) -> BusProtocolError? {
        do {
            _ = try WireCodec.decodeClientMessage(frames, maximumBodyBytes: limit, roles: roles)
            return nil
        } catch {
            return error as? BusProtocolError
        }
    }

    func testClientMessagesRoundTrip() throws {
        let messages: [ClientMessage] = [
            .hello(Hello(name: "monitor", role: .monitor, subscriptions: ["deviceactivity.", "clock."], pid: 42)),
            .hello(Hello(name: "monitor", role: .monitor, subscriptions: [], credential: "c0ffee")),
            .hello(Hello(name: "monitor", role: .monitor, subscriptions: ["state.changed"], credential: "c0ffee",
                         watch: StateWatch(["group.a": ["isCurrentlyUnlocked", "reports.*"]]), resume: true)),
            .publish(Publish(topic: "shield.configuration.request", body: ["app": "Instagram"], corr: "r-1", deadline: 1000)),
            .publish(Publish(topic: "activity.app.open", body: [:])),
            .publish(Publish(topic: "x.app.unlocked", body: ["until": 5], cause: PublicationCause(seq: 41, index: 2))),
            .ack(seq: 7), .gap(from: 3, to: 5), .heartbeat, .status(credential: nil), .status(credential: "c0ffee"), .bye,
        ]
        for message in messages {
            let encoded = WireCodec.encode(message)
            XCTAssertEqual(try WireCodec.decodeClientMessage(encoded[...]), message)
        }
    }

    func testBrokerMessagesRoundTrip() throws {
        let envelope = Envelope(seq: 9, time: 1_700_000_000_123, topic: "shield.shown", source: "broker", corr: "c", deadline: 5, body: Array(#"{"a":1}"#.utf8))
        let messages: [BrokerMessage] = [
            .welcome(Welcome(name: "x", time: 5, seq: 8, clock: "virtual", heartbeatMilliseconds: 1000, settings: ["timeZone": "UTC"])),
            .welcome(Welcome(name: "x", time: 5, seq: 1_008, clock: "real", heartbeatMilliseconds: 1000, firstSeq: 1_001)),
            .welcome(Welcome(name: "x", time: 5, seq: 1_009, clock: "real", heartbeatMilliseconds: 1000, resumed: true)),
            .event(envelope, delivery: 3),
            .error(ErrorReport(code: "unsupported-version", message: "m", supported: [1])),
            .heartbeat(time: 77), .status(["plugins": []]), .bye(reason: "stopping"),
        ]
        for message in messages {
            XCTAssertEqual(try WireCodec.decodeBrokerMessage(WireCodec.encode(message)), message)
        }
    }

    func testEnvelopeHasFixedFieldOrder() {
        let envelope = Envelope(seq: 1, time: 2, topic: "activity.app.open", source: "app", body: Array(#"{"x":1}"#.utf8))
        XCTAssertEqual(String(decoding: WireCodec.encodeEnvelope(envelope), as: UTF8.self),
                       #"{"v":1,"seq":1,"time":2,"topic":"activity.app.open","source":"app","body":{"x":1}}"#)
    }

    func testPublishBodyIsMinified() throws {
        let message = try WireCodec.decodeClientMessage(frames("publish", "{\"v\":1,\"topic\":\"app.x\",\"body\":{ \"a\" :\n 1 }}"))
        guard case .publish(let publish) = message else { return XCTFail("\(message)") }
        XCTAssertEqual(String(decoding: publish.body, as: UTF8.self), #"{"a":1}"#)
    }

    func testEveryKindOfMalformedInputHasItsOwnError() {
        XCTAssertEqual(decodeError([Array("publish".utf8)][...])?.code, "wrong-frame-count")
        XCTAssertEqual(decodeError([Array("publish".utf8), [], []][...])?.code, "wrong-frame-count")
        XCTAssertEqual(decodeError(frames("publish", "not json"))?.code, "not-json")
        XCTAssertEqual(decodeError(frames("publish", #"{"v":1,"body":{}}"#)), .missingField(kind: "publish", field: "topic"))
        XCTAssertEqual(decodeError(frames("publish", #"{"v":1,"topic":5,"body":{}}"#))?.code, "mistyped-field")
        XCTAssertEqual(decodeError(frames("publish", #"{"v":1,"topic":"app.x","body":[1]}"#))?.code, "mistyped-field")
        XCTAssertEqual(decodeError(frames("publish", #"{"topic":"app.x","body":{}}"#)), .missingField(kind: "publish", field: "v"))
        XCTAssertEqual(decodeError(frames("teleport", #"{"v":1}"#))?.code, "unknown-kind")
        XCTAssertEqual(decodeError(frames("publish", #"{"v":1,"topic":"Bad Topic","body":{}}"#))?.code, "bad-topic")
        // Namespaces are the broker's to judge (it knows the declared ones); the codec checks syntax only.
        XCTAssertNil(decodeError(frames("publish", #"{"v":1,"topic":"nowhere.x","body":{}}"#)))
        XCTAssertEqual(BusTable.screenTime.topicProblem(with: "nowhere.x")?.code, "unknown-topic")
        // Roles are the table's: the codec refuses a role outside the roles it is given, before anything else of the hello.
        XCTAssertEqual(decodeError(frames("hello", #"{"v":1,"role":"wizard"}"#), roles: BusTable.screenTime.roles)?.description,
                       "hello refused: unknown role 'wizard'; roles: monitor, shield, action, notifier, report, app, generic, tap, tool")
        XCTAssertNil(decodeError(frames("hello", #"{"v":1,"name":"x","role":"wizard"}"#)), "without roles, any name is a role")
        let big = "{\"v\":1,\"topic\":\"app.x\",\"body\":{\"s\":\"" + String(repeating: "x", count: 2000) + "\"}}"
        XCTAssertEqual(decodeError(frames("publish", big), limit: 1024)?.code, "body-too-large")
    }

    func testGapThatEndsBeforeItStartsIsRefused() {
        XCTAssertEqual(decodeError(frames("gap", #"{"v":1,"from":5,"to":1}"#))?.code, "mistyped-field")
    }

    /// The bus's own names; a product's (Screen Time's `scenario`, `system`) are its table's, refused at admission.
    func testReservedNamesAreRefusedInHello() {
        for name in ["broker", "peer-0042"] {
            XCTAssertEqual(decodeError(frames("hello", #"{"v":1,"name":"\#(name)","role":"generic"}"#))?.code, "bad-name", name)
        }
        XCTAssertNil(decodeError(frames("hello", #"{"v":1,"name":"scenario","role":"generic"}"#)))
    }

    func testIntegerFieldsMustBeIntegers() {
        XCTAssertEqual(decodeError(frames("ack", #"{"v":1,"seq":1.0}"#))?.code, "mistyped-field")
        XCTAssertEqual(decodeError(frames("ack", #"{"v":1,"seq":1e3}"#))?.code, "mistyped-field")
        XCTAssertEqual(decodeError(frames("ack", #"{"v":1,"seq":99999999999999999999}"#))?.code, "mistyped-field")
    }

    func testUnsupportedVersionNamesTheSupportedOnes() {
        let error = decodeError(frames("hello", #"{"v":2,"name":"x","role":"monitor"}"#))
        XCTAssertEqual(error, .unsupportedVersion(got: 2, supported: [1]))
        XCTAssertTrue(error!.description.contains("speaks version(s) 1"), error!.description)
        XCTAssertEqual(ErrorReport(error!).supported, [1])
    }

    func testTopicRules() {
        XCTAssertNil(BusTable.screenTime.topicProblem(with: "deviceactivity.interval.start"))
        XCTAssertNotNil(BusTable.screenTime.topicProblem(with: "shield..x"))
        XCTAssertNotNil(BusTable.screenTime.topicProblem(with: "shield.X"))
        XCTAssertTrue(Topic.matches("shield.shown", prefix: "shield."))
        XCTAssertTrue(Topic.matches("anything.at.all", prefix: ""))
        XCTAssertFalse(Topic.matches("shieldx", prefix: "shield."))
        XCTAssertEqual(Topic.reply(to: "shield.configuration.request"), "shield.configuration.reply")
    }
}
