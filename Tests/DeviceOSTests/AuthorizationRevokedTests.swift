import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The person revokes FamilyControls authorization in Settings and allows it again later: the OS cleared the app's
/// shields and stopped its schedules at the revocation, so the companion app must set everything up anew at the
/// approval. The reference app did so only on its first approval, and every lock stayed down for the rest of the day;
/// and the speed bump's threshold, registered again, counted from the approval, forgiving the day's use before the
/// revocation (explore: speed-bump 3, 6, 19). Generated days for each reference product, under both profiles, through the real broker and plugins.
final class AuthorizationRevokedTests: XCTestCase {
    static let selectedApps = ["habit-lock": ["Instagram", "TikTok"], "focus-window": ["Instagram", "YouTube", "Reddit"],
                               "speed-bump": ["Instagram", "TikTok", "Snapchat"]]

    /// A day: the product's apps used for a while before the revocation on some days (a speed bump's threshold may
    /// be reached then), the revocation between 07:00 and 15:00, the approval 1 minute to 3 hours later, then the
    /// apps used several times (the checker judges each stretch against the product's lock).
    static func day(product: String, index: Int, using generator: inout SeededRandom) -> String {
        func clock(_ minutes: Int) -> String { String(format: "%02d:%02d", minutes / 60, minutes % 60) }
        let apps = selectedApps[product]!
        var steps: [String] = []
        func use(at minute: Int, forMinutes minutes: Int) {
            let app = apps[Int.random(in: 0..<apps.count, using: &generator)]
            steps += ["  - {at: \"\(clock(minute))\", open: \(app)}", "  - {after: \(minutes)m, home: true}"]
        }
        var at = 6 * 60 + 45
        for _ in 0..<Int.random(in: 0...2, using: &generator) {
            let minutes = Int.random(in: 10...40, using: &generator)
            use(at: at, forMinutes: minutes)
            at += minutes + Int.random(in: 1...20, using: &generator)
        }
        let revoked = max(at, Int.random(in: 7 * 60...15 * 60, using: &generator))
        let approved = revoked + Int.random(in: 1...180, using: &generator)
        steps += ["  - {at: \"\(clock(revoked))\", authorize: revoked}", "  - {at: \"\(clock(approved))\", authorize: approved}"]
        at = approved + Int.random(in: 1...20, using: &generator)
        for _ in 0..<3 where at < 22 * 60 {
            let minutes = Int.random(in: 2...45, using: &generator)
            use(at: at, forMinutes: minutes)
            at += minutes + Int.random(in: 5...90, using: &generator)
        }
        return """
        name: revoked-\(product)-\(index)
        start: 2026-11-23T06:30
        timeZone: Europe/Berlin
        steps:
        \(steps.joined(separator: "\n"))
        end: 2026-11-23T23:30

        """
    }

    func testAnApprovalAfterARevocationSetsTheProductUpAgain() throws {
        var generator = SeededRandom(seed: 20261124)
        var days: [(configuration: String, scenario: String, arguments: [String])] = []
        var names: [String] = []
        for product in ["habit-lock", "focus-window", "speed-bump"] {
            let configuration = try ScenarioRun.shippedConfiguration(product)
            for index in 0..<6 {
                let profile = index % 2 == 0 ? "faithful" : "ios-realistic"
                days.append((configuration, Self.day(product: product, index: index, using: &generator), ["--profile", profile]))
                names.append("\(product) day \(index) (\(profile))")
            }
        }
        let runs = try ScenarioRun.runAll(days, timeoutSeconds: 120)
        for (index, run) in runs.enumerated() {
            let name = names[index]
            XCTAssertEqual(run.exitStatus, 0, "\(name): \(run.output.split(separator: "\n").filter { $0.contains("lock invariant") || $0.hasPrefix("    - ") }.joined(separator: "\n"))\n\(days[index].scenario)")
            XCTAssertEqual(run.events("bus.error").compactMap { $0.bodyValue["code"]?.stringValue }, [], name)
            let statuses = run.events("familycontrols.authorization.changed").compactMap { $0.bodyValue["status"]?.stringValue }
            XCTAssertEqual(Array(statuses.suffix(2)), ["denied", "approved"], name)
            // Set up again: the product's schedules are started anew after the approval.
            let approval = try XCTUnwrap(run.events("familycontrols.authorization.changed").last, name)
            XCTAssertTrue(run.journal.contains { $0.seq > approval.seq && $0.topic == "deviceactivity.start-monitoring.request" },
                          "\(name): no schedule was started again after the approval")
        }
    }
}
