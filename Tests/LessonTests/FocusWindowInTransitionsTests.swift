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
    /// `make zones` (`SHIELDBUS_ZONES_FULL=1`) adds the nights `transitionNights` generates from the tz database, and
    /// plays every day rather than `make test`'s slice.
    func testFocusWindowsInRepeatedHoursAndAtOddJumps() throws {
        let shipped = try ScenarioRun.shippedConfiguration("focus-window")
        // (zone, the evening before, window start, window end, minutes after the start at which an app is opened)
        var nights: [(String, String, String, String, [Int])] = [
            ("Europe/Berlin", "2026-10-25T01:30", "02:00", "02:30", [35, 55, 95, 100, 125]),  // the window's second pass: 01:00–01:30Z
            ("America/New_York", "2026-11-01T00:40", "01:10", "01:40", [35, 75, 95, 125]),
            ("Australia/Lord_Howe", "2026-04-05T01:10", "01:30", "01:50", [25, 55, 85]),     // back 30 minutes at 02:00
            ("Australia/Lord_Howe", "2026-10-04T01:40", "02:30", "03:00", [21, 25, 40]),     // 02:00 → 02:30: the window starts at the jump
            ("Pacific/Chatham", "2026-09-27T02:20", "03:45", "04:15", [26, 30, 50]),         // 02:45 → 03:45
            ("America/Santiago", "2026-09-05T23:30", "00:00", "00:45", [31, 40, 70]),         // midnight is skipped
        ]
        if ZonesLane.isFull { nights += Self.transitionNights() }
        let apps = ["Instagram", "TikTok", "YouTube", "Reddit", "X"]
        var random = SeededRandom(seed: 0x26_0001)
        let checks = DayChecks()
        for (night, (zone, start, from, to, opens)) in nights.enumerated() {
            let configuration = try Self.focusWindowConfiguration(shipped, from: from, to: to)
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
        if ZonesLane.isFull { print("FocusWindowInTransitionsTests: \(nights.count) nights, \(checks.days.count) days played") }
        try assertDaysHold(checks, everyDay: ZonesLane.isFull)
    }

    /// The shipped focus-window configuration with one focus window, `from`–`to`: the plugins' focus hours and the
    /// promise's windows, in step.
    static func focusWindowConfiguration(_ shipped: String, from: String, to: String) throws -> String {
        let configuration = shipped.replacingOccurrences(of: #"focusHours: [{start: "09:00", end: "12:00"}, {start: "14:00", end: "17:00"}]"#,
                                                         with: "focusHours: [{start: \"\(from)\", end: \"\(to)\"}]")
            .replacingOccurrences(of: "      - {start: \"09:00\", end: \"12:00\"}\n      - {start: \"14:00\", end: \"17:00\"}",
                                  with: "      - {start: \"\(from)\", end: \"\(to)\"}")
        XCTAssertNotEqual(configuration, shipped, "the shipped focus hours were replaced")
        XCTAssertFalse(configuration.contains("\"14:00\""), "the promise's windows were replaced too")
        return configuration
    }

    /// Nights around every transition of 2026 and 2027 that is not an hour at a whole hour away from midnight — a
    /// jump of 30 or 120 minutes, one at a quarter past or to, one that skips or repeats midnight — in every zone of
    /// the tz database, with focus windows placed in and around it: for a fall-back, in the repeated stretch from its
    /// first minute, in its middle and up to its last; for a spring-forward, from the jump's end, from inside the
    /// skipped stretch, and ending inside it. Each night starts 90 minutes before the transition; apps are opened a
    /// minute into the window, in its middle (both passes of a repeated one) and just after it.
    static func transitionNights() -> [(String, String, String, String, [Int])] {
        var nights: [(String, String, String, String, [Int])] = []
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        func wallMinute(_ instant: Date, _ zone: TimeZone) -> Int {
            Int(((instant.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: instant))) / 60).rounded(.down))
        }
        func clock(_ minute: Int) -> String { String(format: "%02d:%02d", (minute % 1_440 + 1_440) % 1_440 / 60, (minute % 60 + 60) % 60) }
        for zone in ZonesLane.zones {
            for transition in ZonesLane.transitions(in: zone, years: 2026...2027) {
                let before = wallMinute(transition.addingTimeInterval(-60), zone) + 1, after = wallMinute(transition, zone)
                let jump = after - before
                let odd = abs(jump) != 60 || before % 60 != 0 || (before % 1_440 + 1_440) % 1_440 < 60 || (after % 1_440 + 1_440) % 1_440 < 60
                guard jump != 0, odd else { continue }
                let placements: [(Int, Int)]
                if jump < 0 {
                    // Repeated: wall minutes after..<before, twice. A window of two thirds of it, at least 15 minutes.
                    let length = max(15, -jump * 2 / 3)
                    placements = [(after, after + length), (after + (-jump - length) / 2, after + (-jump - length) / 2 + length), (before - length, before)]
                } else {
                    // Skipped: wall minutes before..<after.
                    placements = [(after, after + 30), (before + jump / 2, after + 30), (before - 30, before + jump / 2)]
                }
                let start = transition.addingTimeInterval(-90 * 60)
                formatter.timeZone = zone
                formatter.dateFormat = "yyyy-MM-dd'T'HH:mm"
                for (from, to) in placements {
                    // The minutes after the night's start at which the wall clock is a minute into the window, in its
                    // middle, or a minute past its end — in each pass.
                    var opens: [Int] = []
                    for minute in 1...240 {
                        let wall = wallMinute(start.addingTimeInterval(Double(minute) * 60), zone)
                        let previous = wallMinute(start.addingTimeInterval(Double(minute - 1) * 60), zone)
                        let marks = [from + 1, (from + to) / 2, to + 1]
                        if marks.contains(where: { previous < $0 && $0 <= wall || wall == $0 }), opens.last.map({ minute - $0 >= 4 }) ?? true {
                            opens.append(minute)
                        }
                    }
                    nights.append((zone.identifier, formatter.string(from: start), clock(from), clock(to), opens))
                }
            }
        }
        return nights
    }
}
