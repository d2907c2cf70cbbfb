@testable import Broker
import Configuration
import XCTest

/// Timers come due in time order and, within one instant, in the order they were scheduled — whether they wait in
/// the heap or among those scheduled in time order — and a cancelled one never comes.
final class TimerQueueTests: XCTestCase {
    func testTimersComeDueInTimeThenSchedulingOrderWhereverTheyWait() {
        for seed in UInt64(1)...200 {
            var generator = SeededRandom(seed: seed)
            var queue = TimerQueue()
            var expected: [(time: Int64, id: UInt64)] = []
            var cancelled = Set<UInt64>()
            var fired: [UInt64] = []
            var now: Int64 = 0
            // A scenario's steps first, in time order, as `ScenarioPlayer` plans them; then timers that come and go.
            var stepTime: Int64 = 0
            for _ in 0..<Int.random(in: 0...30, using: &generator) {
                stepTime += Int64.random(in: 0...5, using: &generator)
                let id = queue.schedule(at: stepTime) {}
                expected.append((stepTime, id))
            }
            for _ in 0..<Int.random(in: 1...60, using: &generator) {
                switch Int.random(in: 0...3, using: &generator) {
                case 0, 1:
                    let time = now + Int64.random(in: 0...40, using: &generator)
                    let id = queue.schedule(at: time) {}
                    expected.append((time, id))
                case 2:
                    if let victim = expected.filter({ !cancelled.contains($0.id) && !fired.contains($0.id) }).randomElement(using: &generator) {
                        queue.cancel(victim.id)
                        cancelled.insert(victim.id)
                    }
                default:
                    now += Int64.random(in: 0...10, using: &generator)
                    while let entry = queue.popDue(atOrBefore: now) { fired.append(entry.id) }
                }
            }
            while let next = queue.nextTime() {
                XCTAssertGreaterThanOrEqual(next, now, "seed \(seed): a timer due earlier was left behind")
                now = next
                while let entry = queue.popDue(atOrBefore: now) { fired.append(entry.id) }
            }
            XCTAssertTrue(queue.isEmpty, "seed \(seed): every timer fired or cancelled")
            let order = expected.filter { !cancelled.contains($0.id) }.sorted { ($0.time, $0.id) < ($1.time, $1.id) }.map(\.id)
            // Fired while time advanced in steps: each pop took the earliest, so the whole sequence is the sorted one.
            XCTAssertEqual(fired, order, "seed \(seed)")
        }
    }

    func testAPostponementMovesEveryTimerAlikeAndKeepsTheirOrder() {
        var queue = TimerQueue()
        let first = queue.schedule(at: 10) {}
        let second = queue.schedule(at: 20) {}
        let early = queue.schedule(at: 5) {}
        queue.postpone(by: 100)
        XCTAssertEqual(queue.nextTime(), 105)
        XCTAssertNil(queue.popDue(atOrBefore: 104))
        XCTAssertEqual([105, 110, 120].compactMap { queue.popDue(atOrBefore: $0)?.id }, [early, first, second])
        XCTAssertNil(queue.nextTime())
    }
}
