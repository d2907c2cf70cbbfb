import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// `device.authorization: ask` in virtual time, through the real broker and the reference plugins: the companion
/// app's request is answered at once with `notDetermined`, and the person's answer — a later scenario step — comes as
/// `familycontrols.authorization.changed`. Held for the person, the reply held the app's turn and with it virtual
/// time, which the answer needed to move: the wall-clock `ack-timeout` broke the deadlock, and the journal depended
/// on the processes' timing (two plays of one day, one broke the lock invariant).
final class AuthorizationAskTests: XCTestCase {
    /// Days around the answer: how long the person takes, what they answer, an open before and after it, each
    /// profile; every day played twice side by side.
    func testTheAppIsToldNotDeterminedAtOnceAndHearsThePersonsAnswerLater() throws {
        let configuration = try ScenarioRun.shippedConfiguration("habit-lock")
            .replacingOccurrences(of: "authorization: approve", with: "authorization: ask")
        XCTAssertTrue(configuration.contains("authorization: ask"), "the shipped habit-lock configuration has no authorization policy to change")
        var generator = SeededRandom(seed: 20261124)
        var days: [(answer: String, profile: String, scenario: String)] = []
        for index in 0..<6 {
            let answer = index % 2 == 0 ? "approved" : "denied"
            let profile = index % 3 == 0 ? "ios-realistic" : "faithful"
            let wait = Int.random(in: 5...2_400, using: &generator)  // seconds the prompt waits for the person
            let scenario = """
            name: authorization-ask-\(index)
            start: 2026-11-23T06:30
            timeZone: Europe/Berlin
            steps:
              - {at: "06:45", open: Habit Lock}
              - {after: \(wait)s, authorize: \(answer)}
              - {after: 1m, home: true}
              - {at: "07:50", open: Instagram}
              - {after: 20s, \(answer == "approved" ? "press: primary" : "home: true")}
            end: 2026-11-23T08:30

            """
            days.append((answer, profile, scenario))
        }
        let plays = days.flatMap { day in Array(repeating: (configuration, day.scenario, ["--profile", day.profile]), count: 2) }
        let runs = try ScenarioRun.runAll(plays, timeoutSeconds: 120)
        for (index, day) in days.enumerated() {
            let run = runs[index * 2], name = "day \(index) (\(day.answer), \(day.profile))"
            XCTAssertEqual(run.exitStatus, 0, "\(name): \(run.output.suffix(1500)) \(run.errors.suffix(1500))")
            XCTAssertEqual(run.events("bus.error").compactMap { $0.bodyValue["code"]?.stringValue }, [], name)
            let replies = run.events("familycontrols.authorization.reply")
            XCTAssertEqual(replies.first?.bodyValue["value"]?["status"]?.stringValue, "notDetermined", "\(name): \(replies.map(\.bodyValue))")
            let changed = try XCTUnwrap(run.events("familycontrols.authorization.changed").first, "\(name): the app never heard the answer")
            XCTAssertEqual(changed.bodyValue["status"]?.stringValue, day.answer, name)
            XCTAssertLessThan(try XCTUnwrap(replies.first).seq, changed.seq, name)
            let shown = run.events("shield.shown")
            if day.answer == "approved" {
                XCTAssertEqual(shown.count, 1, "\(name): the approved app shields Instagram at 07:50")
                XCTAssertGreaterThan(shown.first?.seq ?? 0, changed.seq, name)
            } else {
                XCTAssertEqual(shown.count, 0, "\(name): nothing is shielded without authorization")
            }
            XCTAssertEqual(run.journalBytes, runs[index * 2 + 1].journalBytes, "\(name): the second play's journal differs")
        }
    }
}
