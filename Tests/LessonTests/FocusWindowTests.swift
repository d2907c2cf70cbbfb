import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A focus window shields its hours whatever its callbacks do: late, never, early, during a grace pass, or already running at set-up.
/// Each test keeps, in its doc comment, the explore failure that found it.
final class FocusWindowTests: RegressionDayCase {}

extension FocusWindowTests {
    /// explore, focus-window, ios-realistic, seed 104 (docs/explore.md): a device restart makes the app register its
    /// focus windows again, so the OS first ends them (`startMonitoring` ends a running interval); the short-lived
    /// monitor handled one of those stale `intervalDidEnd`s only at 09:00, just after the window had begun — and,
    /// judging the hours by the stale event's own time (07:27), lifted every shield for the whole morning. Fixed in
    /// the SDK: a plugin's clock never goes back, so a callback handled late is judged at the time it is handled.
    func testAStaleFocusIntervalEndHandledLateLiftsNothing() throws {
        let configuration = try ScenarioRun.shippedConfiguration("focus-window")
        let checks = DayChecks()
        for (restart, seed) in [("07:27:23", 104), ("08:05", 7), ("08:59:30", 21)] {
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: focus-window-stale-interval-end
                start: 2026-11-24T07:00
                timeZone: America/New_York
                profile: \(profile)
                seed: \(seed)
                end: after 5m
                steps:
                  - {at: "\(restart)", restart: true}
                  - {at: "09:24", open: TikTok}
                expect:
                  - {at: "09:25", shielded: TikTok}

                """
                checks.add(configuration, scenario, expectations: nil, "restart at \(restart), seed \(seed), \(profile)") { run in
                    if profile == "ios-realistic" {
                        // The day still exercises the stale callbacks: the re-registration ended the focus windows at the restart.
                        let ends = run.events("deviceactivity.interval-did-end").filter { $0.bodyValue["activity"]?.stringValue?.hasPrefix("focus-window.focus_") == true }
                        XCTAssertFalse(ends.isEmpty, "restart at \(restart): no stale intervalDidEnd was delivered")
                    }
                }
            }
        }
        try assertDaysHold(checks)
    }

    /// The checker's note on the action delegate (issue #9): it records one grace pass at a time, so a second pass,
    /// taken on another app while the first runs, overwrote the first — the monitor checked only the second, and the
    /// first app stayed usable for the rest of the focus window (`usable-while-locked`). The monitor now keeps every
    /// pass it granted and re-shields each at its own end. The second pass 10 s, 2 min and 4 min 50 s after the first.
    func testASecondGracePassDoesNotStrandTheFirst() throws {
        let configuration = try ScenarioRun.shippedConfiguration("focus-window")
        let checks = DayChecks()
        for (second, seed) in [("09:30:20", 3), ("09:32", 11), ("09:35", 29)] {
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: focus-window-two-grace-passes
                start: 2026-11-24T08:50
                timeZone: Europe/Berlin
                profile: \(profile)
                seed: \(seed)
                steps:
                  - {at: "09:30", open: Instagram}
                  - {at: "09:30:10", press: secondary}
                  - {at: "\(second)", open: TikTok}
                  - {after: 5s, press: secondary}
                  - {at: "09:45", open: Instagram}
                  - {after: 1m, open: TikTok}
                  - {after: 1m, home: true}
                end: after 5m
                expect:
                  - {at: "09:45:10", shielded: Instagram}
                  - {at: "09:46:10", shielded: TikTok}

                """
                checks.add(configuration, scenario, expectations: 2, "second pass at \(second), seed \(seed), \(profile)") { run in
                    XCTAssertEqual(run.events("app.intent.grace-pass").count, 2, "second pass at \(second), \(profile): both passes were taken")
                }
            }
        }
        try assertDaysHold(checks)
    }

    /// explore, focus-window, seed 403 (`ios-realistic`; also in the CI slice): the far-schedule quirk dropped the
    /// 09:00 start of the morning window ("never") and fired the afternoon one early, and the monitor trusted both —
    /// no shield all morning, a shield before 14:00. It now judges each window callback by the hours in true time and
    /// chains its own checks to the next true boundary. Seeds whose fates are never and early, both profiles.
    func testAFocusWindowWhoseStartNeverFiresIsShieldedAnyway() throws {
        let configuration = try ScenarioRun.shippedConfiguration("focus-window")
        var fates: Set<String> = []
        let checks = DayChecks()
        for seed in [403, 1, 2] {
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: focus-window-start-never-fired
                start: 2026-11-24T06:58
                timeZone: Asia/Tokyo
                profile: \(profile)
                seed: \(seed)
                steps:
                  - {at: "09:30", open: Instagram}
                  - {after: 1m, home: true}
                  - {at: "13:50", open: TikTok}
                  - {after: 1m, home: true}
                  - {at: "14:10", open: YouTube}
                  - {after: 1m, home: true}
                end: after 5m
                expect:
                  - {at: "09:30:10", shielded: Instagram}
                  - {at: "13:50:10", usable: TikTok}
                  - {at: "14:10:10", shielded: YouTube}

                """
                checks.add(configuration, scenario, expectations: 3, "seed \(seed), \(profile)") { run in
                    fates.formUnion(run.events("device.quirk").compactMap { $0.bodyValue["fate"]?.stringValue })
                }
            }
        }
        try assertDaysHold(checks, everyDay: true)
        // The days still exercise the defence: a start that never fires and one that fires early.
        XCTAssertTrue(fates.isSuperset(of: ["never", "early"]), "fates: \(fates)")
    }
}

/// A grace pass across a focus callback (focus-window 3921, issue #9). In focus hours every focus callback re-shields
/// the selection; it used to write the whole selection and then lift each app with a running pass, so the app in use
/// was closed by its shield and opened again at one instant, and the shield was seen when the renderer answered
/// before the second write.
extension FocusWindowTests {
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

/// A focus window already running when the app is set up (docs/explore.md, "What explore's days ask of the
/// products"): the picked apps are shielded at once, not from the next check on.
extension FocusWindowTests {
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
