import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The speed bump when the device clock is set back and the person then moves back across the date line (explore,
/// speed-bump seed 301, two-products seed 13): with the clock set, the monitor registers the threshold again at each
/// true midnight, so the OS counts the new true day from there; a move west across the date line then makes "today"
/// the day before again, whose use that registration had forgiven — the threshold came as late as that use was long.
/// On the move back the monitor now registers the threshold once more, counting the interval's past use.
extension ExploreRegressionTests {
    /// The shrunk day (31 steps to 5): Tokyo, the clock 2 h back, Facebook for 25 min 28 s before the true midnight,
    /// the move to Los Angeles at 02:03, TikTok — 4 min 32 s of it reach the threshold of Los Angeles's Nov 24.
    func testAMoveBackAcrossTheDateLineCountsTheUseBeforeTheTrueMidnight() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let checks = DayChecks()
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: speed-bump-seed301
            start: 2026-11-24T22:40
            timeZone: Asia/Tokyo
            profile: \(profile)
            seed: 301
            end: after 8m27s
            steps:
              - {after: 49m30s, setClock: "-2h"}
              - {after: 1m41s, open: Facebook}
              - {after: 25m28s, open: Speed Bump}
              - {after: 2h6m50s, timeZone: America/Los_Angeles}
              - {after: 1m17s, open: TikTok}
            expect:
              - {at: "day 2 02:08:30", usable: TikTok}
              - {at: "day 2 02:11", shielded: TikTok}

            """
            checks.add(configuration, scenario, expectations: 2, profile)
        }
        try assertDaysHold(checks)
    }

    /// Days generated around the shrunk one: four moves west across the date line, the clock set back 1–4 h in the
    /// evening, 3–27 minutes of picked apps before the true midnight (a device restart after it on some days), the
    /// move 10–90 minutes after the true midnight, then a picked app used past the threshold. Each day, under both
    /// profiles, holds the lock invariant, and the threshold comes after the move.
    func testMovesBackAcrossTheDateLineWithTheClockSetBackKeepTheDaysCount() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let apps = ["Instagram", "TikTok", "Facebook", "X", "Snapchat"]
        // Each pair keeps the evening's use in the new zone's date (Tokyo 22:00 is 05:00 in Los Angeles, the same date).
        let moves = [("Asia/Tokyo", "America/Los_Angeles"), ("Australia/Sydney", "UTC"), ("Asia/Tokyo", "Pacific/Honolulu"),
                     ("Pacific/Auckland", "Europe/London")]
        var random = SeededRandom(seed: 0x301_DA7E)
        let checks = DayChecks()
        for day in 0..<8 {
            let (from, to) = moves[day % moves.count]
            let shift = Int.random(in: 1...(to == "Pacific/Honolulu" ? 2 : 4), using: &random)
            let evening = Int.random(in: 3...27, using: &random) * 60 + Int.random(in: 0...59, using: &random)
            let openAt = 30 * 60 + Int.random(in: 0...(30 * 60), using: &random)  // from the start at 21:30: 22:00–22:30
            let midnight = 150 * 60
            let moveAt = midnight + Int.random(in: 10...90, using: &random) * 60
            var steps = ["  - {after: 10m, setClock: \"-\(shift)h\"}",
                         "  - {after: \(openAt - 600)s, open: \(apps.randomElement(using: &random)!)}",
                         "  - {after: \(evening)s, home: true}"]
            var elapsed = openAt + evening
            if Bool.random(using: &random) {
                let restartAt = Int.random(in: elapsed...(moveAt - 60), using: &random)
                steps.append("  - {after: \(restartAt - elapsed)s, restart: true}")
                elapsed = restartAt
            }
            steps.append("  - {after: \(moveAt - elapsed)s, timeZone: \(to)}")
            steps.append("  - {after: 2m, open: \(apps.randomElement(using: &random)!)}")
            steps.append("  - {after: \(30 * 60 - evening + 5 * 60)s, home: true}")
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-date-line-\(day)
                start: 2026-11-24T21:30
                timeZone: \(from)
                profile: \(profile)
                seed: \(301 + day)
                end: after 5m
                steps:
                \(steps.joined(separator: "\n"))

                """
                let context = "day \(day), \(profile):\n\(scenario)"
                checks.add(configuration, scenario, expectations: nil, context) { run in
                    let moved = try XCTUnwrap(run.events("device.time-zone-changed").first, context).time
                    let reached = run.events("deviceactivity.event-did-reach-threshold").filter { $0.bodyValue["event"]?.stringValue == "speed-bump.limit" }
                    XCTAssertTrue(reached.contains { $0.time > moved }, "no threshold after the move; \(context)")
                }
            }
        }
        try assertDaysHold(checks)
    }
}
