import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// Screen Time authorization revoked and approved again: what is due is shielded at once, and an unlock keeps its end.
/// Each test keeps, in its doc comment, the explore failure that found it.
final class RevocationAndApprovalTests: RegressionDayCase {}

/// An approval after a revocation (habit-lock 117 and 147, found by explore seeds 1–1000). A revocation takes the
/// app's shields and every schedule with it. Approved again in the middle of an unlock, the app registered its daily
/// schedules but nothing re-blocked at the unlock's end (117: YouTube usable for hours after it); approved with
/// DeviceActivity's 20 activities taken, the set-up stopped at the first refused registration, before the synchronous
/// check that shields what is due (147: reddit.com usable 38 minutes).
extension RevocationAndApprovalTests {
    /// Generated days in four zones (a spring-forward and a fall-back day among them), both profiles: the day's habits
    /// unlock the apps, the authorization is revoked at a seeded moment, the app sometimes force-quit or the activity
    /// limit filled meanwhile, and approved again before or after the unlock's end. The lock invariant holds.
    func testAnApprovalAfterARevocationShieldsWhatIsDueAndKeepsTheUnlocksEnd() throws {
        let configuration = try ScenarioRun.shippedConfiguration("habit-lock")
        let places = [("America/New_York", "2026-03-08"), ("Europe/Berlin", "2026-10-25"), ("Asia/Tokyo", "2026-11-24"),
                      ("Australia/Sydney", "2026-10-04")]
        let meanwhile = ["forceQuit: Habit Lock", "fillActivityLimit: true", "open: YouTube", "visit: {url: \"https://www.reddit.com/\"}"]
        var random = SeededRandom(seed: 117)
        let checks = DayChecks()
        for day in 0..<8 {
            let (zone, date) = places[day % places.count]
            let start = String(format: "%@T%02d:%02d", date, Int.random(in: 7...10, using: &random), Int.random(in: 0...59, using: &random))
            var steps = HeavyUserDays.habits.map { "  - {after: \(Int.random(in: 5...40, using: &random))m, habit: \($0)}" }
            // Revoked during the 30-minute unlock; approved again before its end or after it. With the activity limit
            // filled meanwhile, after it: an unlock still running then has no slot left for the check at its end, and
            // under ios-realistic a backgrounded app's timer does not fire either (an open question, docs/explore.md).
            let revokedAt = Int.random(in: 2...20, using: &random), fills = day % meanwhile.count == 1
            steps.append("  - {after: \(revokedAt)m, authorize: revoked}")
            steps.append("  - {after: 1m, \(meanwhile[day % meanwhile.count])}")
            steps.append(fills ? "  - {after: \(30 - revokedAt + Int.random(in: 1...20, using: &random))m, authorize: approved}"
                               : "  - {after: \(Int.random(in: 5...60, using: &random))s, authorize: approved}")
            steps.append("  - {after: \(Int.random(in: 1...40, using: &random))m, open: Instagram}")
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: approval-after-revocation-\(day)
                start: \(start)
                timeZone: \(zone)
                profile: \(profile)
                seed: \(117 + day)
                end: after 3h
                steps:
                \(steps.joined(separator: "\n"))

                """
                checks.add(configuration, scenario, expectations: nil, "day \(day), \(profile):\n\(scenario)")
            }
        }
        try assertDaysHold(checks)
    }

    /// The app's other activities cannot fill DeviceActivity's limit while the app is unauthorized (iOS refuses
    /// `startMonitoring` then), and a revocation stops them with the product's own (focus-window 147: revoked, the
    /// limit filled, approved — no place was left for the focus hours, and X stayed usable through them). Approved
    /// again, the product registers its schedules and the next focus hours are shielded; a limit filled after the
    /// approval still leaves the product the places it took.
    func testTheLimitFillsOnlyWhileTheAppMayMonitor() throws {
        let configuration = try ScenarioRun.shippedConfiguration("focus-window")
        var scenarios: [(configuration: String, scenario: String, arguments: [String])] = []
        for profile in ["faithful", "ios-realistic"] {
            for fillAfterApproval in [false, true] {
                let meanwhile = ["  - {after: 10m, authorize: revoked}", "  - {after: 5m, fillActivityLimit: true}", "  - {after: 3s, authorize: approved}"]
                let steps = fillAfterApproval ? [meanwhile[0], meanwhile[2], "  - {after: 1m, fillActivityLimit: true}"] : meanwhile
                scenarios.append((configuration, """
                    name: limit-and-authorization
                    start: 2026-11-24T07:30
                    timeZone: Europe/Berlin
                    profile: \(profile)
                    seed: 147
                    end: after 3h
                    steps:
                    \(steps.joined(separator: "\n"))
                      - {at: "09:30", open: X}
                    expect:
                      - {at: "09:31", shielded: X}

                    """, []))
            }
        }
        for (run, day) in zip(try ScenarioRun.runAll(scenarios), scenarios) {
            XCTAssertEqual(run.exitStatus, 0, "\(day.scenario)\n\(run.errors.suffix(1200))")
            XCTAssertTrue(run.errors.contains("lock invariant    held"), "\(day.scenario)\n\(run.errors.suffix(600))")
            let refused = run.events("deviceactivity.start-monitoring.reply").filter { $0.bodyValue["ok"]?.boolValue == false }
            XCTAssertTrue(refused.isEmpty, "\(day.scenario): \(refused.map(\.bodyValue))")
        }
    }
}
