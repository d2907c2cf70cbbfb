import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The focus window's checks through DST days (issue #9). The monitor chains `focus-window.focusCheck` no further
/// apart than 44 minutes, each a one-off schedule on the device clock.
/// - The day after a spring-forward (focus-window 12, 34, 41, 107, 123): a check in 02:00–03:00 has its previous
///   day's start and end both in the skipped hour; the OS took the previous day's start with that day's end, a 23-hour
///   interval containing now, started it at once, and the monitor planned the same check again until `ack-timeout`.
/// - A fall-back day with the clock set back (focus-window 85): a check the device clock shows in the repeated hour's
///   second pass was read as the first, already over, so the window's end at 12:00 came a day late.
extension ExploreRegressionTests {
    /// Days that begin the evening before the day after a spring-forward in four zones, picked apps opened through
    /// the night and into the morning's focus hours: no loop, and every day holds, under both profiles.
    func testFocusChecksTheDayAfterASpringForwardDoNotLoop() throws {
        let configuration = try ScenarioRun.shippedConfiguration("focus-window")
        let evenings = [("Australia/Sydney", "2026-10-04"), ("Europe/London", "2026-03-29"),
                        ("America/New_York", "2026-03-08"), ("Europe/Berlin", "2026-03-29")]
        let apps = ["Instagram", "TikTok", "YouTube", "Reddit", "X"]
        var random = SeededRandom(seed: 0x5_1000)
        let checks = DayChecks()
        for day in 0..<6 {
            let (zone, date) = evenings[day % evenings.count]
            let start = String(format: "%@T%02d:%02d", date, Int.random(in: 22...23, using: &random), Int.random(in: 0...59, using: &random))
            var steps: [String] = []
            for _ in 0..<4 {
                steps.append("  - {after: \(Int.random(in: 40...150, using: &random))m\(Int.random(in: 0...59, using: &random))s, open: \(apps.randomElement(using: &random)!)}")
                steps.append("  - {after: \(Int.random(in: 2...20, using: &random))m, home: true}")
            }
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: focus-window-after-spring-forward-\(day)
                start: \(start)
                timeZone: \(zone)
                profile: \(profile)
                seed: \(day + 12)
                end: after 30m
                steps:
                \(steps.joined(separator: "\n"))

                """
                checks.add(configuration, scenario, expectations: nil, "day \(day), \(profile):\n\(scenario)") { run in
                    let plans = run.events("deviceactivity.start-monitoring.request").filter { $0.bodyValue["activity"]?.stringValue == "focus-window.focusCheck" }
                    XCTAssertLessThan(plans.count, 60, "day \(day), \(profile): a check every 44 minutes or at a boundary, no loop")
                }
            }
        }
        try assertDaysHold(checks)
    }

    /// Focus-window 85 and days around it: four zones' fall-back days, the device clock set 9–11 h back in the morning
    /// (so it shows the repeated hour around the true 12:00, the focus window's end), a picked app opened before 12:00
    /// and another after it: shielded until 12:00, usable after, under both profiles.
    func testFocusWindowEndsWhenTheDeviceClockShowsARepeatedHour() throws {
        let configuration = try ScenarioRun.shippedConfiguration("focus-window")
        let days = [("America/New_York", "2026-11-01"), ("Europe/Berlin", "2026-10-25"),
                    ("America/Los_Angeles", "2026-11-01"), ("Europe/London", "2026-10-25")]
        let apps = ["Instagram", "TikTok", "YouTube", "Reddit", "X"]
        var random = SeededRandom(seed: 0xFA11_85)
        let checks = DayChecks()
        for day in 0..<8 {
            let (zone, date) = days[day % days.count]
            let setClock = Int.random(in: 5...150, using: &random)  // minutes after 08:10
            let back = Int.random(in: 9 * 60...11 * 60, using: &random)
            let before = Int.random(in: 3 * 60 + 5...3 * 60 + 45, using: &random)  // minutes from 08:10 to the first app: 11:15–11:55
            let after = Int.random(in: 2...40, using: &random)
            let steps = ["  - {after: \(setClock)m, setClock: \"-\(back / 60)h\(back % 60)m\"}",
                         "  - {after: \(before - setClock)m, open: \(apps.randomElement(using: &random)!)}",
                         "  - {after: \(230 - before + after)m, open: \(apps.randomElement(using: &random)!)}",
                         "  - {after: 5m, home: true}"]
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: focus-window-repeated-hour-\(day)
                start: \(date)T08:10
                timeZone: \(zone)
                profile: \(profile)
                seed: \(day + 85)
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
