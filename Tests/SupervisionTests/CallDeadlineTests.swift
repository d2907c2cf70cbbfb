@testable import ShieldBusSDK
import XCTest

/// A call's deadline: wall time, less the broker's silence past a heartbeat interval when it excuses it (virtual time).
final class CallDeadlineTests: XCTestCase {
    func testWithoutExcusesTheDeadlineIsWallTime() {
        var deadline = CallDeadline(milliseconds: 200, now: 1_000, excusingBrokerSilence: false, lastHeard: 1_000)
        XCTAssertEqual(deadline.remaining(now: 1_150, lastHeard: 1_000, heartbeat: 100), 50)
        XCTAssertEqual(deadline.remaining(now: 1_500, lastHeard: 1_000, heartbeat: 100), -300, "the broker's silence counts")
    }

    func testTheBrokersSilencePastAHeartbeatIsExcused() {
        var deadline = CallDeadline(milliseconds: 500, now: 1_000, excusingBrokerSilence: true, lastHeard: 1_000)
        XCTAssertEqual(deadline.remaining(now: 1_100, lastHeard: 1_100, heartbeat: 100), 400, "heard at each heartbeat: wall time")
        XCTAssertEqual(deadline.remaining(now: 1_900, lastHeard: 1_100, heartbeat: 100), 300, "silent since: only a heartbeat of it counts")
        XCTAssertEqual(deadline.remaining(now: 2_000, lastHeard: 2_000, heartbeat: 100), 300, "the silence that ended stays excused")
        XCTAssertEqual(deadline.remaining(now: 2_200, lastHeard: 2_100, heartbeat: 100), 100, "then time counts again")
    }

    /// A broker silent for good is not waited for past the busy limit from the call's start (a minute for a 500 ms
    /// call), silent all along or heard again after it.
    func testTheBrokersSilenceIsExcusedOnlyUpToTheBusyLimit() {
        var silent = CallDeadline(milliseconds: 500, now: 0, excusingBrokerSilence: true, lastHeard: 0)
        XCTAssertGreaterThan(silent.remaining(now: 59_000, lastHeard: 0, heartbeat: 100), 0, "within the busy limit")
        XCTAssertEqual(silent.remaining(now: 61_000, lastHeard: 0, heartbeat: 100), -1_000, "past it: given up")
        var heardLate = CallDeadline(milliseconds: 500, now: 0, excusingBrokerSilence: true, lastHeard: 0)
        XCTAssertEqual(heardLate.remaining(now: 120_000, lastHeard: 119_000, heartbeat: 100), -60_000, "a silence that ended past it is not excused either")
    }
}
