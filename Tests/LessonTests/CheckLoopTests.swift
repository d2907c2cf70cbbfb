import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A product's self-planned re-checks never loop: each reference product ends a check loop the OS could start.
/// Each test keeps, in its doc comment, the explore failure that found it.
final class CheckLoopTests: RegressionDayCase {}

/// The loop guard in the monitor's shared registration path (`ReferenceMonitor.startMonitoring`), for every product
/// (issue #9). An OS that starts an interval at once each time it is planned makes a check's callback plan the same check
/// again, at one virtual instant, until `ack-timeout` (explore: focus-window 12; speed-bump 2009, 1,430 plans at one
/// instant). The fault `starts-intervals-at-once` makes the simulated OS do that to every registration; each product
/// must end the loop with a logged warning (`x.monitor.check-loop`) and keep its lock.
extension CheckLoopTests {
    /// Habit-lock days: the habits at random times in four zones, apps opened during the unlock and after its end.
    func testTheHabitLockEndsACheckLoop() throws {
        var random = SeededRandom(seed: 0x100B_0001)
        try assertLoopsEnd("habit-lock", days: 2, random: &random) { random in
            let read = Int.random(in: 2...40, using: &random) * 60 + Int.random(in: 0...59, using: &random)
            let stretch = read + Int.random(in: 0...900, using: &random)
            let end = stretch + 30 * 60
            return [(0, "open: Habit Lock"), (60, "home: true"), (read, "habit: Read"), (read + 30, "habit: Walk"), (stretch, "habit: Stretch"),
                    (stretch + 20, "open: Instagram"), (stretch + 300, "home: true"),
                    (end + Int.random(in: 90...600, using: &random), "open: TikTok")]
        }
    }

    /// Focus-window days: from before the 09:00 focus hours into them, apps opened before and during the window.
    func testTheFocusWindowEndsACheckLoop() throws {
        var random = SeededRandom(seed: 0x100B_0002)
        try assertLoopsEnd("focus-window", days: 2, random: &random) { random in
            [(0, "open: Focus Window"), (60, "home: true"),
             (Int.random(in: 5...40, using: &random) * 60, "open: Instagram"), (45 * 60, "home: true"),
             (60 * 60 + Int.random(in: 1...30, using: &random) * 60, "open: Reddit")]
        }
    }

    /// Speed-bump days: picked apps past the 30-minute threshold, a dismiss (its cooldown's end is registered ahead), and
    /// picked apps again after the cooldown.
    func testTheSpeedBumpEndsACheckLoop() throws {
        var random = SeededRandom(seed: 0x100B_0003)
        try assertLoopsEnd("speed-bump", days: 2, random: &random) { random in
            let threshold = 60 + 31 * 60 + Int.random(in: 0...120, using: &random)
            return [(0, "open: Speed Bump"), (30, "home: true"), (60, "open: Instagram"),
                    (threshold, "press: primary"), (threshold + Int.random(in: 60...600, using: &random), "home: true"),
                    (threshold + 20 * 60, "open: TikTok")]
        }
    }

    /// Plays `days` generated days of `product` under both profiles with the OS starting every interval at once: each day
    /// plays to its end with the bus intact and the lock invariant held, the monitor said it broke a loop, and it asked
    /// for no more than 100 registrations at any instant (a loop the guard ends takes 17 per check's instant; one it does
    /// not end, thousands: 1,430 in speed-bump 2009). The bus waits up to two minutes of wall time for quiet: a loop the
    /// guard ends still takes 17 rounds, under `ios-realistic` 17 extension launches, which outlast the default 5 s on a
    /// loaded machine (seen at load 19); one it does not end outlasts any bound.
    private func assertLoopsEnd(_ product: String, days: Int, random: inout SeededRandom,
                                steps: (inout SeededRandom) -> [(second: Int, action: String)], file: StaticString = #filePath, line: UInt = #line) throws {
        let configuration = try ScenarioRun.shippedConfiguration(product) + "\nquirks:\n  starts-intervals-at-once: true\nbus: {ackTimeoutMs: 120000}\n"
        let zones = ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Tokyo"]
        for day in 0..<days {
            let zone = zones[Int.random(in: 0..<zones.count, using: &random)]
            let start = 8 * 3600 + Int.random(in: 0...20, using: &random) * 60
            let plan = steps(&random).sorted { $0.second < $1.second }
            func clock(_ second: Int) -> String { String(format: "%02d:%02d:%02d", (start + second) / 3600, (start + second) / 60 % 60, (start + second) % 60) }
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: \(product)-check-loop-\(day)
                start: 2026-11-24T\(clock(0).prefix(5))
                timeZone: \(zone)
                profile: \(profile)
                seed: \(day + 1)
                steps:
                \(plan.map { "  - {at: \"\(clock($0.second))\", \($0.action)}" }.joined(separator: "\n"))
                end: after 10m

                """
                let run = try assertDayHolds(configuration, scenario, expectations: nil, "\(product), \(profile):\n\(scenario)", file: file, line: line)
                XCTAssertFalse(run.events("x.monitor.check-loop").isEmpty, "\(product), \(profile): no loop was broken, so the day tests nothing", file: file, line: line)
                let requests = Dictionary(grouping: run.events("deviceactivity.start-monitoring.request").filter { $0.source == "monitor" }, by: \.time)
                XCTAssertLessThanOrEqual(requests.values.map(\.count).max() ?? 0, 100, "\(product), \(profile): the monitor kept registering at one instant", file: file, line: line)
            }
        }
    }
}
