import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The habit lock's re-checks in a repeated DST hour (issue #9's known weakness, found by hand): a re-check is a
/// one-off schedule in the device clock's wall time, and the OS reads a wall time of the repeated hour as its first
/// pass. Habits done at 02:05 in Berlin's second 02:00–03:00: every re-check (02:20, 02:35, 02:36) was already "over",
/// none came, and under `ios-realistic` (the app's own timer stops while it is suspended) the apps stayed usable past
/// the unlock's end. Such a check now comes as the end warning of an interval that the OS reads as planned.
extension ExploreRegressionTests {
    /// The day as found: Berlin, fall back, habits at 02:05 in the second pass, Instagram open to the end.
    func testAnUnlockEndingInTheSecondPassOfARepeatedHourEndsInTime() throws {
        let configuration = try ScenarioRun.shippedConfiguration("habit-lock")
        let checks = DayChecks()
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: habit-lock-repeated-hour
            start: 2026-10-25T01:30
            timeZone: Europe/Berlin
            profile: \(profile)
            seed: 7
            steps:
              - {after: 1m, open: Habit Lock}
              - {after: 1h34m, habit: Read}
              - {after: 0s, habit: Walk}
              - {after: 0s, habit: Stretch}
              - {after: 20s, open: Instagram}
              - {after: 45m, open: TikTok}
            end: after 5m

            """
            checks.add(configuration, scenario, expectations: nil, profile)
        }
        try assertDaysHold(checks)
    }

    /// Days around it: four zones on their fall-back night, the habits done from 40 minutes before the repeated hour to
    /// its last minutes (so the unlock's re-checks fall in its first pass, its second, or after it), the device
    /// restarted during the unlock on some days, a picked app open through the unlock and another opened after it.
    /// Every day holds the lock invariant under both profiles.
    func testUnlocksAroundARepeatedHourEndInTime() throws {
        let configuration = try ScenarioRun.shippedConfiguration("habit-lock")
        // The zone, the night, and the local time one hour before the repeated hour's first pass begins.
        let nights = [("Europe/Berlin", "2026-10-25T01:00"), ("America/New_York", "2026-11-01T00:00"),
                      ("Australia/Sydney", "2026-04-05T01:00"), ("America/Los_Angeles", "2026-11-01T00:00")]
        let apps = ["Instagram", "TikTok", "YouTube", "Reddit", "X"]
        var random = SeededRandom(seed: 0xD57_0FF)
        let checks = DayChecks()
        for day in 0..<8 {
            let (zone, start) = nights[day % nights.count]
            let habits = Int.random(in: 20...175, using: &random) * 60 + Int.random(in: 0...59, using: &random)  // from the start
            var steps = ["  - {after: 1m, open: Habit Lock}",
                         "  - {after: \(habits - 60)s, habit: Read}",
                         "  - {after: 0s, habit: Walk}",
                         "  - {after: 0s, habit: Stretch}",
                         "  - {after: 20s, open: \(apps.randomElement(using: &random)!)}"]
            let after = Int.random(in: 1...10, using: &random) * 60
            if Bool.random(using: &random) {
                let restart = Int.random(in: 60...(28 * 60), using: &random)
                steps.append("  - {after: \(restart - 20)s, restart: true}")
                steps.append("  - {after: 10s, open: \(apps.randomElement(using: &random)!)}")
                steps.append("  - {after: \(30 * 60 + after - restart - 10)s, open: \(apps.randomElement(using: &random)!)}")
            } else {
                steps.append("  - {after: \(30 * 60 + after - 20)s, open: \(apps.randomElement(using: &random)!)}")
            }
            steps.append("  - {after: 2m, home: true}")
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: habit-lock-repeated-hour-\(day)
                start: \(start)
                timeZone: \(zone)
                profile: \(profile)
                seed: \(day + 1)
                end: after 5m
                steps:
                \(steps.joined(separator: "\n"))

                """
                checks.add(configuration, scenario, expectations: nil, "day \(day), \(profile):\n\(scenario)")
            }
        }
        try assertDaysHold(checks)
    }
}
