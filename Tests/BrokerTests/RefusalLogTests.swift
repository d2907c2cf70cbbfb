@testable import Broker
import XCTest

/// A flood of refusals writes at most one log line a second for each kind, and each line says how many it stands for.
final class RefusalLogTests: XCTestCase {
    func testAFloodWritesOneLineASecondPerKindCountingEveryRefusal() {
        var log = RefusalLog()
        var lines: [(kind: String, at: Int64, count: Int)] = []
        // 300 refusals of one kind in 1.2 s, and a second kind interleaved.
        for index in 0..<300 {
            let now = Int64(index) * 4
            if let count = log.refusal("curve-refused", now: now) { lines.append(("curve-refused", now, count)) }
            if index % 10 == 0, let count = log.refusal("not-admitted", now: now) { lines.append(("not-admitted", now, count)) }
        }
        let curve = lines.filter { $0.kind == "curve-refused" }
        XCTAssertEqual(curve.map(\.at), [0, 1_000], "the first refusal is logged at once, then one line a second")
        XCTAssertEqual(curve.map(\.count), [1, 250], "each line counts the refusals since the one before, itself included")
        XCTAssertEqual(lines.filter { $0.kind == "not-admitted" }.map(\.at), [0, 1_000], "each kind has its own second")
        // After a quiet second the next refusal is logged at once, standing for the 49 held back and itself.
        XCTAssertEqual(log.refusal("curve-refused", now: 5_000), 50)
        XCTAssertNil(log.refusal("curve-refused", now: 5_999))
        XCTAssertEqual(log.refusal("curve-refused", now: 6_000), 2)
    }
}
