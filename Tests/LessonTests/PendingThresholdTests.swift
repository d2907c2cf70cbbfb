import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A threshold reached seconds before the device clock or time zone changes (explore speed-bump 2049, `ios-realistic`):
/// `whole-minute-callbacks` holds the callback to the next whole minute, and the change dropped it with the activity's
/// planned timers. Set back to the same date, the device's day goes on and so does its lock, but no speed bump came:
/// Snapchat and TikTok usable for 55 minutes past the threshold. The OS now delivers a callback already due while the
/// device's day goes on, and drops it only when the change begins a later date (that day's lock is over).
extension ExploreRegressionTests {
    /// 2049 as shrunk (51 steps to 5): 30 minutes of picked apps reached at 11:00:28, the clock set back 11 hours at
    /// 11:00:57 (the device shows 00:00:57, the same date), Snapchat left open.
    func testAThresholdDueWhenTheClockIsSetBackRaisesTheSpeedBump() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: speed-bump-seed2049
            start: 2026-10-24T07:29
            timeZone: Europe/Berlin
            profile: \(profile)
            seed: 2049
            end: after 5m
            steps:
              - {after: 2h56m57s, open: Facebook}
              - {after: 6m48s, close: null}
              - {after: 4m31s, open: Facebook}
              - {after: 3m39s, open: Snapchat}
              - {after: 20m2s, setClock: "-11h"}

            """
            let run = try assertDayHolds(configuration, scenario, expectations: nil, profile)
            let changed = try XCTUnwrap(run.events("device.clock-changed").first?.time)
            let thresholds = run.events("deviceactivity.event-did-reach-threshold").map(\.time)
            XCTAssertEqual(thresholds.count, 1, "\(profile): \(thresholds)")
            if profile == "ios-realistic" {
                // The case itself: the callback went out after the change (at its whole minute), not before it.
                XCTAssertTrue(thresholds.allSatisfy { $0 > changed }, "\(profile): the threshold came before the clock change")
            }
        }
    }

    /// Days around it: four zones, the threshold reached at a random second, the clock set or the zone changed before
    /// its whole minute — to the same date, an earlier one or a later one (whose day has counted less, or enough) —
    /// then another picked app opened. Both profiles; each day holds the invariant.
    func testThresholdsDueWhenTheClockOrZoneChangesHold() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let days: [(zone: String, change: String)] = [
            ("Europe/Berlin", "setClock: \"-3h\""),              // the same date
            ("Asia/Tokyo", "setClock: \"-11h\""),                // the date before
            ("America/New_York", "setClock: \"+2h\""),           // the same date, forward
            ("Australia/Sydney", "setClock: \"+14h30m\""),       // the next date, whose day has counted 10 minutes
            ("Europe/Berlin", "setClock: \"+15h\""),             // the next date, whose day has counted 40 minutes
            ("Europe/Berlin", "timeZone: America/Los_Angeles"),  // the same date, begun earlier
            ("Asia/Tokyo", "timeZone: Pacific/Honolulu"),        // the date before
            ("Australia/Sydney", "setClock: \"-9h40m\""),        // the same date, just after its midnight (as 2049)
            ("America/New_York", "setClock: \"-9h20m\""),        // the same date, whose day has counted 20 minutes
            ("Asia/Tokyo", "setClock: \"-9h35m\""),              // the same date, whose day has counted 5 minutes
        ]
        let apps = ["TikTok", "Facebook", "X", "Snapchat"]
        var random = SeededRandom(seed: 2049)
        for (index, day) in days.enumerated() {
            let second = Int.random(in: 0...40, using: &random)
            let beforeTheMinute = Int.random(in: 1...(59 - second), using: &random)
            let steps = ["  - {at: \"09:10:\(String(format: "%02d", second))\", open: \(apps[index % apps.count])}",
                         "  - {after: 30m\(beforeTheMinute)s, \(day.change)}",
                         "  - {after: 3m, open: Instagram}",
                         "  - {after: 4m, home: true}"]
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-threshold-due-at-a-change-\(index)
                start: 2026-11-24T08:00
                timeZone: \(day.zone)
                profile: \(profile)
                seed: \(2049 + index)
                end: after 20m
                steps:
                \(steps.joined(separator: "\n"))

                """
                try assertDayHolds(configuration, scenario, expectations: nil, "day \(index), \(profile):\n\(scenario)")
            }
        }
    }
}
