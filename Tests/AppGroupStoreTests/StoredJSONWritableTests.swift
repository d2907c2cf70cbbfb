import AppGroupStore
import Foundation
import XCTest

/// A value that writes its own text (`StoredJSONWritable`) is stored with that text and its type's tag; one that
/// leaves it to the encoder gets the encoder's text, or its refusal.
final class StoredJSONWritableTests: ContainerTestCase {
    struct Probe: StoredJSONWritable {
        var value: Double
        var written: [UInt8]?
        var storedJSON: [UInt8]? { written }
        private enum CodingKeys: String, CodingKey { case value }
    }

    func testItsOwnTextIsStoredWithItsTypeTag() throws {
        let defaults = try adminDefaults()
        try defaults.transaction { try $0.set(Probe(value: 1, written: Array(#"{"value":1}"#.utf8)), forKey: "probe") }
        let entry = try XCTUnwrap(try defaults.entry(forKey: "probe"))
        XCTAssertEqual(entry.rawJSON, #"{"value":1}"#)
        XCTAssertEqual(entry.typeTag, "Probe")
    }

    func testAValueLeftToTheEncoderGetsTheEncodersTextOrItsRefusal() throws {
        let defaults = try adminDefaults()
        try defaults.transaction { try $0.set(Probe(value: 2.5, written: nil), forKey: "probe") }
        XCTAssertEqual(try defaults.entry(forKey: "probe")?.rawJSON, #"{"value":2.5}"#)
        XCTAssertThrowsError(try defaults.transaction { try $0.set(Probe(value: .nan, written: nil), forKey: "probe") }) { error in
            guard case AppGroupStoreError.encodeFailed(let key, _, _)? = error as? AppGroupStoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(key, "probe")
        }
        XCTAssertEqual(try defaults.entry(forKey: "probe")?.rawJSON, #"{"value":2.5}"#, "the refused write kept nothing")
    }
}
