import Configuration
import XCTest
@testable import BusProtocol

/// An event is two frames — `event <delivery>` and the envelope — and the client reads the envelope the broker
/// writes in one pass, leaving the body for its reader to check.
final class EventFramesTests: XCTestCase {
    func decodeError(_ frames: [[UInt8]]) -> BusProtocolError? {
        do {
            _ = try WireCodec.decodeBrokerMessage(frames)
            return nil
        } catch {
            return error as? BusProtocolError
        }
    }

    func testAnEventIsItsDeliveryNumberThenTheSharedEnvelope() throws {
        let envelope = Envelope(seq: 42, time: 1_795_332_199_588, topic: "app.ping", source: "tester", body: Array(#"{"n":1}"#.utf8))
        let frames = WireCodec.encode(.event(envelope, delivery: 7))
        XCTAssertEqual(frames.map { String(decoding: $0, as: UTF8.self) },
                       ["event 7", #"{"v":1,"seq":42,"time":1795332199588,"topic":"app.ping","source":"tester","body":{"n":1}}"#])
        for delivery: UInt64 in [0, 1, 9, 10, 12_345, UInt64.max] {
            let head = WireCodec.withEventHead(delivery: delivery) { Array($0) }
            XCTAssertEqual(String(decoding: head, as: UTF8.self), "event \(delivery)")
            XCTAssertEqual(try WireCodec.decodeBrokerMessage([head, WireCodec.encodeEnvelope(envelope)]), .event(envelope, delivery: delivery))
        }
    }

    func testAMalformedEventHeadIsRefusedWithItsOwnError() {
        let envelope = WireCodec.encodeEnvelope(Envelope(seq: 1, time: 2, topic: "app.x", source: "s", body: Array("{}".utf8)))
        for head in ["event", "event ", "event x", "event 1 ", "event -1", "event +1", "event 18446744073709551616"] {
            XCTAssertEqual(decodeError([Array(head.utf8), envelope])?.code, "bad-delivery", head)
        }
        // The old layout (delivery number in a third frame) and other near misses.
        XCTAssertEqual(decodeError([Array("event".utf8), envelope, Array("7".utf8)])?.code, "bad-delivery")
        XCTAssertEqual(decodeError([Array("event 7".utf8), envelope, Array("7".utf8)])?.code, "wrong-frame-count")
        XCTAssertEqual(decodeError([Array("event 7".utf8)])?.code, "wrong-frame-count")
        XCTAssertEqual(decodeError([Array("events 7".utf8), envelope])?.code, "unknown-kind")
        XCTAssertEqual(decodeError([Array("heartbeat 7".utf8), Array(#"{"v":1,"time":1}"#.utf8)])?.code, "unknown-kind")
        XCTAssertEqual(decodeError([Array("event 7".utf8), Array("not json".utf8)])?.code, "not-json")
    }

    /// The one-pass reader and the full decoder agree on every envelope the broker can write — escapes, other
    /// scripts, negative times, extreme numbers, with and without corr and deadline.
    func testTheOnePassReaderAgreesWithTheFullDecoder() throws {
        var random = SeededRandom(seed: 12)
        let pieces = ["app", ".", "x", "é", "\\", "\"", "\u{1F600}", "\u{7F}", "\n", "-", "0", " "]
        func text() -> String { (0..<Int.random(in: 1...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        func number() -> Int64 {
            [0, 1, -1, Int64.max, Int64.min, 1_795_332_199_588, Int64.random(in: Int64.min...Int64.max, using: &random)].randomElement(using: &random)!
        }
        for _ in 0..<2_000 {
            let body: JSONValue = .object(["s": .string(text()), "n": .int(number()), "a": .array([.bool(true), .null, .object([:])])])
            let envelope = Envelope(seq: UInt64.random(in: 0...UInt64(Int64.max), using: &random), time: number(), topic: text(), source: text(),
                                    corr: Bool.random(using: &random) ? text() : nil, deadline: Bool.random(using: &random) ? number() : nil,
                                    body: body.jsonBytes)
            let bytes = WireCodec.encodeEnvelope(envelope)
            var reader = EnvelopeReader(bytes)
            XCTAssertEqual(reader.read(), envelope, String(decoding: bytes, as: UTF8.self))
            XCTAssertEqual(try WireCodec.decodeEnvelope(bytes), envelope)
        }
    }

    func testAnEnvelopeWrittenOtherwiseIsDecodedInFull() throws {
        let written = [
            #"{ "v":1,"seq":3,"time":4,"topic":"app.x","source":"s","body":{"a":1}}"#,  // whitespace
            #"{"seq":3,"v":1,"time":4,"topic":"app.x","source":"s","body":{"a":1}}"#,   // another order
            #"{"v":1,"seq":3,"time":4,"topic":"app.x","source":"s","body":{"a":1},"extra":true}"#,  // a member after the body
            #"{"v":1,"seq":03,"time":4,"topic":"app.x","source":"s","body":{"a":1}}"#,  // a leading zero: refused by both
        ]
        let expected = Envelope(seq: 3, time: 4, topic: "app.x", source: "s", body: Array(#"{"a":1}"#.utf8))
        for text in written.dropLast() {
            var reader = EnvelopeReader(Array(text.utf8))
            XCTAssertNil(reader.read(), text)
            XCTAssertEqual(try WireCodec.decodeBrokerMessage([Array("event 1".utf8), Array(text.utf8)]), .event(expected, delivery: 1), text)
        }
        XCTAssertNotNil(decodeError([Array("event 1".utf8), Array(written.last!.utf8)]))
        // A body that is not an object is refused, as before.
        XCTAssertEqual(decodeError([Array("event 1".utf8), Array(#"{"v":1,"seq":3,"time":4,"topic":"app.x","source":"s","body":[1]}"#.utf8)])?.code,
                       "mistyped-field")
    }

    /// The body is the reader's to check: the client passes the broker's bytes through, and decoding them is where a
    /// malformed body shows.
    func testTheBodyIsCheckedWhenItIsRead() throws {
        let text = #"{"v":1,"seq":3,"time":4,"topic":"app.x","source":"s","body":{"a":tru}}"#
        guard case .event(let envelope, _) = try WireCodec.decodeBrokerMessage([Array("event 1".utf8), Array(text.utf8)]) else {
            return XCTFail("not an event")
        }
        XCTAssertEqual(String(decoding: envelope.body, as: UTF8.self), #"{"a":tru}"#)
        XCTAssertThrowsError(try JSONValue(parsing: envelope.body))
    }
}
