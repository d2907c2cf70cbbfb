import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A grace pass across a focus callback (focus-window 3921, issue #9). In focus hours every focus callback re-shields
/// the selection; it used to write the whole selection and then lift each app with a running pass, so the app in use
/// was closed by its shield and opened again at one instant, and the shield was seen when the renderer answered
/// before the second write.
extension ExploreRegressionTests {
    /// Focus-window 3921 reduced by hand from 56 steps to three: New York's fall-back day, YouTube passed at 14:56:22,
    /// the companion app force-quit at 15:00:51 (relaunched, it registers its schedules again and the OS calls the
    /// monitor back). Then generated days around it: four zones (two fall-back days, a spring-forward, an ordinary
    /// day), the pass in either focus window, and during it a force-quit or relaunch of the app, a device restart or the
    /// device clock set (once into Berlin's repeated hour). Both profiles: the passed app is never in a shield written
    /// during its pass, and the lock invariant holds.
    func testAFocusCallbackDuringAPassLeavesThePassedAppAlone() throws {
        let configuration = try ScenarioRun.shippedConfiguration("focus-window")
        var days: [(zone: String, start: String, app: String, steps: [String])] = [
            ("America/New_York", "2026-11-01T14:50", "YouTube",
             ["  - {at: \"14:56:13\", open: YouTube}", "  - {after: 9s, press: secondary}", "  - {after: 4m29s, forceQuit: Focus Window}"]),
            ("Europe/Berlin", "2026-10-25T10:15", "TikTok",
             ["  - {after: 5m, open: TikTok}", "  - {after: 20s, press: secondary}", "  - {after: 1m10s, setClock: \"-8h\"}"]),
        ]
        let places = [("America/New_York", "2026-11-01"), ("Europe/Berlin", "2026-10-25"), ("Australia/Sydney", "2026-10-04"),
                      ("Asia/Tokyo", "2026-11-24")]
        let apps = ["Instagram", "TikTok", "YouTube", "Reddit", "X", "Facebook"]
        let callbacks = ["forceQuit: Focus Window", "open: Focus Window", "restart: true", "setClock: \"+1h\"", "setClock: \"-2h\""]
        var random = SeededRandom(seed: 3921)
        for day in 0..<4 {
            let (zone, date) = places[day % places.count]
            let start = String(format: "%@T%02d:%02d", date, [9, 10, 14, 15].randomElement(using: &random)!, Int.random(in: 5...40, using: &random))
            let app = apps.randomElement(using: &random)!
            var steps = ["  - {after: \(Int.random(in: 2...15, using: &random))m, open: \(app)}",
                         "  - {after: \(Int.random(in: 5...40, using: &random))s, press: secondary}"]
            var left = 280  // seconds of the pass left for the callbacks
            for _ in 0..<Int.random(in: 1...2, using: &random) {
                let after = Int.random(in: 20...(left / 2), using: &random)
                left -= after
                steps.append("  - {after: \(after)s, \(callbacks.randomElement(using: &random)!)}")
            }
            days.append((zone, start, app, steps))
        }
        let checks = DayChecks()
        for (index, day) in days.enumerated() {
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: focus-window-pass-across-a-callback-\(index)
                start: \(day.start)
                timeZone: \(day.zone)
                profile: \(profile)
                seed: \(3921 + index)
                end: after 10m
                steps:
                \(day.steps.joined(separator: "\n"))

                """
                let context = "day \(index), \(profile):\n\(scenario)"
                checks.add(configuration, scenario, expectations: nil, context) { run in
                    try Self.assertPassedAppStaysUnshielded(run, app: day.app, context)
                }
            }
        }
        try assertDaysHold(checks)
    }

    /// The app's pass (the secondary button on its shield, 5 minutes) was granted, the monitor wrote the shields again
    /// during it (so the day tests the defence), and no shield written after the grant and before its end holds the app.
    static func assertPassedAppStaysUnshielded(_ run: ScenarioRun, app: String, _ context: String,
                                               file: StaticString = #filePath, line: UInt = #line) throws {
        let grant = try XCTUnwrap(run.events("shield.action.handled").first {
            $0.bodyValue["action"]?.stringValue == "secondaryButtonPressed" && $0.bodyValue["target"]?.stringValue == app
        }, "\(context): no pass on \(app)", file: file, line: line)
        let end = grant.time + 5 * 60 * 1000
        let tokens = Set(run.journal.compactMap { envelope -> String? in
            let application = envelope.bodyValue["application"]
            return application?["localizedDisplayName"]?.stringValue == app ? application?["token"]?.stringValue : nil
        })
        XCTAssertFalse(tokens.isEmpty, "\(context): \(app)'s token", file: file, line: line)
        let during = run.journal.filter { $0.seq > grant.seq && $0.time > grant.time && $0.time < end }
        let rewrites = during.filter { $0.topic == "managedsettings.read.request" && $0.source == "monitor" }
        XCTAssertFalse(rewrites.isEmpty, "\(context): the monitor re-shielded nothing during the pass", file: file, line: line)
        let shielding = run.journal.filter { $0.seq > grant.seq && $0.time < end && $0.topic == "managedsettings.changed" }.filter { change in
            let shielded = change.bodyValue["shield"]?["applications"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return !tokens.isDisjoint(with: shielded)
        }
        XCTAssertEqual(shielding.map(\.seq), [], "\(context): \(app) shielded during its pass", file: file, line: line)
    }
}
