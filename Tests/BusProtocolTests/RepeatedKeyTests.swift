import DeviceAPI
import ScreenTime
import XCTest
@testable import BusProtocol

/// A key written twice in one JSON object is refused by every reader of the bus's bytes, naming the key: a plugin's
/// message (the one-pass reader's form and any other), its body at the top or nested, an envelope, and a body read
/// with the bus's reader or with `JSONDecoder` — so that no two readers read one body two ways (`JSONDecoder` keeps
/// the first of two, a dictionary the last).
final class RepeatedKeyTests: XCTestCase {
    private func frames(_ kind: String, _ json: String) -> ArraySlice<[UInt8]> { [Array(kind.utf8), Array(json.utf8)][...] }

    private func assertRefused(_ result: () throws -> Any, naming key: String, _ json: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try result(), json, file: file, line: line) { error in
            guard let refusal = error as? BusProtocolError, case .notJSON = refusal else {
                return XCTFail("\(json): \(error) is not a not-json refusal", file: file, line: line)
            }
            XCTAssertEqual(refusal.code, "not-json", file: file, line: line)
            XCTAssertTrue(refusal.description.contains("the key '\(key)' appears twice in one object"), refusal.description, file: file, line: line)
        }
    }

    func testAPluginsMessageWithARepeatedKeyIsRefusedWhereverTheKeyStands() {
        let publishes = [
            (#"{"v":1,"topic":"app.x","body":{"a":1,"a":2}}"#, "a"),  // the SDK's form: the one-pass reader's
            (#"{"v":1,"topic":"app.x","corr":"c","body":{"n":{"list":[{"c":1,"b":0,"c":1}]}}}"#, "c"),
            (#"{"v":1,"topic":"app.x","body":{"member":"individual","\u006Dember":"child"}}"#, "member"),
            (#"{"v":1,"topic":"app.x","body":{ "a": 1, "a": 2 }}"#, "a"),  // with whitespace: the full decode's
            (#"{"body":{"n":{"c":1,"c":1}},"topic":"app.x","v":1}"#, "c"),
            (#"{"v":1,"topic":"app.x","topic":"app.y","body":{}}"#, "topic"),
            (#"{"v":1,"topic":"app.x","body":{},"body":{"a":1}}"#, "body"),
        ]
        for (json, key) in publishes {
            var reader = ClientMessageReader(Array(json.utf8))
            XCTAssertNil(reader.publish(maximumBodyBytes: defaultMaximumBodyBytes), json)
            assertRefused({ try WireCodec.decodeClientMessage(self.frames("publish", json)) }, naming: key, json)
        }
        XCTAssertThrowsError(try WireCodec.decodeClientMessage(frames("publish", #"{"v":1,"topic":"app.x","body":{"member":"individual","member":"child"}}"#))) { error in  // protocol.md § 3's example
            XCTAssertEqual("\(error)", "the JSON frame is not valid JSON at byte 53: the key 'member' appears twice in one object; a key may appear only once")
        }
        assertRefused({ try WireCodec.decodeClientMessage(self.frames("ack", #"{"seq":1,"seq":2,"v":1}"#)) }, naming: "seq", "ack")
        let hello = #"{"v":1,"name":"p","role":"generic","subscribe":[],"watch":{"group.a":["k"],"group.a":["j"]}}"#
        assertRefused({ try WireCodec.decodeClientMessage(self.frames("hello", hello)) }, naming: "group.a", hello)
    }

    /// An envelope read in full (a journal's line, any event not in the broker's compact form) is refused the same way;
    /// the one-pass reader takes only the broker's own form, whose members come once each in a fixed order, and leaves
    /// the body — which the broker refused at its publish if it repeated a key — to its reader, which refuses it too.
    func testAnEnvelopeWithARepeatedKeyIsRefused() throws {
        let envelopes = [
            (#"{"v":1,"seq":1,"time":0,"topic":"app.x","source":"s","body":{},"seq":2}"#, "seq"),
            (#"{"v":1,"seq":1,"time":0,"topic":"app.x","source":"s","body":{"a":{"b":1,"b":2}}}"#, "b"),
            (#"{"body":{"a":1,"a":1},"seq":1,"source":"s","time":0,"topic":"app.x","v":1}"#, "a"),
        ]
        for (json, key) in envelopes {
            assertRefused({ try WireCodec.decodeEnvelope(Array(json.utf8)) }, naming: key, json)
        }
        assertRefused({ try WireCodec.decodeBrokerMessage([Array("event 3".utf8), Array(envelopes[0].0.utf8)]) }, naming: "seq", envelopes[0].0)
        assertRefused({ try WireCodec.decodeBrokerMessage([Array("event 3".utf8), Array(envelopes[2].0.utf8)]) }, naming: "a", envelopes[2].0)
        let inBrokersForm = try WireCodec.decodeBrokerMessage([Array("event 3".utf8), Array(envelopes[1].0.utf8)])
        guard case .event(let envelope, _) = inBrokersForm else { return XCTFail("\(inBrokersForm)") }
        XCTAssertThrowsError(try JSONValue(parsing: envelope.body)) { XCTAssertTrue("\($0)".contains("the key 'b' appears twice"), "\($0)") }
    }

    /// A body the OS reads with the bus's reader and, in other forms, with `JSONDecoder`: both refuse a repeated key, so
    /// neither reads `individual` where the other would read `child`.
    func testABodyWithARepeatedKeyIsReadByNeitherReader() {
        for body in [#"{"member":"individual","member":"child"}"#, #"{"member":"child","x":{"y":1,"y":2}}"#] {
            XCTAssertThrowsError(try JSONValue(parsing: body), body)
            XCTAssertThrowsError(try DeviceAPICoding.decode(AuthorizationRequest.self, from: Array(body.utf8)), body) { error in
                XCTAssertTrue(DeviceAPICoding.describe(error).contains("appears twice in one object"), DeviceAPICoding.describe(error))
            }
        }
        XCTAssertEqual(try DeviceAPICoding.decode(AuthorizationRequest.self, from: Array(#"{"member":"child","x":{"y":1}}"#.utf8)).member, .child)
    }

    /// A journal's line is read by the one-pass reader, which leaves the body unscanned: a body that writes a key twice
    /// (a journal written before the broker refused such a publish) is named with its line, not read as `{}`.
    func testAJournalLineWhoseBodyRepeatsAKeyIsNamedWithItsLine() {
        let good = #"{"v":1,"seq":1,"time":0,"topic":"app.x","source":"s","body":{"a":1}}"#
        let twice = #"{"v":1,"seq":2,"time":0,"topic":"app.x","source":"s","body":{"a":{"b":1,"b":2}}}"#
        var read: [UInt64] = []
        XCTAssertThrowsError(try JournalLines.forEach(in: Array((good + "\n" + twice + "\n").utf8)) { read.append($0.seq) }) { error in
            XCTAssertTrue("\(error)".hasPrefix("line 2: not a journal line: "), "\(error)")
            XCTAssertTrue("\(error)".contains("the key 'b' appears twice in one object"), "\(error)")
        }
        XCTAssertEqual(read, [1], "the lines before it are read")
    }

    /// Only to name what refused bytes were about: read leniently, a repeated key keeps its first or its last value.
    func testALenientReadingKeepsTheFirstOrTheLastValue() throws {
        let json = Array(#"{"name":"p","n":{"c":1,"c":2},"name":"q"}"#.utf8)
        let first = try JSONValue(parsingLeniently: json, keeping: .firstKept)
        let last = try JSONValue(parsingLeniently: json, keeping: .lastKept)
        XCTAssertEqual(first["name"], "p")
        XCTAssertEqual(first["n"]?["c"], 1)
        XCTAssertEqual(last["name"], "q")
        XCTAssertEqual(last["n"]?["c"], 2)
        XCTAssertThrowsError(try JSONValue(parsingLeniently: json, keeping: .refused))
        XCTAssertThrowsError(try JSONValue(parsingLeniently: Array(#"{"a":1,}"#.utf8), keeping: .lastKept), "lenient about keys only")
    }
}
