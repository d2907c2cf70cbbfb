import Configuration
import Foundation
@testable import LockInvariant
import XCTest

/// `Periods` works by merging sorted lists and binary search (a year's check asks it tens of thousands of times);
/// here it is held against the plainest model there is: the set of whole seconds each period covers, on many
/// generated sets of intervals that overlap, touch, nest and include empty ones.
final class PeriodsTests: XCTestCase {
    /// Seconds 0..<span from an arbitrary origin.
    let origin = Date(timeIntervalSince1970: 1_795_000_000)
    let span = 200

    func interval(_ from: Int, _ to: Int) -> DateInterval {
        DateInterval(start: origin.addingTimeInterval(Double(from)), end: origin.addingTimeInterval(Double(to)))
    }

    func randomIntervals(_ random: inout SeededRandom) -> [DateInterval] {
        (0..<Int.random(in: 0...12, using: &random)).map { _ in
            let start = Int.random(in: 0..<span, using: &random)
            return interval(start, min(span, start + Int.random(in: 0...30, using: &random)))
        }
    }

    /// The model: which seconds are covered.
    func seconds(_ intervals: [DateInterval]) -> Set<Int> {
        Set(intervals.flatMap { Int($0.start.timeIntervalSince(origin))..<Int($0.end.timeIntervalSince(origin)) })
    }

    /// The model's canonical intervals: maximal runs of covered seconds (touching ones merged, none empty).
    func runs(_ covered: Set<Int>) -> [DateInterval] {
        var result: [DateInterval] = []
        var second = 0
        while second <= span {
            guard covered.contains(second) else { second += 1; continue }
            let start = second
            while covered.contains(second) { second += 1 }
            result.append(interval(start, second))
        }
        return result
    }

    func testGeneratedSetsAgreeWithTheSecondsTheyCover() {
        var random = SeededRandom(seed: 2026_1124)
        for round in 0..<2_000 {
            let a = randomIntervals(&random), b = randomIntervals(&random)
            var inserted = Periods()
            for piece in a { inserted.insert(piece) }
            let built = Periods(a), other = Periods(b)
            XCTAssertEqual(built.intervals, runs(seconds(a)), "round \(round): built from \(a)")
            XCTAssertEqual(inserted, built, "round \(round): inserted one by one")
            XCTAssertEqual(built.union(other).intervals, runs(seconds(a).union(seconds(b))), "round \(round): union")
            XCTAssertEqual(built.subtracting(other).intervals, runs(seconds(a).subtracting(seconds(b))), "round \(round): subtracting")
            let range = interval(10, span - 10)
            XCTAssertEqual(built.complement(in: range).intervals, runs(seconds([range]).subtracting(seconds(a))), "round \(round): complement")

            let from = origin.addingTimeInterval(Double(Int.random(in: 0...span, using: &random)))
            let to = from.addingTimeInterval(Double(Int.random(in: 0...40, using: &random)))
            XCTAssertEqual(Array(built.overlapping(from: from, to: to)), built.intervals.filter { $0.end > from && $0.start < to },
                           "round \(round): overlapping \(from)…\(to)")
            XCTAssertEqual(Array(built.overlapping(from: from, to: to, orAt: true)), built.intervals.filter { $0.end > from && $0.start <= to },
                           "round \(round): overlapping or at \(from)…\(to)")
        }
    }

    func testTouchingIntervalsMergeAndEmptyOnesAreDropped() {
        var periods = Periods([interval(0, 10), interval(20, 30), interval(5, 5)])
        XCTAssertEqual(periods.intervals, [interval(0, 10), interval(20, 30)])
        periods.insert(interval(10, 20))
        XCTAssertEqual(periods.intervals, [interval(0, 30)])
        XCTAssertEqual(periods.subtracting(Periods([interval(30, 40)])).intervals, [interval(0, 30)], "a cut that only touches cuts nothing")
    }
}
