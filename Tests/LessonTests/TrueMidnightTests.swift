import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The speed bump's count after the true midnight when the device clock is set later (explore, two-products seed 1004,
/// both profiles): the threshold reached in the evening, midnight passed with the clock untouched, then at 01:03 the
/// clock set 9 h forward — the device's day had begun at 15:00 the day before, the OS counted its use since its
/// registration the day before, raised yesterday's threshold again, and the monitor shielded X for two hours of a day
/// with no use. The monitor now registers the threshold again at every true midnight, so the OS counts from there.
extension ExploreRegressionTests {
    /// Days around it: four zones, 31–60 minutes of picked apps in the evening, the clock set 3–12 h forward or 1–5 h
    /// back (to the day before on the device) 5–120 minutes after the true midnight, a picked app used after it for
    /// less than the threshold. Each day, under both profiles, holds the lock invariant: nothing is shielded after it.
    func testAClockSetAfterTheTrueMidnightDoesNotBringBackYesterdaysSpeedBump() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let apps = ["Instagram", "TikTok", "Facebook", "X", "Snapchat"]
        let zones = ["Asia/Tokyo", "Europe/Berlin", "America/New_York", "Australia/Sydney"]
        var random = SeededRandom(seed: 0x1004_A1D)
        let checks = DayChecks()
        for day in 0..<8 {
            let opened = 20 * 60 + Int.random(in: 0...90, using: &random)  // minutes of the day
            let use = Int.random(in: 31...60, using: &random)
            let changeAfterMidnight = Int.random(in: 5...120, using: &random)
            let forward = day == 0 || Bool.random(using: &random)
            // Set back, the device must show the day before: more hours back than have passed since midnight.
            let shift = forward ? "+\(Int.random(in: 3...12, using: &random))h" : "-\(changeAfterMidnight / 60 + Int.random(in: 1...4, using: &random))h"
            let steps = ["  - {at: \"19:01\", open: Speed Bump}", "  - {after: 1m, home: true}",
                         "  - {at: \"\(String(format: "%02d:%02d", opened / 60, opened % 60))\", open: \(apps.randomElement(using: &random)!)}",
                         "  - {after: \(use)m, home: true}",
                         "  - {at: \"day 2 \(String(format: "%02d:%02d", changeAfterMidnight / 60, changeAfterMidnight % 60))\", setClock: \"\(shift)\"}",
                         "  - {after: \(Int.random(in: 5...40, using: &random))m, open: \(apps.randomElement(using: &random)!)}",
                         "  - {after: \(Int.random(in: 3...20, using: &random))m, home: true}"]
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-clock-set-after-midnight-\(day)
                start: 2026-11-24T19:00
                timeZone: \(zones[day % zones.count])
                profile: \(profile)
                seed: \(1004 + day)
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
