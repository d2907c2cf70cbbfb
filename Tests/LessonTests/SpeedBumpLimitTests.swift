import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The speed bump when DeviceActivity's 20-activity limit is full (issue #9's known weakness, found by hand): its
/// re-checks up to the true midnight were refused, so with the device clock set back nothing ended the speed bump at
/// midnight (the daily interval starts at the device's midnight, hours later). The app now registers the reserve slot
/// for the speed bump too, and the monitor moves a refused check into it.
extension ExploreRegressionTests {
    /// The day as found: the limit filled at set-up, the clock set 3 h back, the threshold at 22:30; Instagram at 00:05
    /// is still in the device's day (shielded), at 03:05 in the next (usable).
    func testASpeedBumpWithTheActivityLimitFullEndsAtMidnight() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let checks = DayChecks()
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: speed-bump-limit-full
            start: 2026-11-23T21:00
            timeZone: Europe/Berlin
            profile: \(profile)
            seed: 3
            steps:
              - {at: "21:01", open: Speed Bump}
              - {after: 1m, home: true}
              - {at: "21:05", fillActivityLimit: true}
              - {at: "21:10", setClock: "-3h"}
              - {at: "22:00", open: Instagram}
              - {after: 35m, home: true}
              - {at: "day 2 00:05", open: Instagram}
              - {after: 1m, home: true}
              - {at: "day 2 03:05", open: Instagram}
              - {after: 5m, home: true}
            end: after 5m
            expect:
              - {at: "22:31", shielded: Instagram}
              - {at: "day 2 00:05:30", shielded: Instagram}
              - {at: "day 2 03:06", usable: Instagram}

            """
            checks.add(configuration, scenario, expectations: 3, profile) { run in
                XCTAssertFalse(run.events("x.monitor.recheck-refused").isEmpty, "\(profile): no re-check was refused, so the day tests nothing")
            }
        }
        try assertDaysHold(checks)
    }

    /// Days around it: four zones, the limit filled at set-up or after the first checks, the clock set 1–6 h back (or
    /// left alone), 31–40 minutes of picked apps from 21:40–23:00, and picked apps opened after the true midnight.
    /// Every day holds the lock invariant under both profiles, and re-checks were refused on most of them.
    func testSpeedBumpDaysWithTheActivityLimitFullHold() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let apps = ["Instagram", "TikTok", "Facebook", "X", "Snapchat"]
        let zones = ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Tokyo"]
        var random = SeededRandom(seed: 0x5B_F011)
        var refusedRuns = 0
        let checks = DayChecks()
        for day in 0..<8 {
            let shift = Int.random(in: 0...6, using: &random)
            let fillFirst = Bool.random(using: &random)
            var steps = ["  - {at: \"21:01\", open: Speed Bump}", "  - {after: 1m, home: true}"]
            if fillFirst { steps.append("  - {at: \"21:05\", fillActivityLimit: true}") }
            if shift > 0 { steps.append("  - {at: \"21:10\", setClock: \"-\(shift)h\"}") }
            if !fillFirst { steps.append("  - {at: \"21:30\", fillActivityLimit: true}") }
            let use = Int.random(in: (31 * 60)...(40 * 60), using: &random)
            let opened = 21 * 60 + Int.random(in: 40...120, using: &random)  // minutes of the day: 21:40–23:00
            steps.append("  - {at: \"\(String(format: "%02d:%02d", opened / 60, opened % 60))\", open: \(apps.randomElement(using: &random)!)}")
            steps.append("  - {after: \(use)s, home: true}")
            steps.append("  - {at: \"day 2 00:\(String(format: "%02d", Int.random(in: 2...40, using: &random)))\", open: \(apps.randomElement(using: &random)!)}")
            steps.append("  - {after: 3m, home: true}")
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-limit-full-\(day)
                start: 2026-11-23T21:00
                timeZone: \(zones[day % zones.count])
                profile: \(profile)
                seed: \(day + 11)
                end: after 5m
                steps:
                \(steps.joined(separator: "\n"))

                """
                checks.add(configuration, scenario, expectations: nil, "day \(day), \(profile):\n\(scenario)") { run in
                    if !run.events("x.monitor.recheck-refused").isEmpty { refusedRuns += 1 }
                }
            }
        }
        try assertDaysHold(checks, everyDay: true)
        XCTAssertGreaterThanOrEqual(refusedRuns, 6, "the days exercise refused re-checks")
    }
}
