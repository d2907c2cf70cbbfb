import XCTest
@testable import BusProtocol

final class JSONTests: XCTestCase {
    func testParsesAndWritesCompactSortedJSON() throws {
        let value = try JSONValue(parsing: #" { "b" : [1, 2.5, true, null], "a" : "x\n\u00e9\ud83d\ude00" } "#)
        XCTAssertEqual(value["a"]?.stringValue, "x\né😀")
        XCTAssertEqual(value.jsonText, #"{"a":"x\né😀","b":[1,2.5,true,null]}"#)
    }

    func testRejectsWhatIsNotStrictJSON() {
        for bad in ["{\"a\":1,}", "[1,]", "{'a':1}", "{\"a\":01}", "\"tab\there\"", "{\"a\":1} x", "nul", "1.", "-", "{\"a\"}", ""] {
            XCTAssertThrowsError(try JSONValue(parsing: bad), "accepted \(bad)")
        }
        XCTAssertThrowsError(try JSONValue(parsing: [0x22, 0xC3, 0x28, 0x22]), "accepted invalid UTF-8")
        XCTAssertThrowsError(try JSONValue(parsing: [0x22, 0xED, 0xA0, 0x80, 0x22]), "accepted an encoded surrogate")
    }

    func testSyntaxErrorSaysWhere() {
        XCTAssertThrowsError(try JSONValue(parsing: "{\"a\": tru}")) { error in
            // The offset is the first byte that cannot be part of valid JSON: the '}' ending "tru".
            XCTAssertEqual((error as? JSONSyntaxError)?.offset, 9)
        }
    }

    func testDeepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        XCTAssertThrowsError(try JSONValue(parsing: deep))
    }

    /// protocol.md § 3: at most 128 levels of objects and arrays, the message object included; scalars add none.
    func testNestingLimitIsExactlyTheDocumentedOne() throws {
        let limit = JSONParser.maximumNesting
        XCTAssertEqual(limit, 128)
        for levels in 1...(limit + 40) {
            for (open, close, leaf) in [("[", "]", "1"), ("{\"k\":", "}", "\"x\""), ("[", "]", "")] {
                let text = String(repeating: open, count: levels) + leaf + String(repeating: close, count: levels)
                let accepted = (try? JSONValue(parsing: text)) != nil
                XCTAssertEqual(accepted, levels <= limit, "\(levels) levels of \(open)…\(close) around '\(leaf)'")
                // As a message's body, the message object is the first level.
                let message = #"{"v":1,"topic":"app.deep","body":{"k":"# + text + "}}"
                let decoded = try? WireCodec.decodeClientMessage([Array("publish".utf8), Array(message.utf8)][...], maximumBodyBytes: 1 << 20)
                XCTAssertEqual(decoded != nil, levels + 2 <= limit, "a body nesting \(levels + 1) levels inside the message")
            }
        }
    }

    func testObjectViewLocatesMembersAndMinifiesOnlyWhenNeeded() throws {
        let view = try JSONObjectView(Array(#"{"topic":"a.b","body":{ "k" : "v w" ,"n":[1, 2]},"x":1}"#.utf8))
        XCTAssertEqual(view.kind(of: "body"), .object)
        XCTAssertEqual(String(decoding: view.compactBytes(of: "body")!, as: UTF8.self), #"{"k":"v w","n":[1,2]}"#)
        XCTAssertEqual(view.value(of: "topic"), "a.b")
        XCTAssertNil(view.kind(of: "missing"))
        XCTAssertThrowsError(try JSONObjectView(Array("[1]".utf8)))
    }

    func testEscapesControlCharactersWhenWriting() {
        XCTAssertEqual(JSONValue.string("a\"\\\u{01}").jsonText, #""a\"\\\u0001""#)
    }
}
