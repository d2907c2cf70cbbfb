import Foundation
@testable import MonitorKit
import SortedJSON
import XCTest

/// The monitor reads the kept OS day at every check from its stored JSON without `JSONDecoder`: it must read what
/// `JSONDecoder` reads from what the App Group stores, and leave anything else to it.
final class OSDayStoredReadingTests: XCTestCase {
    private static func decoded(_ json: String) throws -> OSDay {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(OSDay.self, from: Data(json.utf8))
    }

    func testAStoredDayReadsAsJSONDecoderReadsIt() throws {
        let instants = [Date(timeIntervalSince1970: 1_795_410_000), Date(timeIntervalSince1970: 1_774_746_000.25), Date(timeIntervalSince1970: -86_400.5)]
        var read = 0
        for zone in ["Europe/Berlin", "Australia/Lord_Howe", "Asia/Kathmandu", "America/St_Johns", "UTC"] {
            for instant in instants {
                for offsetMs: Int64 in [0, 3_600_000, -43_200_123, 1] {
                    let day = OSDay.day(containing: instant, zone: try XCTUnwrap(TimeZone(identifier: zone)), offsetMs: offsetMs)
                    let stored = String(decoding: try SortedJSONEncoder(dates: .secondsSince1970).encode(day), as: UTF8.self)
                    let fast = try XCTUnwrap(OSDay(storedJSON: stored), stored)
                    XCTAssertEqual(fast, try Self.decoded(stored), stored)
                    XCTAssertEqual(fast.start.timeIntervalSince1970.bitPattern, try Self.decoded(stored).start.timeIntervalSince1970.bitPattern, stored)
                    read += 1
                }
            }
        }
        XCTAssertEqual(read, 60)
        // A number in another form JSONDecoder also reads as seconds.
        let exponent = #"{"date":20779,"end":1.7954964e9,"key":"2026-11-23T23:00:00Z","offsetMs":0,"start":1795410000,"zone":"Europe\/Berlin"}"#
        XCTAssertEqual(try XCTUnwrap(OSDay(storedJSON: exponent)), try Self.decoded(exponent))
    }

    func testAnythingElseIsLeftToJSONDecoder() {
        let day = #"{"date":20779,"end":1795496400,"key":"2026-11-23T23:00:00Z","offsetMs":0,"start":1795410000,"zone":"Europe/Berlin"}"#
        XCTAssertNotNil(OSDay(storedJSON: day))
        for other in [day.replacingOccurrences(of: #""date":20779"#, with: #""date":20779.0"#),
                      day.replacingOccurrences(of: #""offsetMs":0"#, with: #""offsetMs":"0""#),
                      day.replacingOccurrences(of: #""zone":"Europe/Berlin"}"#, with: #""zone":"Europe/Berlin","extra":1}"#),
                      day.replacingOccurrences(of: #","zone":"Europe/Berlin""#, with: ""),
                      day.replacingOccurrences(of: #""start":1795410000"#, with: #""start":null"#),
                      "[]", "", "{"] {
            XCTAssertNil(OSDay(storedJSON: other), other)
        }
    }
}
