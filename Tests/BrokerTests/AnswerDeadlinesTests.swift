@testable import Broker
import XCTest

/// When the OS's reply deadline on a request to a role starts: with the answerer's turn, never while the request waits
/// for it; at once when nobody will take it (`ShieldRequestTurnTests` plays it through the real broker).
final class AnswerDeadlinesTests: XCTestCase {
    private func deadlines(_ corrs: [String]) -> AnswerDeadlines {
        var deadlines = AnswerDeadlines()
        for corr in corrs { deadlines.add(corr: corr, milliseconds: 1_000) {} }
        return deadlines
    }

    func testADeadlineStartsWithItsAnswerersTurnAndNotBefore() {
        var deadlines = deadlines(["os-shield-1"])
        XCTAssertNil(deadlines.sequenced(corr: "os-shield-1", seq: 40, answerer: "shield"))
        XCTAssertEqual(deadlines.start(heldBy: "shield").map(\.corr), [], "not delivered yet: still waiting behind the monitor's turn")
        deadlines.delivered(seq: 39, to: "shield")
        deadlines.delivered(seq: 40, to: "monitor")
        XCTAssertEqual(deadlines.start(heldBy: "shield").map(\.corr), [], "another event, or another plugin, is no hand-over")
        deadlines.delivered(seq: 40, to: "shield")
        XCTAssertEqual(deadlines.start(unreachable: { _ in true }).map(\.corr), [], "its answerer is there")
        XCTAssertEqual(deadlines.start(heldBy: "shield").map(\.corr), ["os-shield-1"])
        XCTAssertTrue(deadlines.isEmpty, "started once")
    }

    func testADeadlineStartsAtOnceWhenNobodyWillAnswer() {
        var deadlines = deadlines(["os-shield-1", "os-action-2"])
        XCTAssertEqual(deadlines.sequenced(corr: "os-action-2", seq: 7, answerer: nil)?.corr, "os-action-2", "no holder of the role")
        XCTAssertNil(deadlines.sequenced(corr: "os-shield-1", seq: 8, answerer: "shield"))
        XCTAssertEqual(deadlines.start(unreachable: { $0 == "shield" }).map(\.corr), [], "the renderer is coming back")
        // Delivered to a process that ended before its turn, and the plugin failed: it will never take it.
        deadlines.delivered(seq: 8, to: "shield")
        XCTAssertEqual(deadlines.start(unreachable: { _ in false }).map(\.corr), ["os-shield-1"])
        XCTAssertTrue(deadlines.isEmpty)
    }

    func testAnAnsweredRequestsDeadlineNeverStarts() {
        var deadlines = deadlines(["os-shield-1", "os-shield-2"])
        XCTAssertTrue(deadlines.remove(corr: "os-shield-1"))
        XCTAssertFalse(deadlines.remove(corr: "os-shield-1"))
        XCTAssertNil(deadlines.sequenced(corr: "os-shield-1", seq: 3, answerer: nil), "a request of the same corr from elsewhere starts nothing")
        XCTAssertNil(deadlines.sequenced(corr: "os-shield-2", seq: 4, answerer: "shield"))
        XCTAssertNil(deadlines.sequenced(corr: "os-shield-2", seq: 5, answerer: nil), "only its first sequencing is the OS's request")
        deadlines.delivered(seq: 4, to: "shield")
        XCTAssertEqual(deadlines.start(heldBy: "shield").map(\.corr), ["os-shield-2"])
    }
}
