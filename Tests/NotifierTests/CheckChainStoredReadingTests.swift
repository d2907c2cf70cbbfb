import Foundation
@testable import MonitorKit
import SortedJSON
import XCTest

/// The monitor reads its check chain's state (the checks planned at an instant, the calls planned) from its stored JSON
/// without `JSONDecoder` at every planned check: it must read what `JSONDecoder` reads from what the App Group stores,
/// and leave anything else to it.
final class CheckChainStoredReadingTests: XCTestCase {
    private static func decoded<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(T.self, from: Data(json.utf8))
    }

    private static func stored<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try SortedJSONEncoder(dates: .secondsSince1970).encode(value), as: UTF8.self)
    }

    func testStoredPlannedChecksReadAsJSONDecoderReadsThem() throws {
        var read = 0
        for plannedAt in [1_795_410_000, 1_774_746_000.25, -86_400.5, 0] {
            for times in [[:], ["1795410900.0": 1], ["1795410900.0": 3, "1795411800.5": 17, "-60.0": Int.max, "é \"q\"": -2]] {
                let stored = try Self.stored(CheckChain.PlannedChecks(plannedAt: plannedAt, times: times))
                let fast = try XCTUnwrap(CheckChain.PlannedChecks(storedJSON: stored), stored)
                let slow = try Self.decoded(CheckChain.PlannedChecks.self, stored)
                XCTAssertEqual(fast, slow, stored)
                XCTAssertEqual(fast.plannedAt.bitPattern, slow.plannedAt.bitPattern, stored)
                read += 1
            }
        }
        XCTAssertEqual(read, 12)
        let exponent = #"{"plannedAt":1.7954964e9,"times":{"1795410900.0":2}}"#
        XCTAssertEqual(try XCTUnwrap(CheckChain.PlannedChecks(storedJSON: exponent)), try Self.decoded(CheckChain.PlannedChecks.self, exponent))
    }

    func testStoredPlannedCallsReadAsJSONDecoderReadsThem() throws {
        for calls in [[], [CheckChain.PlannedCall(at: 1_795_410_900, activity: "speed-bump.reblock_0")],
                      [CheckChain.PlannedCall(at: 1_795_410_900.5, activity: "habit-lock.reblock_4"),
                       CheckChain.PlannedCall(at: -1, activity: "a \"quoted\" é/name")]] {
            let stored = try Self.stored(calls)
            let fast = try XCTUnwrap(CheckChain.PlannedCall.list(storedJSON: stored), stored)
            XCTAssertEqual(fast, try Self.decoded([CheckChain.PlannedCall].self, stored), stored)
        }
    }

    func testAnythingElseIsLeftToJSONDecoder() {
        let checks = #"{"plannedAt":1795410000,"times":{"1795410900.0":1}}"#
        XCTAssertNotNil(CheckChain.PlannedChecks(storedJSON: checks))
        for other in [checks.replacingOccurrences(of: #""1795410900.0":1"#, with: #""1795410900.0":1.0"#),
                      checks.replacingOccurrences(of: #""1795410900.0":1"#, with: #""1795410900.0":"1""#),
                      checks.replacingOccurrences(of: #""1795410900.0":1"#, with: #""1795410900.0":9223372036854775808"#),
                      checks.replacingOccurrences(of: "1795410000", with: #""1795410000""#),
                      checks.replacingOccurrences(of: #"}}"#, with: #"},"extra":1}"#),
                      #"{"plannedAt":1795410000}"#, #"{"times":{}}"#, "[]", "", "{"] {
            XCTAssertNil(CheckChain.PlannedChecks(storedJSON: other), other)
        }
        let calls = #"[{"activity":"speed-bump.reblock_0","at":1795410900}]"#
        XCTAssertNotNil(CheckChain.PlannedCall.list(storedJSON: calls))
        for other in [calls.replacingOccurrences(of: "1795410900", with: "null"),
                      calls.replacingOccurrences(of: #""speed-bump.reblock_0""#, with: "0"),
                      calls.replacingOccurrences(of: #"}]"#, with: #","extra":1}]"#),
                      #"[{"at":1}]"#, #"[{"activity":"a","at":1},1]"#, "{}", "", "["] {
            XCTAssertNil(CheckChain.PlannedCall.list(storedJSON: other), other)
        }
    }
}
