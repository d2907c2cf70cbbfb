import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The OS judges a schedule on the device clock it runs on (focus-window 743, found by explore seeds 1–1000). With the
/// device clock set 6 hours back on the eve of New York's spring-forward, the monitor asked for its next focus check
/// at 02:50 tonight; the OS measured that time of day from true time (08:06), found it on tomorrow's date, inside the
/// skipped hour, and refused the 15-minute check as 5 minutes long — no check ran after it, and the focus hours were
/// never shielded.
extension ExploreRegressionTests {
    /// Generated days: four zones on the eve of their spring-forward and on ordinary days, the clock set back or forward
    /// by a seeded number of hours before the focus hours, a picked app opened in them. Both profiles hold.
    func testSchedulesAreJudgedOnTheDeviceClock() throws {
        let configuration = try ScenarioRun.shippedConfiguration("focus-window")
        let places = [("America/New_York", "2026-03-07"), ("Europe/Berlin", "2026-03-28"), ("America/Los_Angeles", "2026-03-07"),
                      ("Asia/Tokyo", "2026-11-24")]
        let apps = ["Facebook", "Instagram", "TikTok", "X"]
        var random = SeededRandom(seed: 743)
        let checks = DayChecks()
        for day in 0..<6 {
            let (zone, date) = places[day % places.count]
            let start = String(format: "%@T%02d:%02d", date, Int.random(in: 5...7, using: &random), Int.random(in: 0...59, using: &random))
            let hours = [-7, -6, -5, -3, 2][Int.random(in: 0...4, using: &random)]
            let steps = ["  - {after: \(Int.random(in: 30...80, using: &random))m, setClock: \"\(hours > 0 ? "+" : "")\(hours)h\"}",
                         "  - {at: \"09:\(10 + Int.random(in: 0...40, using: &random))\", open: \(apps[day % apps.count])}"]
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: validation-on-the-device-clock-\(day)
                start: \(start)
                timeZone: \(zone)
                profile: \(profile)
                seed: \(743 + day)
                end: after 6h
                steps:
                \(steps.joined(separator: "\n"))

                """
                checks.add(configuration, scenario, expectations: nil, "day \(day), \(profile):\n\(scenario)")
            }
        }
        try assertDaysHold(checks)
    }
}
