import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The habit lock when DeviceActivity's 20-activity limit is full (issue #9, found by hand while explore learned to
/// fill it): the OS refuses every new re-check, the app's own expiry timer stops while it is suspended, and the apps
/// stayed usable past the unlock under `ios-realistic`. The monitor now puts a refused re-check in the reserve slot the
/// app registers at set-up, and says so (`x.<monitor>.recheck-refused`).
extension ExploreRegressionTests {
    /// The shrunk day: habits Read and Walk, the limit filled, then Stretch; the app in the background all along.
    func testAnUnlockWithTheActivityLimitFullEndsInTime() throws {
        let configuration = try ScenarioRun.shippedConfiguration("habit-lock")
        let checks = DayChecks()
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: limit-filled-before-unlock
            start: 2026-11-24T09:00
            timeZone: Europe/Berlin
            profile: \(profile)
            seed: 7
            steps:
              - {at: "09:00", open: Habit Lock}
              - {at: "09:05", habit: Read}
              - {after: 0s, habit: Walk}
              - {after: 1m, fillActivityLimit: true}
              - {after: 1m, habit: Stretch}
              - {after: 20s, open: Instagram}
              - {after: 40m, open: Instagram}
            end: after 5m
            expect:
              - {at: "09:08", usable: Instagram}
              - {at: "09:40", shielded: Instagram}

            """
            checks.add(configuration, scenario, expectations: 2, profile) { run in
                let refusals = run.events("deviceactivity.start-monitoring.reply").filter { $0.bodyValue["error"]?["code"]?.stringValue == "excessive-activities" }
                XCTAssertFalse(refusals.isEmpty, "\(profile): the OS refused no re-check, so the day tests nothing")
                XCTAssertFalse(run.events("x.monitor.recheck-refused").isEmpty, "\(profile): the refusal was not surfaced")
            }
        }
        try assertDaysHold(checks)
    }

    /// Days generated around the shrunk one: the limit filled at a random moment before the habits, between them or
    /// while the unlock runs; a fourth habit during the unlock; a device restart on some days. Every day, under both
    /// profiles, holds the lock invariant, and the apps opened after the unlock's end are shielded.
    func testDaysWithTheActivityLimitFilledAroundAnUnlockHold() throws {
        let configuration = try ScenarioRun.shippedConfiguration("habit-lock")
        var random = SeededRandom(seed: 0x20_AC71)
        var refusedDays = 0
        let checks = DayChecks()
        for day in 0..<10 {
            var steps: [(second: Int, action: String)] = [(0, "open: Habit Lock")]
            let read = Int.random(in: 5...90, using: &random) * 60 + Int.random(in: 0...59, using: &random)
            let walk = read + Int.random(in: 0...1200, using: &random)
            let stretch = walk + Int.random(in: 0...1200, using: &random)
            let end = stretch + 30 * 60
            steps += [(read, "habit: Read"), (walk, "habit: Walk"), (stretch, "habit: Stretch"), (stretch + 20, "open: Instagram"),
                      (Int.random(in: 60...(end - 60), using: &random), "fillActivityLimit: true"),
                      (end + 90, "open: Instagram"), (end + 6 * 60, "open: TikTok")]
            if Bool.random(using: &random) { steps.append((Int.random(in: stretch...(end - 60), using: &random), "habit: Journal")) }
            if Bool.random(using: &random) { steps.append((Int.random(in: read...(end - 60), using: &random), "restart: true")) }
            steps.sort { $0.second < $1.second }
            func clock(_ second: Int) -> String { String(format: "%02d:%02d:%02d", 8 + second / 3600, second / 60 % 60, second % 60) }
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: limit-filled-around-an-unlock-\(day)
                start: 2026-11-24T08:00
                timeZone: Europe/Berlin
                profile: \(profile)
                seed: \(day + 1)
                steps:
                \(steps.map { "  - {at: \"\(clock($0.second))\", \($0.action)}" }.joined(separator: "\n"))
                end: after 5m
                expect:
                  - {at: "\(clock(end + 2 * 60))", shielded: Instagram}
                  - {at: "\(clock(end + 6 * 60 + 30))", shielded: TikTok}

                """
                checks.add(configuration, scenario, expectations: 2, "day \(day), \(profile):\n\(scenario)") { run in
                    if profile == "faithful", !run.events("x.monitor.recheck-refused").isEmpty { refusedDays += 1 }
                }
            }
        }
        try assertDaysHold(checks, everyDay: true)
        XCTAssertGreaterThan(refusedDays, 4, "too few generated days had a re-check refused to test the reserve slot")
    }
}
