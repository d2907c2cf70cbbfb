@testable import Broker
import XCTest

/// The broker gives freed heap back after a burst — a session ended, deliveries dropped — at most once a second,
/// for a few seconds, and never while nothing was freed.
final class FreedMemoryReturnTests: XCTestCase {
    func testTheHeapIsTrimmedOnlyInTheWindowAfterASignAndAtMostOnceASecond() {
        var memory = FreedMemoryReturn()
        for second in 0..<10 { memory.observe(sessions: 5 + second, dropped: 0, now: Int64(second) * 1_000) }
        XCTAssertEqual(memory.trims, 0, "sessions only came: nothing was freed")

        memory.observe(sessions: 3, dropped: 0, now: 10_000)  // two sessions ended
        XCTAssertEqual(memory.trims, 1, "trimmed at once")
        memory.observe(sessions: 3, dropped: 0, now: 10_400)
        XCTAssertEqual(memory.trims, 1, "not again within a second")
        for now in stride(from: Int64(11_000), through: 20_000, by: 500) { memory.observe(sessions: 3, dropped: 0, now: now) }
        XCTAssertEqual(memory.trims, 6, "once a second for the five seconds after the sign, then no more")

        memory.observe(sessions: 3, dropped: 40, now: 30_000)  // deliveries dropped for a full queue
        XCTAssertEqual(memory.trims, 7)
    }
}
