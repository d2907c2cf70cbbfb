import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// Focus windows at the edges of DST transitions (issue #26). A window inside a repeated hour was shielded in its
/// first pass only: the monitor asked the schedule's interval, which reads a repeated wall time as its first pass,
/// and planned its next check by a calendar's "next" wall time, which skips the second. A window starting at or just
/// after a jump that is not a whole hour at 02:00 (Australia/Lord_Howe's 30 minutes, Pacific/Chatham's at 02:45) was
/// left unshielded for up to 15 minutes: Foundation's `nextDate(…, .nextTime)` on Linux gave the next day's time.
extension ExploreRegressionTests {
    /// Fall-back nights with a window in the repeated hour, and spring-forward nights with a window at the jump's end,
    /// in six zones; picked apps opened in both passes and around the jump, under both profiles: every day holds.
    func testFocusWindowsInRepeatedHoursAndAtOddJumps() throws {
        let shipped = try ScenarioRun.shippedConfiguration("focus-window")
        // (zone, the evening before, window start, window end, minutes after the start at which an app is opened)
        let nights: [(String, String, String, String, [Int])] = [
            ("Europe/Berlin", "2026-10-25T01:30", "02:00", "02:30", [35, 55, 95, 100, 125]),  // the window's second pass: 01:00–01:30Z
            ("America/New_York", "2026-11-01T00:40", "01:10", "01:40", [35, 75, 95, 125]),
            ("Australia/Lord_Howe", "2026-04-05T01:10", "01:30", "01:50", [25, 55, 85]),     // back 30 minutes at 02:00
            ("Australia/Lord_Howe", "2026-10-04T01:40", "02:30", "03:00", [21, 25, 40]),     // 02:00 → 02:30: the window starts at the jump
            ("Pacific/Chatham", "2026-09-27T02:20", "03:45", "04:15", [26, 30, 50]),         // 02:45 → 03:45
            ("America/Santiago", "2026-09-05T23:30", "00:00", "00:45", [31, 40, 70]),         // midnight is skipped
        ]
        let apps = ["Instagram", "TikTok", "YouTube", "Reddit", "X"]
        var random = SeededRandom(seed: 0x26_0001)
        let checks = DayChecks()
        for (night, (zone, start, from, to, opens)) in nights.enumerated() {
            // The plugins' focus hours and the promise's windows, in step.
            let configuration = shipped.replacingOccurrences(of: #"focusHours: [{start: "09:00", end: "12:00"}, {start: "14:00", end: "17:00"}]"#,
                                                             with: "focusHours: [{start: \"\(from)\", end: \"\(to)\"}]")
                .replacingOccurrences(of: "      - {start: \"09:00\", end: \"12:00\"}\n      - {start: \"14:00\", end: \"17:00\"}",
                                      with: "      - {start: \"\(from)\", end: \"\(to)\"}")
            XCTAssertNotEqual(configuration, shipped, "the shipped focus hours were replaced")
            XCTAssertFalse(configuration.contains("\"14:00\""), "the promise's windows were replaced too")
            var steps: [String] = [], elapsed = 0
            for minute in opens {
                steps.append("  - {after: \(minute - elapsed)m, open: \(apps.randomElement(using: &random)!)}")
                steps.append("  - {after: 3m, home: true}")
                elapsed = minute + 3
            }
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: focus-window-transition-\(night)
                start: \(start)
                timeZone: \(zone)
                profile: \(profile)
                seed: \(night + 26)
                end: after 20m
                steps:
                \(steps.joined(separator: "\n"))

                """
                checks.add(configuration, scenario, expectations: nil, "night \(night) (\(zone) \(from)–\(to)), \(profile):\n\(scenario)")
            }
        }
        try assertDaysHold(checks)
    }
}
