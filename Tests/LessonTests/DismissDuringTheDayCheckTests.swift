import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A dismiss while the day check after a move to a later date is pending (explore, speed-bump 7018, `ios-realistic`):
/// the monitor waits for the new day's threshold at the next whole minute (`speedBumpDayMoved`), and `daily` is the
/// registration that brings it. The dismiss stopped `daily` (the count pauses for the cooldown), so no threshold came
/// and the check lifted every shield although the new day's count was past the threshold. `daily` now counts on until
/// the check: a threshold means the dismiss stands, none means the new day's count is under it.
extension ExploreRegressionTests {
    /// 7018 as shrunk, and four generated days — New York → Sydney on the fall-back day (as 7018), Berlin → Tokyo,
    /// Los Angeles → Tokyo on the spring-forward day (all use after the destination's midnight: its count is past the
    /// threshold at the move), London → Auckland (the use before the destination's midnight: under it). The speed bump
    /// up, the move at a random second, "Dismiss" a few seconds after it, before the next whole minute, then another
    /// picked app and the dismissed one again. Both profiles, side by side: each day holds; under `ios-realistic` the
    /// dismiss came on the shield and, where the new day was past the threshold, `daily`'s threshold came after it (the
    /// case itself: without the fix none comes, and the check lifts every shield).
    func testADismissWhileTheDayCheckIsPendingKeepsTheNewDaysThreshold() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let checks = DayChecks()
        // 7018 as shrunk (41 steps to 5): New York's fall-back day, Snapchat from 14:02:49 UTC (after Sydney's Nov 2 began,
        // 13:00 UTC) past the threshold; a move to Sydney at 14:59:20, "Dismiss" 7 s later; before the fix every shield
        // was lifted at 15:00:00 and Instagram usable 89 s.
        let shrunk = """
              - {after: 1h32m49s, open: Snapchat}
              - {after: 56m31s, timeZone: Australia/Sydney}
              - {after: 7s, press: primary}
              - {after: 5s, open: Speed Bump}
              - {after: 5s, open: Instagram}
            """
        addBothProfiles(DayPendingDismiss(name: "speed-bump-seed7018", start: "2026-11-01T07:30", zone: "America/New_York", seed: 7018,
                              end: "after 1m52s", steps: shrunk, pastThreshold: true), to: checks, configuration)
        // Starts a few minutes after the destination's midnight (over), or 35 minutes before it (under: the move comes
        // 5–30 minutes after it, the shield up since before it).
        let moves = [("2026-11-01T08:05", "America/New_York", "Australia/Sydney", true),
                     ("2026-10-25T16:10", "Europe/Berlin", "Asia/Tokyo", true),
                     ("2026-03-08T08:05", "America/Los_Angeles", "Asia/Tokyo", true),
                     ("2026-11-24T10:25", "Europe/London", "Pacific/Auckland", false)]
        let apps = ["Instagram", "TikTok", "Facebook", "X", "Snapchat"]
        var random = SeededRandom(seed: 7018)
        for (index, (start, zone, destination, pastThreshold)) in moves.enumerated() {
            let app = apps[index % apps.count], other = apps[(index + 1) % apps.count]
            // Every step before the move is on a whole minute, so the move's second is the one drawn here.
            let second = Int.random(in: 0...45, using: &random)
            let steps = ["  - {after: \(Int.random(in: 0...(pastThreshold ? 5 : 15), using: &random))m, open: \(app)}",
                         "  - {after: \(Int.random(in: 35...45, using: &random))m, open: \(app)}",
                         "  - {after: 5m\(second)s, timeZone: \(destination)}",
                         "  - {after: \(Int.random(in: 2...(59 - second), using: &random))s, press: primary}",
                         "  - {after: \(Int.random(in: 1...3, using: &random))m, open: \(other)}",
                         "  - {after: 2m, open: \(app)}"]
            addBothProfiles(DayPendingDismiss(name: "speed-bump-dismiss-during-the-day-check-\(index)", start: start, zone: zone, seed: 7019 + index,
                                  end: "after 50m", steps: steps.joined(separator: "\n"), pastThreshold: pastThreshold), to: checks, configuration)
        }
        try assertDaysHold(checks)
    }

    /// One day of this test under both profiles, with its assertions that the day took the path.
    private func addBothProfiles(_ day: DayPendingDismiss, to checks: DayChecks, _ configuration: String) {
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: \(day.name)
            start: \(day.start)
            timeZone: \(day.zone)
            profile: \(profile)
            seed: \(day.seed)
            end: \(day.end)
            steps:
            \(day.steps)

            """
            let context = "\(day.name), \(profile):\n\(scenario)"
            checks.add(configuration, scenario, expectations: nil, context) { run in
                guard profile == "ios-realistic" else { return }
                Self.assertDismissed(run, context)
                guard day.pastThreshold else { return }
                guard let press = run.events("shield.action.handled").first(where: { $0.bodyValue["decidedBy"]?.stringValue == "action" })?.time else { return }
                // By the whole minute after the move, which the dismiss came before.
                XCTAssertTrue(run.events("deviceactivity.event-did-reach-threshold").contains {
                    $0.time > press && $0.time <= press + 60_000 && $0.bodyValue["activity"]?.stringValue == "speed-bump.daily"
                }, "\(context): no threshold of the new day right after the dismiss")
            }
        }
    }
}

/// A day of `testADismissWhileTheDayCheckIsPendingKeepsTheNewDaysThreshold`: whether the destination's count is past the
/// threshold at the move.
private struct DayPendingDismiss {
    var name, start, zone: String
    var seed: Int
    var end, steps: String
    var pastThreshold: Bool
}
