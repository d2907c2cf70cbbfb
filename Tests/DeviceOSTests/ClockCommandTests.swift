import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// `shieldbus clock` through the real broker and the habit lock's plugins on the real clock: "the unlock ends after
/// 30 minutes" is checked by a jump, not by waiting 30 minutes — the app's expiry timer fires at its own instant on
/// the way and the monitor shields the apps again before the clock goes on; time never runs back; every control
/// that could not be done exits non-zero and says why. (In CrashSafetyTests for its habit-lock configuration.)
extension CrashSafetyTests {
    func testTheClockCommandPausesJumpsAndStepsTheBusClock() throws {
        let work = TemporaryDirectory(prefix: "sbclock")
        let journal = work.file("journal.jsonl")
        let broker = try BrokerProcess(configuration: try habitLockConfiguration(), arguments: ["--no-scenario", "--journal", journal])
        defer { broker.stop() }
        func shieldbus(_ arguments: String...) throws -> (status: Int32, output: String) {
            try runToEnd(BuildProducts.path("shieldbus"), arguments + ["--runtime-dir", broker.runtime.path])
        }
        waitUntil("the plugins to be ready (log: \(broker.log(tail: 10)))") { self.journal(journal).contains { $0.topic == "bus.ready" } }

        let shown = try shieldbus("clock")
        XCTAssertEqual(shown.status, 0, shown.output)
        XCTAssertTrue(shown.output.contains(", real, running"), shown.output)

        let paused = try shieldbus("clock", "pause")
        XCTAssertEqual(paused.status, 0, paused.output)
        XCTAssertTrue(paused.output.hasPrefix("paused: ") && paused.output.contains("scaled ×1, paused"), paused.output)
        let first = try shieldbus("clock", "--json"), second = try shieldbus("clock", "--json")
        let standing = try JSONValue(parsing: Array(first.output.utf8))
        XCTAssertEqual(standing["paused"], true, first.output)
        XCTAssertEqual(standing["time"], try JSONValue(parsing: Array(second.output.utf8))["time"], "paused, bus time stands still")

        // Three habits unlock the apps for 30 minutes.
        for habit in ["Read", "Walk", "Stretch"] { XCTAssertEqual(try shieldbus("do", "habit", habit).status, 0) }
        waitUntil("the unlock to start") { self.journal(journal).contains { $0.topic == "app.unlock.started" } }
        let until = try XCTUnwrap(self.journal(journal).first { $0.topic == "app.unlock.started" }?.bodyValue["until"]?.intValue)

        let jump = try shieldbus("clock", "jump", "+31m", "--json")
        XCTAssertEqual(jump.status, 0, jump.output)
        let jumped = try JSONValue(parsing: Array(jump.output.utf8))
        XCTAssertEqual(jumped["paused"], true, "a paused clock stays paused where it jumped to: \(jump.output)")
        XCTAssertGreaterThan(try XCTUnwrap(jumped["time"]?.intValue), until)
        let events = self.journal(journal)
        let fired = try XCTUnwrap(events.first { $0.topic == "app.timer.fired" }, "the unlock's expiry fired on the way")
        XCTAssertEqual(fired.time, until, "at its own instant, not at the jump's end")
        let reblock = try XCTUnwrap(events.first { $0.topic == "managedsettings.changed" && $0.seq > fired.seq
            && $0.bodyValue["shield"]?["applications"]?.arrayValue?.isEmpty == false }, "the monitor shields the apps again")
        let told = try XCTUnwrap(events.last { $0.topic == Topic.clockChanged })
        XCTAssertEqual(told.bodyValue["action"]?.stringValue, "jump")
        XCTAssertLessThan(reblock.seq, told.seq, "the re-block is done before the clock reaches the jump's end")
        XCTAssertEqual(reblock.time, until, "and stamped at the expiry")

        let back = try shieldbus("clock", "jump", "2020-01-01T00:00")
        XCTAssertEqual(back.status, 1, back.output)
        XCTAssertTrue(back.output.contains("never runs backwards"), back.output)
        XCTAssertFalse(back.output.contains("jumped"), back.output)

        let noSpeed = try shieldbus("clock", "speed", "0")
        XCTAssertEqual(noSpeed.status, 64, noSpeed.output)
        XCTAssertTrue(noSpeed.output.contains("Usage: shieldbus clock"), noSpeed.output)
        let badTime = try shieldbus("clock", "jump", "soon")
        XCTAssertEqual(badTime.status, 64, badTime.output)
        XCTAssertTrue(badTime.output.contains("is not a time to jump to"), badTime.output)

        let fast = try shieldbus("clock", "speed", "600")
        XCTAssertEqual(fast.status, 0, fast.output)
        XCTAssertTrue(fast.output.contains("scaled ×600, paused"), "a speed leaves a paused clock paused: \(fast.output)")
        // The speed it runs at already changes nothing: said, exit 1, as a second pause is.
        let same = try shieldbus("clock", "speed", "600")
        XCTAssertEqual(same.status, 1, same.output)
        XCTAssertTrue(same.output.contains("the bus clock runs at ×600 already; nothing changed"), same.output)
        let step = try shieldbus("clock", "step")
        XCTAssertEqual(step.status, 0, step.output)
        XCTAssertTrue(step.output.hasPrefix("stepped to the next timer: ") && step.output.contains("paused"), step.output)
        let resumed = try shieldbus("clock", "resume")
        XCTAssertEqual(resumed.status, 0, resumed.output)
        XCTAssertTrue(resumed.output.contains("scaled ×600, running"), resumed.output)

        let all = self.journal(journal)
        XCTAssertEqual(all.filter { $0.topic == Topic.clockChanged }.compactMap { $0.bodyValue["action"]?.stringValue },
                       ["pause", "jump", "speed", "step", "resume"], "every control that changed the clock is journaled, the refused ones are not")
        XCTAssertEqual(zip(all, all.dropFirst()).first { $0.1.time < $0.0.time }.map { "#\($0.0.seq) → #\($0.1.seq)" }, nil, "bus time never ran back")
    }
}
