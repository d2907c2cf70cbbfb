import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A dismiss, then an iOS update, then a revocation and an approval (explore, speed-bump 165). The update regenerates
/// every token and carries the OS's copies over — the store that lets the dismissed app through — but not the App
/// Group, where the delegate recorded the dismissed app's old token. The revocation cleared the shields; the app raised
/// the speed bump again at the approval, passing the old token, which names no app: the dismissed app was shielded
/// for the rest of its pass. The monitor now records the dismissed app in the new tokens at its next callback; when
/// none came between the update and the revocation, nothing on the device names it any more (a ruling, docs/explore.md).
extension ExploreRegressionTests {
    /// Generated days in four zones, both profiles: an app past the threshold, "Dismiss", an iOS update, a revocation
    /// an hour later (the monitor's checks run meanwhile) or a minute later (none does), the approval, and the app
    /// again. The lock invariant holds; with the monitor's checks between, the dismissed app is still let through.
    func testADismissSurvivesAnUpdateAndARevocation() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let places = [("Asia/Tokyo", "2026-11-24"), ("Europe/Berlin", "2026-10-25"), ("America/New_York", "2026-03-08"), ("UTC", "2026-06-30")]
        let apps = ["Instagram", "TikTok", "Facebook", "X", "Snapchat"]
        var random = SeededRandom(seed: 165)
        let checks = DayChecks()
        for day in 0..<8 {
            let (zone, date) = places[day % places.count]
            let app = apps.randomElement(using: &random)!
            let monitorRuns = day % 2 == 0
            let start = String(format: "%@T%02d:%02d", date, Int.random(in: 8...11, using: &random), Int.random(in: 0...59, using: &random))
            let revokedAfter = monitorRuns ? "\(Int.random(in: 50...70, using: &random))m" : "\(Int.random(in: 5...50, using: &random))s"
            let steps = [
                "  - {after: \(Int.random(in: 1...20, using: &random))m, open: \(app)}",
                "  - {after: \(31 + Int.random(in: 0...5, using: &random))m, press: primary}",
                "  - {after: \(Int.random(in: 1...30, using: &random))m, home: true}",
                "  - {after: \(Int.random(in: 1...60, using: &random))s, osUpdate: true}",
                "  - {after: \(revokedAfter), authorize: revoked}",
                "  - {after: \(Int.random(in: 1...90, using: &random))m, authorize: approved}",
                "  - {after: 2m, open: \(app)}",
            ]
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: dismiss-across-an-update-\(day)
                start: \(start)
                timeZone: \(zone)
                profile: \(profile)
                seed: \(165 + day)
                end: after 10m
                steps:
                \(steps.joined(separator: "\n"))

                """
                checks.add(configuration, scenario, expectations: nil, "day \(day), \(profile):\n\(scenario)") { run in
                    guard monitorRuns else { return }
                    let shields = run.events("shield.shown")
                    XCTAssertEqual(shields.count, 1, "only the threshold's shield; the dismissed app is let through after the approval\n\(scenario)")
                }
            }
        }
        try assertDaysHold(checks)
    }
}
