import AppGroupStore
import Foundation
@testable import MonitorKit
import SortedJSON
import XCTest

/// The monitor writes its check chain's state and the OS's day byte by byte (`StoredJSONWritable`): the text must be
/// `SortedJSONEncoder`'s, which the App Group stored until then, or nil where the encoder refuses a value.
final class MonitorStoredWritingTests: XCTestCase {
    private static func encoded<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try SortedJSONEncoder(dates: .secondsSince1970).encode(value), as: UTF8.self)
    }

    private static func written<T: StoredJSONWritable>(_ value: T) throws -> String {
        String(decoding: try XCTUnwrap(value.storedJSON, "\(value)"), as: UTF8.self)
    }

    func testPlannedChecksAreWrittenAsTheEncoderWritesThem() throws {
        var compared = 0
        for plannedAt in [1_795_410_000, 1_774_746_000.25, -86_400.5, 0, -0.0, 1e300] {
            for times in [[:], ["1795410900.0": 1], ["1795410900.0": 3, "1795411800.5": 17, "-60.0": Int.max, "é \"q\"": -2, "Z": Int.min, "a": 0]] {
                let checks = CheckChain.PlannedChecks(plannedAt: plannedAt, times: times)
                XCTAssertEqual(try Self.written(checks), try Self.encoded(checks))
                compared += 1
            }
        }
        XCTAssertEqual(compared, 18)
        XCTAssertNil(CheckChain.PlannedChecks(plannedAt: .nan, times: [:]).storedJSON)
    }

    func testPlannedCallsAreWrittenAsTheEncoderWritesThem() throws {
        for calls in [[], [CheckChain.PlannedCall(at: 1_795_410_900, activity: "speed-bump.reblock_0")],
                      [CheckChain.PlannedCall(at: 1_795_410_900.5, activity: "habit-lock.reblock_4"),
                       CheckChain.PlannedCall(at: -1, activity: "a \"quoted\" é/name\n")]] {
            XCTAssertEqual(try Self.written(calls), try Self.encoded(calls))
        }
        XCTAssertNil([CheckChain.PlannedCall(at: .infinity, activity: "x")].storedJSON)
    }

    func testDaysAreWrittenAsTheEncoderWritesThem() throws {
        let instants = [Date(timeIntervalSince1970: 1_795_410_000), Date(timeIntervalSince1970: 1_774_746_000.25), Date(timeIntervalSince1970: -86_400.5)]
        var compared = 0
        for zone in ["Europe/Berlin", "Australia/Lord_Howe", "Asia/Kathmandu", "America/St_Johns", "UTC"] {
            for instant in instants {
                for offsetMs: Int64 in [0, 3_600_000, -43_200_123, 1] {
                    let day = OSDay.day(containing: instant, zone: try XCTUnwrap(TimeZone(identifier: zone)), offsetMs: offsetMs)
                    XCTAssertEqual(try Self.written(day), try Self.encoded(day))
                    compared += 1
                }
            }
        }
        XCTAssertEqual(compared, 60)
        var odd = OSDay.day(containing: instants[0], zone: try XCTUnwrap(TimeZone(identifier: "UTC")), offsetMs: 0)
        odd.key = "a \"key\" é/"
        odd.zone = "Zone\\"
        XCTAssertEqual(try Self.written(odd), try Self.encoded(odd))
        odd.end = Date(timeIntervalSince1970: .nan)
        XCTAssertNil(odd.storedJSON)
    }
}
