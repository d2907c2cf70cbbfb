import XCTest
@testable import BusProtocol

final class JSONTests: XCTestCase {
    func testParsesAndWritesCompactSortedJSON() throws {
        let value = try JSONValue(parsing: #" { "b" : [1, 2.5, true, null], "a" : "x\n\u00e9\ud83d\ude00" } "#)
        XCTAssertEqual(value["a"]?.stringValue, "x\né😀")
        XCTAssertEqual(value.jsonText, #"{"a":"x\né😀","b":[1,2.5,true,null]}"#)
    }

    func testIntegersAreWrittenAsStringWritesThem() {
        for value: Int64 in [0, 7, 10, -1, -10, 1_795_410_000_000, Int64.max, Int64.min] {
            var out: [UInt8] = []
            JSONWriter.writeInteger(value, into: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), String(value))
        }
        var out: [UInt8] = []
        JSONWriter.writeInteger(UInt64.max, into: &out)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), String(UInt64.max))
    }

    func testStringsAreEscapedOnlyWhereJSONNeedsIt() {
        for (text, json) in [("app.bench", #""app.bench""#), ("é ✓", #""é ✓""#), ("a\"b\\c", #""a\"b\\c""#),
                             ("tab\tline\n\u{1}", #""tab\tline\n\u0001""#), ("", #""""#),
                             ("\u{8}\u{C}\r\u{1F}", #""\b\f\r\u001f""#)] {  // JSONEncoder's forms: the wire and stored values alike
            var out: [UInt8] = []
            JSONWriter.writeString(text, into: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), json, text)
        }
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

    /// Strings are checked eight bytes at a time while they are plain ASCII: whatever ends such a run — a quote,
    /// an escape, a control character, UTF-8 good or bad — is found at every offset within and across the words.
    func testStringsAreCheckedAlikeWhereverTheirSpecialBytesFall() throws {
        let specials: [(bytes: [UInt8], valid: Bool, text: String)] = [
            (Array(#"\""#.utf8), true, "\""), (Array(#"\\"#.utf8), true, "\\"), (Array(#"\u00e9"#.utf8), true, "é"),
            ([0xC3, 0xA9], true, "é"), ([0xF0, 0x9F, 0x98, 0x80], true, "\u{1F600}"), ([0x7F], true, "\u{7F}"),
            ([0x01], false, ""), ([0x0A], false, ""), ([0x1F], false, ""), ([0xFF], false, ""), ([0xC3], false, ""), (Array(#"\x"#.utf8), false, ""),
        ]
        for before in 0..<20 {
            for after in [0, 1, 7, 8, 9] {
                for special in specials {
                    let bytes = Array(#"{"body":{"s":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: before) + special.bytes
                        + Array(repeating: UInt8(ascii: "b"), count: after) + Array(#""}}"#.utf8)
                    let view = try? JSONObjectView(bytes)
                    XCTAssertEqual(view != nil, special.valid, "\(special.bytes) after \(before) plain bytes")
                    guard special.valid else { continue }
                    let expected = String(repeating: "a", count: before) + special.text + String(repeating: "b", count: after)
                    XCTAssertEqual(view?.value(of: "body")?["s"]?.stringValue, expected)
                }
            }
        }
    }

    /// A key written twice in one object is refused wherever it stands — at the top, nested in an object or an array,
    /// among many keys, or written with escapes — by the reader (`JSONValue`), the validator (`JSONParser.check`, the
    /// skip the broker runs over a body) and the object view (a message's members), each naming the key and where it
    /// is written again; keys that only look alike are not refused.
    func testARepeatedKeyIsRefusedByEveryReaderNamingIt() throws {
        let many = (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        let repeated: [(json: String, key: String, offset: Int)] = [
            (#"{"a":1,"a":2}"#, "a", 7),
            (#"{"a":1,"b":{"c":true,"c":true}}"#, "c", 21),
            (#"{"list":[{"x":null},{"x":[],"y":0,"x":{}}]}"#, "x", 34),
            (#"{"a":1,"\u0061":2}"#, "a", 7),
            (#"{"\u0062":1,"b":2}"#, "b", 12),
            (#"{ "a" : 1 , "a" : 2 }"#, "a", 12),
            ("{" + many + #","k17":0}"#, "k17", many.utf8.count + 2),
            (#"{"é":1,"e\u0301":2}"#, "e\u{301}", 8),  // the same key to Swift's strings (canonically equivalent)
            ("{\"K\":1,\"\u{212A}\":2}", "\u{212A}", 7),  // the Kelvin sign is K
        ]
        for (json, key, offset) in repeated {
            let expected = JSONSyntaxError(offset: offset, reason: "the key '\(key)' appears twice in one object; a key may appear only once")
            XCTAssertThrowsError(try JSONValue(parsing: json), json) { XCTAssertEqual($0 as? JSONSyntaxError, expected, json) }
            XCTAssertThrowsError(try JSONParser.check(Array(json.utf8)), json) { XCTAssertEqual($0 as? JSONSyntaxError, expected, json) }
            XCTAssertThrowsError(try JSONObjectView(Array(json.utf8)), json) { XCTAssertEqual($0 as? JSONSyntaxError, expected, json) }
        }
        XCTAssertThrowsError(try JSONValue(parsing: #"{"a":1,"a":2}"#)) { error in
            XCTAssertEqual("\(error)", "not valid JSON at byte 7: the key 'a' appears twice in one object; a key may appear only once")
        }
        let long = String(repeating: "k", count: 100)
        XCTAssertThrowsError(try JSONValue(parsing: #"{"\#(long)":1,"\#(long)":2}"#)) { error in
            XCTAssertTrue("\(error)".contains("the key '\(String(repeating: "k", count: 40))…' appears twice"), "\(error)")
        }
        // Alike but not the same: other lengths, other bytes, the same key in sibling or nested objects, letters
        // past ASCII, a repeat only in values.
        for json in [#"{"ab":1,"ba":2,"a":3,"abc":4}"#, #"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#, #"{"é":1,"e":2,"ê":3}"#,
                     #"{"a":"a","b":"a"}"#, "{" + many + "}", #"{"\u0061b":1,"ab\u0063":2,"a":3}"#] {
            XCTAssertNoThrow(try JSONValue(parsing: json), json)
            XCTAssertNoThrow(try JSONParser.check(Array(json.utf8)), json)
            XCTAssertNoThrow(try JSONObjectView(Array(json.utf8)), json)
        }
    }

    func testEscapesControlCharactersWhenWriting() {
        XCTAssertEqual(JSONValue.string("a\"\\\u{01}").jsonText, #""a\"\\\u0001""#)
    }
}
