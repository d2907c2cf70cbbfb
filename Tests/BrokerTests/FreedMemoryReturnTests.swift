@testable import Broker
import XCTest

/// The broker gives freed heap back after a burst — a session ended, deliveries dropped — at most once a second,
/// for a few seconds, never while nothing was freed, and less and less often while the signs never stop.
final class FreedMemoryReturnTests: XCTestCase {
    func testTheHeapIsTrimmedOnlyInTheWindowAfterASignAndAtMostOnceASecond() {
        var memory = FreedMemoryReturn()
        for second in 0..<10 { memory.observe(sessionsEnded: 0, dropped: 0, now: Int64(second) * 1_000) }
        XCTAssertEqual(memory.trims, 0, "sessions only came: nothing was freed")

        memory.observe(sessionsEnded: 2, dropped: 0, now: 10_000)  // two sessions ended
        XCTAssertEqual(memory.trims, 1, "trimmed at once")
        memory.observe(sessionsEnded: 2, dropped: 0, now: 10_400)
        XCTAssertEqual(memory.trims, 1, "not again within a second")
        for now in stride(from: Int64(11_000), through: 20_000, by: 500) { memory.observe(sessionsEnded: 2, dropped: 0, now: now) }
        XCTAssertEqual(memory.trims, 6, "once a second for the five seconds after the sign, then no more")

        memory.observe(sessionsEnded: 2, dropped: 40, now: 30_000)  // deliveries dropped for a full queue
        XCTAssertEqual(memory.trims, 7)
    }

    /// A session that ends while another comes is a sign too: the count of ended sessions says so, the number of
    /// sessions would not.
    func testASessionEndingWhileAnotherComesIsASign() {
        var memory = FreedMemoryReturn()
        memory.observe(sessionsEnded: 0, dropped: 0, now: 0)
        memory.observe(sessionsEnded: 1, dropped: 0, now: 1_000)
        XCTAssertEqual(memory.trims, 1)
    }

    /// Signs every 100 ms for two minutes (a flood dropped, endless churn): the time between trims doubles up to
    /// 16 s instead of a trim every second; after 30 s of quiet, the next burst is trimmed at once and a second later.
    func testUnderSignsThatNeverStopTrimsBackOff() {
        var memory = FreedMemoryReturn()
        var dropped: UInt64 = 0
        for now in stride(from: Int64(0), to: 120_000, by: 100) {
            dropped += 1
            memory.observe(sessionsEnded: 0, dropped: dropped, now: now)
        }
        // 0, 1, 3, 7, 15, 31, then every 16 s: 47, 63, 79, 95, 111.
        XCTAssertEqual(memory.trims, 11, "backed off, not 120 trims")
        let before = memory.trims
        for now in stride(from: Int64(120_000), to: 160_000, by: 500) { memory.observe(sessionsEnded: 0, dropped: dropped, now: now) }
        memory.observe(sessionsEnded: 1, dropped: dropped, now: 160_000)
        memory.observe(sessionsEnded: 1, dropped: dropped, now: 161_000)
        XCTAssertEqual(memory.trims - before, 2, "the new burst at once and a second later")
    }

    /// Churn slower than the window (a session ending every 6 s) is one streak: the trims back off, not about one a
    /// second for ever.
    func testSlowChurnBacksOffToo() {
        var memory = FreedMemoryReturn()
        var ended: UInt64 = 0
        for now in stride(from: Int64(0), to: 120_000, by: 500) {
            if now % 6_000 == 0 { ended += 1 }
            memory.observe(sessionsEnded: ended, dropped: 0, now: now)
        }
        XCTAssertLessThan(memory.trims, 30, "backed off under a sign every 6 s for two minutes, not 120 trims")
    }
}
