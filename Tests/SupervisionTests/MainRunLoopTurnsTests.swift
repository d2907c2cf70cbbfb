// Tests of when a plugin's thread turns the main run loop between events.
import CProcessControl
import Foundation
@testable import ShieldBusSDK
import XCTest

final class MainRunLoopTurnsTests: XCTestCase {
    /// A turn is due whenever work waits on the main queue — a block, `@MainActor` work, from this thread or another —
    /// and otherwise only an interval after the last: what was queued while an event was handled runs before the next.
    func testATurnIsDueWhenWorkWaitsOnTheMainQueueOrAnIntervalPassed() throws {
        try XCTSkipUnless(Thread.isMainThread, "the main queue runs on the main thread's run loop")
        for _ in 0..<10 where shieldbus_main_queue_is_signalled() != 0 { _ = RunLoop.main.run(mode: .default, before: .distantPast) }
        XCTAssertEqual(shieldbus_main_queue_is_signalled(), 0, "nothing left queued by the test's host")
        var turns = MainRunLoopTurns()
        XCTAssertTrue(turns.isDue(at: 1_000), "the first look turns")
        XCTAssertFalse(turns.isDue(at: 2_000), "nothing queued, within the interval")

        let ran = Ran()
        DispatchQueue.main.async { ran.append("block") }
        XCTAssertTrue(turns.isDue(at: 3_000), "a block waits on the main queue")
        _ = RunLoop.main.run(mode: .default, before: .distantPast)
        XCTAssertEqual(ran.names, ["block"])
        XCTAssertFalse(turns.isDue(at: 4_000), "the turn ran it")

        let queued = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            DispatchQueue.main.async { ran.append("from another thread") }
            queued.signal()
        }
        XCTAssertEqual(queued.wait(timeout: .now() + 10), .success)
        XCTAssertTrue(turns.isDue(at: 5_000), "a block queued by another thread")
        _ = RunLoop.main.run(mode: .default, before: .distantPast)
        XCTAssertFalse(turns.isDue(at: 6_000))

        Task { @MainActor in ran.append("main actor") }
        XCTAssertTrue(turns.isDue(at: 7_000), "@MainActor work")
        _ = RunLoop.main.run(mode: .default, before: .distantPast)
        XCTAssertEqual(ran.names, ["block", "from another thread", "main actor"])
        XCTAssertFalse(turns.isDue(at: 8_000))
        XCTAssertTrue(turns.isDue(at: 7_000 + MainRunLoopTurns.interval), "an interval after the last turn, for what signals nothing")
        XCTAssertFalse(turns.isDue(at: 7_001 + MainRunLoopTurns.interval))
        XCTAssertTrue(turns.isDue(at: 7_002 + MainRunLoopTurns.interval, force: true), "before a short-lived extension's end")
    }

    /// A thread's run loop is found made only once something made it, and asking makes none: a launch that queues
    /// nothing and schedules nothing on the main run loop never makes it (`MainRunLoopTurns.mayRunAnything`).
    func testARunLoopIsFoundMadeOnlyOnceMade() {
        let seen = Seen()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            seen.before = shieldbus_run_loop_exists()
            seen.askedAgain = shieldbus_run_loop_exists()
            _ = RunLoop.current
            seen.after = shieldbus_run_loop_exists()
            done.signal()
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual([seen.before, seen.askedAgain, seen.after], [0, 0, 1])
        _ = RunLoop.main
        if Thread.isMainThread {
            XCTAssertEqual(shieldbus_run_loop_exists(), 1, "the main run loop, once made")
            XCTAssertTrue(MainRunLoopTurns.mayRunAnything, "what is scheduled on a made main run loop signals nothing: a turn may run it")
        }
    }
}

/// What a thread found (written by it alone, read after it signalled).
private final class Seen: @unchecked Sendable {
    var before: Int32 = -1, askedAgain: Int32 = -1, after: Int32 = -1
}

/// What the main queue ran, in order (appended on the main thread alone).
private final class Ran: @unchecked Sendable {
    private(set) var names: [String] = []
    func append(_ name: String) { names.append(name) }
}
