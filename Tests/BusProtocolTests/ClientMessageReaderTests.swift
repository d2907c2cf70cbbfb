import XCTest
@testable import BusProtocol

/// A publish or an ack in the form the Swift SDK writes is read in one pass; whatever that reader takes must decode
/// exactly as the full decode does, and whatever it does not take is left to the full decode.
final class ClientMessageReaderTests: XCTestCase {
    private func frames(_ kind: String, _ json: String) -> ArraySlice<[UInt8]> {
        [Array(kind.utf8), Array(json.utf8)][...]
    }

    private func fastPublish(_ json: String, limit: Int = defaultMaximumBodyBytes) -> Publish? {
        var reader = ClientMessageReader(Array(json.utf8))
        return reader.publish(maximumBodyBytes: limit)
    }

    private func fastAck(_ json: String) -> UInt64? {
        var reader = ClientMessageReader(Array(json.utf8))
        return reader.ack()
    }

    /// The full decode's answer, or its error's code.
    private func inFull(_ kind: String, _ json: String, limit: Int = defaultMaximumBodyBytes) -> Result<ClientMessage, BusProtocolError> {
        Result { try WireCodec.decodeClientMessageInFull(frames(kind, json), maximumBodyBytes: limit) }.mapError { $0 as! BusProtocolError }
    }

    func testWhatTheSDKPublishesIsReadInOnePassAsTheFullDecodeReadsIt() throws {
        let publishes = [
            Publish(topic: "app.bench", body: Array(#"{"app":"com.example.bench","n":1}"#.utf8)),
            Publish(topic: "shield.configuration.reply", body: Array(#"{"title":"Zeit \u00fc","nested":{"a":[1,2.5,-3e2,true,null]}}"#.utf8), corr: "c-17"),
            Publish(topic: "x.plugin.ping.request", body: Array("{}".utf8), corr: "r1", deadline: -5),
            Publish(topic: "state.saved", body: Array(#"{"n":0}"#.utf8), cause: PublicationCause(seq: 12, index: 3)),
            Publish(topic: "a.b", body: Array(#"{"s":"quote \" back \\ slash"}"#.utf8), corr: "é", deadline: Int64.max, cause: PublicationCause(seq: 0, index: 0)),
        ]
        for publish in publishes {
            let json = String(decoding: WireCodec.encodePublish(publish), as: UTF8.self)
            XCTAssertEqual(fastPublish(json), publish, json)
            XCTAssertEqual(try inFull("publish", json).get(), .publish(publish), json)
            XCTAssertEqual(try WireCodec.decodeClientMessage(frames("publish", json)), .publish(publish), json)
        }
    }

    func testAnAckIsReadInOnePassAsTheFullDecodeReadsIt() throws {
        for seq: UInt64 in [0, 1, 42, UInt64(Int64.max)] {
            let json = String(decoding: WireCodec.encode(.ack(seq: seq))[1], as: UTF8.self)
            XCTAssertEqual(fastAck(json), seq, json)
            XCTAssertEqual(try inFull("ack", json).get(), .ack(seq: seq), json)
        }
    }

    /// Every variation the one-pass reader does not take is left whole to the full decode, which accepts it or
    /// names what is wrong — never a different reading.
    func testAnythingElseIsLeftToTheFullDecode() {
        let publishes = [
            #"{"topic":"app.x","v":1,"body":{}}"#,  // another order
            #"{"v":1, "topic":"app.x","body":{}}"#,  // whitespace
            #"{"v":1,"topic":"app.x","body":{"a": 1}}"#,  // whitespace inside the body (the full decode makes it compact)
            #"{"v":1,"topic":"app.x","body":{},"extra":1}"#,  // a member after the body
            #"{"v":1,"topic":"app.x","extra":1,"body":{}}"#,  // an unknown member
            #"{"v":1,"topic":"app.x","body":{}} "#,  // trailing whitespace
            #"{"v":1,"topic":"App.x","body":{}}"#,  // a bad topic
            #"{"v":2,"topic":"app.x","body":{}}"#,  // another version
            #"{"v":1,"topic":"app.x","body":[]}"#,  // a body that is no object
            #"{"v":1,"topic":"app.x","body":{"a":01}}"#,  // invalid JSON in the body
            #"{"v":1,"topic":"app.x","body":{"a":1}"#,  // unterminated
            #"{"v":1,"topic":"app.x","cause":-1,"index":0,"body":{}}"#,  // a negative cause
            #"{"v":1,"topic":"app.x","cause":1,"body":{}}"#,  // a cause without its index
            #"{"v":1,"topic":"app.x","deadline":1.5,"body":{}}"#,  // a deadline with a fraction
            #"{"v":1,"topic":"app.x","deadline":99999999999999999999,"body":{}}"#,  // beyond 64 bits
            #"{"v":1,"topic":"app.x","corr":7,"body":{}}"#,  // a mistyped corr
            #"{"v":1,"topic":"app.x","body":{"s":"\u00"}}"#,  // a broken escape
            #"{"v":1,"topic":"app.x","body":{},"body":{"a":1}}"#,  // a repeated member (refused in full)
        ]
        for json in publishes {
            XCTAssertNil(fastPublish(json), json)
            assertSameReading("publish", json)
        }
        XCTAssertNil(fastPublish(#"{"v":1,"topic":"app.x","body":{"n":12345}}"#, limit: 8), "over the size limit")
        if case .failure(let error) = inFull("publish", #"{"v":1,"topic":"app.x","body":{"n":12345}}"#, limit: 8) {
            XCTAssertEqual(error.code, BusProtocolError.bodyTooLarge(bytes: 11, limit: 8).code)
        } else {
            XCTFail("a body over the limit must be refused")
        }
        for json in [#"{"v":1,"seq":3}"#, #"{"seq":-3,"v":1}"#, #"{"seq":3,"v":1,"x":0}"#, #"{"seq":03,"v":1}"#, #"{"seq":3,"v":2}"#] {
            XCTAssertNil(fastAck(json), json)
            assertSameReading("ack", json)
        }
    }

    /// The decode the broker calls reads `json` as the full decode does: the same message, or an error with the same code.
    private func assertSameReading(_ kind: String, _ json: String, file: StaticString = #filePath, line: UInt = #line) {
        let used = Result { try WireCodec.decodeClientMessage(frames(kind, json)) }.mapError { $0 as! BusProtocolError }
        switch (used, inFull(kind, json)) {
        case (.success(let a), .success(let b)): XCTAssertEqual(a, b, json, file: file, line: line)
        case (.failure(let a), .failure(let b)): XCTAssertEqual(a.code, b.code, json, file: file, line: line)
        default: XCTFail("\(json): read differently", file: file, line: line)
        }
    }

    /// A message the one-pass reader leaves still decodes as before: the full decode gives the same publish.
    func testTheFullDecodeStillReadsOtherForms() throws {
        let reordered = #"{"body":{"a": [1, 2]},"corr":"c","topic":"app.x","v":1}"#
        XCTAssertEqual(try WireCodec.decodeClientMessage(frames("publish", reordered)),
                       .publish(Publish(topic: "app.x", body: Array(#"{"a":[1,2]}"#.utf8), corr: "c")))
        XCTAssertThrowsError(try WireCodec.decodeClientMessage(frames("publish", #"{"v":1,"topic":"App.x","body":{}}"#)))
        XCTAssertEqual(try WireCodec.decodeClientMessage(frames("ack", #"{"v":1,"seq":9}"#)), .ack(seq: 9))
    }
}
