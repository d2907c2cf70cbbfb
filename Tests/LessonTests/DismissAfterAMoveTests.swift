import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A dismiss on a shield still up from the day before (explore, speed-bump 6167, `ios-realistic`): a zone change to a
/// later date starts a new device day, and the monitor lifts the speed bump only at the next whole minute, when no
/// threshold came for that day. "Dismiss" pressed in those seconds is a dismiss like any other: the app goes through
/// and the count pauses for the cooldown, and starts again from its end. The checker counted such a day from its start,
/// ignoring a dismiss before the day's own lock, and took the app's use in the cooldown for a lock 15 minutes early.
extension ExploreRegressionTests {
    /// 6167 as shrunk (44 steps to 5): Sydney's fall-back day, Facebook past the threshold, on to New York (the date
    /// before) and London (Sydney's date again, a later one than New York's), "Dismiss" 6 s after the move.
    func testADismissOnTheShieldOfTheDayBeforePausesTheNewDaysCount() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let checks = DayChecks()
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: speed-bump-seed6167
            start: 2026-04-05T06:22
            timeZone: Australia/Sydney
            profile: \(profile)
            seed: 6167
            end: after 37m54s
            steps:
              - {after: 3m14s, open: Facebook}
              - {after: 3h9m27s, open: Facebook}
              - {after: 5m21s, timeZone: America/New_York}
              - {after: 5m31s, timeZone: Europe/London}
              - {after: 6s, press: primary}

            """
            checks.add(configuration, scenario, expectations: nil, profile) { run in
                if profile == "ios-realistic" { Self.assertDismissed(run, profile) }
            }
        }
        try assertDaysHold(checks)
    }

    /// Days around it: four moves to a later date (the found one, and New York, Berlin and Los Angeles on their DST
    /// days to Tokyo, Auckland and Sydney), the threshold reached shortly before, the move 5–50 minutes after the
    /// destination's midnight at a random second, "Dismiss" a few seconds after it, before the next whole minute; then
    /// the app in use for 55 minutes. Under both profiles each day holds the invariant and the app is shielded again
    /// after the pass.
    func testADismissRightAfterAMoveToALaterDateHolds() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        // The starts put the last move 5–30 minutes after the destination's midnight.
        let moves = [("2026-04-05T08:20", "Australia/Sydney", ["America/New_York", "Europe/London"]),
                     ("2026-11-01T09:25", "America/New_York", ["Asia/Tokyo"]),
                     ("2026-10-25T11:25", "Europe/Berlin", ["Pacific/Auckland"]),
                     ("2026-03-08T05:25", "America/Los_Angeles", ["Australia/Sydney"])]
        let apps = ["Instagram", "TikTok", "Facebook", "X", "Snapchat"]
        var random = SeededRandom(seed: 6167)
        let checks = DayChecks()
        for (day, (start, zone, moveTo)) in moves.enumerated() {
            let app = apps.randomElement(using: &random)!
            // Every step before the move is on a whole minute, so the move's second is the one drawn here.
            let second = Int.random(in: 0...45, using: &random)
            var steps = ["  - {after: \(Int.random(in: 0...15, using: &random))m, open: \(app)}",
                         "  - {after: \(Int.random(in: 35...45, using: &random))m, open: \(app)}"]
            steps += moveTo.dropLast().map { "  - {after: 5m, timeZone: \($0)}" }
            steps += ["  - {after: 5m\(second)s, timeZone: \(moveTo.last!)}",
                      "  - {after: \(Int.random(in: 2...(59 - second), using: &random))s, press: primary}"]
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-dismiss-after-a-move-\(day)
                start: \(start)
                timeZone: \(zone)
                profile: \(profile)
                seed: \(6167 + day)
                end: after 55m
                steps:
                \(steps.joined(separator: "\n"))

                """
                checks.add(configuration, scenario, expectations: nil, "day \(day), \(profile):\n\(scenario)") { run in
                    if profile == "ios-realistic" { Self.assertDismissed(run, "day \(day), \(profile)") }
                    let press = run.events("scenario.step").last?.time ?? .max
                    XCTAssertTrue(run.events("activity.app.closed").contains { $0.time > press && $0.bodyValue["reason"]?.stringValue == "shielded" },
                                  "day \(day), \(profile): the app was not shielded again after the pass")
                }
            }
        }
        try assertDaysHold(checks)
    }

    /// The day took the path this is about: the shield of the day before was still up, and the action delegate answered
    /// "Dismiss" on it.
    static func assertDismissed(_ run: ScenarioRun, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(run.events("shield.action.handled").contains { $0.bodyValue["decidedBy"]?.stringValue == "action" },
                      "\(context): no dismiss on the day before's shield", file: file, line: line)
    }
}
