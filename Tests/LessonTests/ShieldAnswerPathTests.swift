import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// The reference renderer answers a shield request before its re-block check (two synchronous OS calls), and
/// commits `lastShieldDayCheck` once a day, not once a shield — through the real broker and plugin processes.
final class ShieldAnswerPathTests: XCTestCase {
    /// Several shielded opens on each of several days (the lock is on: no habits done).
    func testTheAnswerComesBeforeTheRecheckAndTheDayIsRecordedOncePerDay() throws {
        let days = ["2026-11-23", "2026-11-24", "2026-11-25"]
        let times = ["08:10", "11:00", "15:30", "23:50"]
        var steps = ""
        for day in days {
            for time in times { steps += "  - {at: \"\(day)T\(time)\", open: Instagram}\n  - {after: 1m, home: true}\n" }
        }
        let lesson = LessonTests.Lesson(flaw: "none", steps: steps)
        let config = LessonTests.configuration(lesson, naive: false)
        let run = try ScenarioRun.run(configuration: config, scenario: "name: answer-path\nstart: 2026-11-23T08:00\nsteps:\n" + steps)
        XCTAssertEqual(run.exitStatus, 0, run.errors)

        let requests = run.events("shield.configuration.request")
        XCTAssertEqual(requests.count, days.count * times.count, "one shield request per open")
        for request in requests {
            let turn = run.journal.filter { $0.seq > request.seq && $0.source == "shield" }
            let reply = try XCTUnwrap(turn.first { $0.topic == "shield.configuration.reply" && $0.corr == request.corr }, "no reply to \(request.corr ?? "?")")
            // The re-block check's first OS call for this request comes after the answer, not before it.
            let recheck = try XCTUnwrap(turn.first { $0.topic == "deviceactivity.events.request" }, "no re-block check after request \(request.seq)")
            XCTAssertLessThan(reply.seq, recheck.seq, "request \(request.seq): the renderer asked the OS before answering")
        }

        let dayChecks = run.events("state.changed").filter { $0.bodyValue["key"]?.stringValue == "lastShieldDayCheck" }
        let berlin = DateFormatter()
        berlin.dateFormat = "yyyy-MM-dd"
        berlin.timeZone = TimeZone(identifier: "Europe/Berlin")
        let checkedDays = dayChecks.map { berlin.string(from: Date(timeIntervalSince1970: Double($0.time) / 1000)) }
        XCTAssertEqual(checkedDays, days, "one commit per day, on its first shield")
    }
}
