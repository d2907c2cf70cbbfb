import AppGroupStore
import Foundation
import SortedJSON
import XCTest

/// Flags, whole numbers, timestamps, strings and their lists write their own stored text (`StoredJSONWritable`): it
/// must be `SortedJSONEncoder`'s very bytes, which every App-Group write stored until then, or nil where the encoder
/// refuses the value.
final class StoredScalarWritingTests: ContainerTestCase {
    private static func encoded<T: Encodable>(_ value: T) throws -> [UInt8] {
        try SortedJSONEncoder(dates: .secondsSince1970).encode(value)
    }

    private static func assertSameBytes<T: StoredJSONWritable>(_ values: [T], file: StaticString = #filePath, line: UInt = #line) throws {
        for value in values {
            let written = try XCTUnwrap(value.storedJSON, "\(value)", file: file, line: line)
            XCTAssertEqual(String(decoding: written, as: UTF8.self), String(decoding: try encoded(value), as: UTF8.self), "\(value)", file: file, line: line)
        }
    }

    func testScalarsWriteTheEncodersBytes() throws {
        try Self.assertSameBytes([true, false])
        try Self.assertSameBytes([0, 1, -1, 42, Int.max, Int.min, 1_795_410_000])
        try Self.assertSameBytes([0, -0.0, 1, -1, 0.1, 1_795_410_000, 1_795_410_000.25, 1_774_746_000.123456, -86_400.5, 1e300, -1e-300,
                                  5e-324, 9_007_199_254_740_992, 9_007_199_254_740_994, 1.7976931348623157e308, Double.pi])
        try Self.assertSameBytes(["", "Instagram", "a/b", "é \"q\" \\ ", "\u{0}\u{1f}\n\r\t\u{8}\u{c}", "🇩🇪 e\u{301}", "2026-11-22T23:00:00Z"])
    }

    func testListsWriteTheEncodersBytes() throws {
        try Self.assertSameBytes([[String](), ["speed-bump.reblock_0"], ["b", "a", "a \"q\""]])
        try Self.assertSameBytes([[Double](), [1, 2.5, -0.0]])
        try Self.assertSameBytes([[[1, 2], [Int]()]])
    }

    func testWhatTheEncoderRefusesIsLeftToIt() throws {
        for refused in [Double.nan, .infinity, -.infinity] {
            XCTAssertNil(refused.storedJSON, "\(refused)")
            XCTAssertNil([1, refused].storedJSON, "\(refused)")
            XCTAssertThrowsError(try Self.encoded(refused))
        }
    }

    func testTheStoreKeepsTheWrittenTextWithTheTypesTag() throws {
        let defaults = try adminDefaults()
        try defaults.set(1_795_410_000.25, forKey: "at")
        try defaults.set(3, forKey: "slot")
        try defaults.set("a/\"b\"", forKey: "name")
        try defaults.set(["x", "y"], forKey: "names")
        try defaults.set(true, forKey: "flag")
        let stored = try ["at", "slot", "name", "names", "flag"].map { try XCTUnwrap(defaults.entry(forKey: $0)) }
        XCTAssertEqual(stored.map(\.rawJSON), ["1795410000.25", "3", #""a/\"b\"""#, #"["x","y"]"#, "true"])
        XCTAssertEqual(stored.map(\.typeTag), ["Double", "Int", "String", "Array<String>", "Bool"])
        XCTAssertEqual(try defaults.double(forKey: "at"), 1_795_410_000.25)
        XCTAssertEqual(try defaults.value([String].self, forKey: "names"), ["x", "y"])
        XCTAssertThrowsError(try defaults.set(Double.nan, forKey: "at")) { error in
            guard case AppGroupStoreError.encodeFailed(let key, _, _)? = error as? AppGroupStoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(key, "at")
        }
        XCTAssertEqual(try defaults.entry(forKey: "at")?.rawJSON, "1795410000.25", "the refused write kept nothing")
    }
}
