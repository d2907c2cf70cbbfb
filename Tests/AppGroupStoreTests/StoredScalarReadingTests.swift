// Tests of StoredScalarReading: it reads what JSONDecoder reads from the stored text, and nil from anything else.
@testable import AppGroupStore
import Foundation
import SortedJSON
import XCTest

final class StoredScalarReadingTests: ContainerTestCase {
    /// Texts as stored, and texts a store written by hand (`shieldbus state set`, another version) may hold.
    static let texts = [
        "true", "false", "True", "null", "1", "0", "-0", "01", "-", "1.", ".5", "1.5", "-2.25", "1e3", "1E+3", "2e-2", "1e400",
        "-1e400", "1e-400", "-1e-400", "1e-330", "2e-324", "5e-324", "0e-400", "0.000", "-0.0", "12345678901234567890", "0.1", "1764543600.5", "1764543600.123", " 1", "1 ", "+1", "0x10", "1_000", "nan",
        #""Instagram""#, #""""#, #""a/b""#, #""ü é 🙂""#, "\"\u{301}x\"", #""a\"b""#, #""a\\b""#, #""a\/b""#, #""\u00e9""#,
        "\"tab\tinside\"", "\"line\nbreak\"", #""unclosed"#, #"unopened""#, #"""#, #"" ""#, #""a" "#,
        "-12", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "1.0", "-01",
        "[]", "[ ]", #"["Read"]"#, #"["Read","Walk"]"#, #"["a,b","c"]"#, #"["a","b",]"#, #"["a" ,"b"]"#, #"["a\"b"]"#,
        #"[1]"#, #"["a",1]"#, #"[""]"#, #"["",""]"#, #"["a","#, "[", "]", #"["a"]]"#, #"[["a"]]"#, "{}",
    ]

    func testItReadsWhatJSONDecoderReadsAndNilFromEverythingElse() throws {
        for text in Self.texts {
            agree(Bool.self, text)
            agree(Double.self, text)
            agree(String.self, text)
            agree(Date.self, text)
            agree([String].self, text)
            agree(Int.self, text)
        }
    }

    func testWhatTheStoreWritesIsReadWithoutJSONDecoder() throws {
        let encoder = SortedJSONEncoder(dates: .secondsSince1970)
        func stored<T: Encodable>(_ value: T) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        XCTAssertEqual(StoredScalarReading.value(Bool.self, json: try stored(true)), true)
        XCTAssertEqual(StoredScalarReading.value(Bool.self, json: try stored(false)), false)
        for number in [2.5, -3, 1_764_543_600.123, 1e-7, 123_456_789_012.75] {
            XCTAssertEqual(StoredScalarReading.value(Double.self, json: try stored(number)), number)
        }
        // A zero is JSONDecoder's to read: a text that underflows to zero is refused by it, not read as 0.
        XCTAssertNil(StoredScalarReading.value(Double.self, json: try stored(0.0)))
        XCTAssertNil(StoredScalarReading.value(Double.self, json: "1e-400"))
        for integer in [0, 7, -3, Int.max, Int.min] {
            XCTAssertEqual(StoredScalarReading.value(Int.self, json: try stored(integer)), integer)
        }
        let date = Date(timeIntervalSince1970: 1_764_543_600.5)
        XCTAssertEqual(StoredScalarReading.value(Date.self, json: try stored(date)), date)
        for string in ["Instagram", "", "a/b", "ü é 🙂", "a,b"] {
            XCTAssertEqual(StoredScalarReading.value(String.self, json: try stored(string)), string)
        }
        for strings in [[], ["Read"], ["Read", "Walk", "a,b", ""]] {
            XCTAssertEqual(StoredScalarReading.value([String].self, json: try stored(strings)), strings)
        }
    }

    func testAStoredValueOfAnotherTypeStillFailsToDecodeThroughTheStore() throws {
        let defaults = try adminDefaults()
        try defaults.set("7", forKey: "text")
        try defaults.set(["7"], forKey: "texts")
        assertStoreError(try defaults.double(forKey: "text")) { error in
            guard case .decodeFailed(let key, let expected, let stored, _) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual([key, expected, stored], ["text", "Double", "String"])
        }
        assertStoreError(try defaults.string(forKey: "texts")) { error in
            guard case .decodeFailed = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertEqual(try defaults.string(forKey: "text"), "7")
        XCTAssertEqual(try defaults.value([String].self, forKey: "texts"), ["7"])
    }

    /// The reading agrees with JSONDecoder: the same value where it reads one, and nil where JSONDecoder refuses.
    private func agree<T: Decodable & Equatable>(_ type: T.Type, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let decoded = try? decoder.decode(T.self, from: Data(text.utf8))
        let read = StoredScalarReading.value(T.self, json: text)
        if let read { XCTAssertEqual(read, decoded, "\(T.self) from \(text)", file: file, line: line) }
        if decoded == nil { XCTAssertNil(read, "\(T.self) from \(text): JSONDecoder refuses it", file: file, line: line) }
    }
}
