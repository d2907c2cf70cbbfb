import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// A focus window already running when the app is set up (docs/explore.md, "Found, and left for others"): the
/// picked apps are shielded at once, not from the next check on.
extension ExploreRegressionTests {
    /// The device starts inside focus hours (the app set up as it starts), or the person approves the app inside
    /// them (declined at launch): a picked app opened a minute later meets the shield, under both profiles. Main's
    /// app set itself up only at launch: approved later, it shielded nothing until it was launched again.
    func testAFocusWindowAlreadyRunningWhenTheAppIsSetUpIsShieldedAtOnce() throws {
        let approved = try ScenarioRun.shippedConfiguration("focus-window")
        let declined = approved.replacingOccurrences(of: "authorization: approve", with: "authorization: deny")
        XCTAssertNotEqual(declined, approved, "the shipped configuration no longer approves by itself")
        // The app set up as the device starts (10:17, 16:40), or approved by the person at 14:04:10 after declining
        // at launch; TikTok, picked, opened a minute after.
        let days: [(configuration: String, start: String, steps: [String], shieldedAt: String)] = [
            (approved, "10:17", ["  - {at: \"10:18\", open: TikTok}"], "10:18:10"),
            (approved, "16:40", ["  - {at: \"16:41\", open: TikTok}"], "16:41:10"),
            (declined, "14:03", ["  - {at: \"14:04\", open: Focus Window}", "  - {after: 10s, authorize: approved}",
                                 "  - {at: \"14:05\", home: true}", "  - {at: \"14:06\", open: TikTok}"], "14:06:10"),
        ]
        for (configuration, start, steps, shieldedAt) in days {
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: focus-window-set-up-in-focus-hours
                start: 2026-11-24T\(start)
                timeZone: Europe/Berlin
                profile: \(profile)
                seed: 3
                end: after 5m
                steps:
                \(steps.joined(separator: "\n"))
                  - {after: 1m, home: true}
                expect:
                  - {at: "\(shieldedAt)", shielded: TikTok}

                """
                try assertDayHolds(configuration, scenario, expectations: 1, "set up at \(start), \(profile):\n\(scenario)")
            }
        }
    }
}
