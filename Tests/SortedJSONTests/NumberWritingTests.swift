import Foundation
import SortedJSON
import XCTest

/// `SortedJSONEncoder.writeNumber` writes a double as the encoder does (`numberText`, and Foundation's `JSONEncoder`
/// before it): whole numbers from their digits up to 2^53, every other one from its description; nothing for NaN
/// and infinity.
final class NumberWritingTests: XCTestCase {
    func written(_ value: Double) -> String? {
        var out: [UInt8] = []
        return SortedJSONEncoder.writeNumber(value, into: &out) ? String(decoding: out, as: UTF8.self) : nil
    }

    func foundation(_ value: Double) throws -> String {
        let text = String(decoding: try JSONEncoder().encode([value]), as: UTF8.self)
        return String(text.dropFirst().dropLast())
    }

    func testDrawnDoublesAreWrittenAsTheEncoderWritesThem() throws {
        var generator = SystemRandomNumberGenerator()
        let edges: [Double] = [0, -0.0, 1, -1, 0.5, 1e15, 1e15 + 1, 9_007_199_254_740_991, 9_007_199_254_740_992, 9_007_199_254_740_994,
                               -9_007_199_254_740_991, -9_007_199_254_740_992, 1e16, 1e16 - 2, 1e17, .leastNonzeroMagnitude, 2.2250738585072014e-308,
                               .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1_795_410_000.123, 0.1 + 0.2]
        var values = edges
        for _ in 0..<20_000 {
            values.append(Double(bitPattern: generator.next()))
            values.append(Double(Int64.random(in: -(1 << 54)...(1 << 54), using: &generator)))
            values.append(Double.random(in: -100_000...100_000, using: &generator).rounded(.toNearestOrEven))
            values.append(Double.random(in: 0...86_400, using: &generator))
        }
        for value in values where value.isFinite {
            let expected = try XCTUnwrap(SortedJSONEncoder.numberText(value))
            XCTAssertEqual(written(value), expected, "\(value.bitPattern)")
            if written(value) != expected { return }
        }
        for value in edges { XCTAssertEqual(written(value), try foundation(value)) }
        for value in [Double.nan, .infinity, -.infinity, .signalingNaN] {
            XCTAssertNil(written(value))
            XCTAssertNil(SortedJSONEncoder.numberText(value))
        }
    }
}
