import Configuration
import XCTest
@testable import BusProtocol

/// A batch (`events <first delivery>`, then the envelopes one per line) for a client that said `batches`: the
/// same events, numbers and order as that many `event` messages.
final class EventBatchTests: XCTestCase {
    func batchError(_ frames: [[UInt8]]) -> BusProtocolError? {
        do {
            _ = try WireCodec.decodeEventBatch(frames)
            return nil
        } catch {
            return error as? BusProtocolError
        }
    }

    func testABatchIsItsFirstDeliveryThenOneEnvelopePerLine() throws {
        let envelopes = (1...3).map { Envelope(seq: UInt64(40 + $0), time: 1_795_332_199_588, topic: "app.ping", source: "tester", body: Array(#"{"n":\#($0)}"#.utf8)) }
        let frames = WireCodec.eventBatchFrames(envelopeJSONs: envelopes.map(WireCodec.encodeEnvelope), firstDelivery: 7)
        XCTAssertEqual(frames.map { String(decoding: $0, as: UTF8.self) }, [
            "events 7",
            #"{"v":1,"seq":41,"time":1795332199588,"topic":"app.ping","source":"tester","body":{"n":1}}"# + "\n"
                + #"{"v":1,"seq":42,"time":1795332199588,"topic":"app.ping","source":"tester","body":{"n":2}}"# + "\n"
                + #"{"v":1,"seq":43,"time":1795332199588,"topic":"app.ping","source":"tester","body":{"n":3}}"#,
        ])
        let batch = try XCTUnwrap(WireCodec.decodeEventBatch(frames))
        XCTAssertEqual(batch, EventBatch(firstDelivery: 7, envelopes: envelopes))
        XCTAssertEqual(batch.deliveries.map(\.delivery), [7, 8, 9])
        XCTAssertEqual(batch.deliveries.map(\.envelope), envelopes)
    }

    /// Generated batches — 1 to 60 envelopes with escapes, other scripts (a newline only ever escaped), corr and
    /// deadline or not, first delivery numbers up to the last that fits — decode to the envelopes and numbers they hold.
    func testGeneratedBatchesDecodeToTheirEventsInOrder() throws {
        var random = SeededRandom(seed: 21)
        let pieces = ["app", ".", "x", "é", "\\", "\"", "\u{1F600}", "\n", "\r\n", "-", "0", " "]
        func text() -> String { (0..<Int.random(in: 1...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        for _ in 0..<500 {
            let count = Int.random(in: 1...60, using: &random)
            var seq = UInt64.random(in: 0...1_000_000, using: &random)
            let envelopes: [Envelope] = (0..<count).map { _ in
                seq += UInt64.random(in: 1...3, using: &random)
                let body: JSONValue = .object(["s": .string(text()), "n": .int(Int64.random(in: -5...5, using: &random)), "nested": ["line": .string("a\nb")]])
                return Envelope(seq: seq, time: Int64.random(in: 0...Int64.max, using: &random), topic: text(), source: text(),
                                corr: Bool.random(using: &random) ? text() : nil, deadline: Bool.random(using: &random) ? 5 : nil, body: body.jsonBytes)
            }
            let first = Bool.random(using: &random) ? UInt64.random(in: 1...1_000_000, using: &random) : UInt64.max - UInt64(count - 1)
            let frames = WireCodec.eventBatchFrames(envelopeJSONs: envelopes.map(WireCodec.encodeEnvelope), firstDelivery: first)
            XCTAssertEqual(frames[1].filter { $0 == WireCodec.batchSeparator }.count, count - 1, "only the separators are raw newlines")
            let batch = try XCTUnwrap(WireCodec.decodeEventBatch(frames))
            XCTAssertEqual(batch.envelopes, envelopes)
            XCTAssertEqual(batch.deliveries.map(\.delivery), (0..<UInt64(count)).map { first + $0 })
        }
    }

    func testOtherKindsAreNotBatchesAndAMalformedBatchIsRefused() {
        let envelope = WireCodec.encodeEnvelope(Envelope(seq: 1, time: 2, topic: "app.x", source: "s", body: Array("{}".utf8)))
        XCTAssertNil(try WireCodec.decodeEventBatch([Array("event 7".utf8), envelope]), "a single event is not a batch")
        XCTAssertNil(try WireCodec.decodeEventBatch([Array("heartbeat".utf8), Array(#"{"v":1,"time":1}"#.utf8)]))
        for head in ["events", "events ", "events x", "events 1 ", "events -1", "events 18446744073709551616"] {
            XCTAssertEqual(batchError([Array(head.utf8), envelope])?.code, "bad-delivery", head)
        }
        XCTAssertEqual(batchError([Array("events 7".utf8)])?.code, "wrong-frame-count")
        XCTAssertEqual(batchError([Array("events 7".utf8), envelope, envelope])?.code, "wrong-frame-count")
        XCTAssertEqual(batchError([Array("events 7".utf8), []])?.code, "not-json", "a batch holds at least one envelope")
        XCTAssertEqual(batchError([Array("events 7".utf8), envelope + [WireCodec.batchSeparator]])?.code, "not-json", "no newline after the last")
        XCTAssertEqual(batchError([Array("events 7".utf8), envelope + Array("\n\n".utf8) + envelope])?.code, "not-json", "no empty line")
        XCTAssertEqual(batchError([Array("events 7".utf8), envelope + Array("\nnot json".utf8)])?.code, "not-json")
        XCTAssertEqual(batchError([Array("events \(UInt64.max)".utf8), envelope + [WireCodec.batchSeparator] + envelope])?.code, "bad-delivery",
                       "the numbers run past 64 bits")
        XCTAssertNotNil(try? WireCodec.decodeEventBatch([Array("events \(UInt64.max)".utf8), envelope]), "the last number that fits")
    }

    /// A hello says whether its client reads batches; one that does not say so is sent none.
    func testTheHelloSaysWhetherTheClientReadsBatches() throws {
        for reads in [false, true] {
            let hello = Hello(name: "reader", role: .generic, subscriptions: ["app."], readsBatches: reads)
            let frames = WireCodec.encode(.hello(hello))
            XCTAssertEqual(String(decoding: frames[1], as: UTF8.self).contains(#""batches":true"#), reads)
            guard case .hello(let decoded) = try WireCodec.decodeClientMessage(frames[...]) else { return XCTFail("not a hello") }
            XCTAssertEqual(decoded.readsBatches, reads)
        }
        let mistyped = [Array("hello".utf8), Array(#"{"v":1,"name":"x","role":"generic","batches":"yes"}"#.utf8)]
        XCTAssertThrowsError(try WireCodec.decodeClientMessage(mistyped[...])) { XCTAssertEqual(($0 as? BusProtocolError)?.code, "mistyped-field") }
    }
}
