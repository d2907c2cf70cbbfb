import BusProtocol
import Configuration
import Foundation
import LockInvariant
import ShieldBusTestSupport
import XCTest

/// A speed bump's threshold after a cooldown and a clock or zone change (explore speed-bump 111, 2254, `ios-realistic`):
/// the change ends the interval registered ahead at the cooldown's end, so the count left is the daily threshold's,
/// registered from the resume's whole-minute callback (short by the use since the cooldown's end), and its crossing is
/// delivered on a whole minute again — two documented delays no product can avoid. The lead's ruling: the checker allows
/// two minutes for that threshold under `whole-minute-callbacks` (docs/explore.md, "Two delays after a cooldown and a
/// clock or zone change").
extension ExploreRegressionTests {
    /// Days like 111: a picked app used past the threshold, dismissed at a random second and used on across the
    /// cooldown's end (so the daily registration misses some of the count), opened again a few minutes later, a clock or
    /// zone change (both directions, several sizes) after the cooldown's end, and use past the threshold. Both
    /// profiles; each day holds. Under `ios-realistic` the threshold after the change comes from the daily registration
    /// (the case itself), and judged with one minute (a journal that names no quirks), 111 and another day fail.
    func testAThresholdAfterACooldownAndAChangeHasTwoMinutes() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let days: [(zone: String, change: String)] = [
            ("Asia/Tokyo", "timeZone: GMT"),                    // 9 h back, the same date (as 111)
            ("Asia/Tokyo", "timeZone: Australia/Sydney"),       // 2 h forward (as 2254, the other way)
            ("Europe/Berlin", "setClock: \"+2h\""),             // the clock forward, the same date
            ("America/New_York", "setClock: \"-3h\""),          // the clock back, the same date
            ("Australia/Sydney", "timeZone: Asia/Tokyo"),       // 2 h back
            ("Europe/Berlin", "timeZone: Asia/Dubai"),          // 3 h forward
        ]
        let apps = ["Instagram", "TikTok", "Facebook", "X", "Snapchat"]
        var random = SeededRandom(seed: 111)
        let checks = DayChecks()
        let checker = try Self.checker(configuration)
        var needingTwo: [String] = []
        // 111 as shrunk (53 steps to 6): Snapchat dismissed at 04:08:05 Tokyo, the cooldown to 04:23:05, a move to UTC at
        // 04:53:12 (19:53:12 the date before); before the ruling Snapchat was usable 1 min 1 s past its threshold (19:56:59).
        let shrunk = """
              - {after: 2h26m17s, open: Snapchat}
              - {after: 3h4m45s, open: Snapchat}
              - {after: 3s, press: primary}
              - {after: 28m3s, visit: {url: "https://www.github.com/", tab: 3, private: false}}
              - {after: 3m54s, open: Snapchat}
              - {after: 13m10s, timeZone: UTC}
            """
        var scenarios = [CooldownDay(name: "speed-bump-seed111", start: "2026-11-24T22:37", zone: "Asia/Tokyo", seed: 111, end: "after 9m26s", steps: shrunk)]
        for (index, day) in days.enumerated() {
            let second = Int.random(in: 1...25, using: &random)   // the cooldown ends this second past a minute
            let app = apps[index % apps.count]  // the dismissed app: the others stay shielded
            let steps: [String] = ["  - {at: \"08:01:\(String(format: "%02d", second))\", open: \(app)}"]
                + CooldownDay.dismissedAndUsedAcrossTheCooldown(app, random: &random)
                + ["  - {after: \(Int.random(in: 3...12, using: &random))m\(Int.random(in: 0...59, using: &random))s, \(day.change)}",
                   "  - {after: 40m, home: true}"]
            scenarios.append(CooldownDay(name: "speed-bump-cooldown-and-change-\(index)", start: "2026-11-24T08:00", zone: day.zone, seed: 112 + index,
                                         steps: steps.joined(separator: "\n")))
        }
        for day in scenarios {
            day.addUnderBothProfiles(configuration, to: checks) { run, context in
                let changed = try XCTUnwrap(run.journal.first { ["device.clock-changed", "device.time-zone-changed"].contains($0.topic) }, context).time
                let after = run.events("deviceactivity.event-did-reach-threshold").filter { $0.time > changed }
                XCTAssertEqual(after.map { $0.bodyValue["activity"]?.stringValue }, ["speed-bump.daily"], context)
                // Judged as if the journal named no quirks, the checker allows one minute only.
                let zone = try XCTUnwrap(TimeZone(identifier: day.zone))
                if !LockInvariantChecker(products: checker.products, timeZone: zone).verdicts(for: Self.withoutQuirks(run.journal)).allSatisfy(\.isHeld) {
                    needingTwo.append(day.name)
                }
            }
        }
        try assertDaysHold(checks, everyDay: true)
        XCTAssertTrue(needingTwo.contains("speed-bump-seed111"), "111 no longer needs the second minute: \(needingTwo)")
        XCTAssertGreaterThanOrEqual(needingTwo.count, 2, "the generated days no longer need the second minute: \(needingTwo)")
    }

    /// 76's whole day: after a cooldown the interval registered ahead raised the speed bump, then a move to a *later*
    /// date whose day began before the cooldown's end. The count that raised it is the new day's too, but the OS's count
    /// of the new day is the daily threshold's, registered a whole minute after the cooldown's end and short: the monitor
    /// waited for a threshold that did not come and lifted the speed bump (X usable 45 s, 5 h into the lock). It keeps it
    /// now. 76 as shrunk and four generated days — Los Angeles → GMT, New York → Tokyo, Berlin → Auckland, Berlin's
    /// clock 12 h forward; the dismiss at a random second, the app used across the cooldown's end and reopened at a
    /// random second, the change after the threshold, another picked app opened after it — under both profiles, side by
    /// side: each holds. Under `ios-realistic` at least one day has the case itself: no threshold by the whole minute
    /// after the change.
    func testASpeedBumpRaisedAfterACooldownHoldsOnALaterDateThatBeganBeforeIt() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let days: [(zone: String, start: String, change: String)] = [
            ("America/Los_Angeles", "16:10", "timeZone: GMT"),        // GMT's next date began at 16:00 Los Angeles
            ("America/New_York", "10:05", "timeZone: Asia/Tokyo"),    // Tokyo's at 10:00 New York
            ("Europe/Berlin", "12:10", "timeZone: Pacific/Auckland"), // Auckland's at 12:00 Berlin
            ("Europe/Berlin", "12:10", "setClock: \"+12h\""),         // the device's next date at 12:00 true
        ]
        let apps = ["Instagram", "TikTok", "Facebook", "X", "Snapchat"]
        var random = SeededRandom(seed: 76)
        let checks = DayChecks()
        var shortAtTheChange: [String] = []
        var scenarios = [CooldownDay(name: "speed-bump-seed76", start: "2026-11-24T07:00", zone: "Asia/Tokyo", seed: 76, steps: Self.seed76)]
        for (index, day) in days.enumerated() {
            let app = apps[index], other = apps[(index + 2) % apps.count]
            let steps: [String] = ["  - {at: \"\(day.start):\(String(format: "%02d", Int.random(in: 1...40, using: &random)))\", open: \(app)}"]
                + CooldownDay.dismissedAndUsedAcrossTheCooldown(app, random: &random)
                + ["  - {after: 35m, home: true}",                                                 // past the threshold
                   "  - {after: \(Int.random(in: 2...8, using: &random))m\(Int.random(in: 0...59, using: &random))s, \(day.change)}",
                   "  - {after: \(Int.random(in: 1...10, using: &random))m, open: \(other)}",
                   "  - {after: 5m, home: true}"]
            scenarios.append(CooldownDay(name: "speed-bump-later-date-after-a-cooldown-\(index)", start: "2026-11-24T\(day.start)", zone: day.zone,
                                         seed: 76 + index, steps: steps.joined(separator: "\n")))
        }
        for day in scenarios {
            day.addUnderBothProfiles(configuration, to: checks) { run, context in
                let changes = run.journal.filter { ["device.clock-changed", "device.time-zone-changed"].contains($0.topic) }.map(\.time)
                let changed = try XCTUnwrap(changes.last, context)
                let nextMinute = (changed / 60_000 + 1) * 60_000
                if !run.events("deviceactivity.event-did-reach-threshold").contains(where: { (changed...nextMinute).contains($0.time) }) {
                    shortAtTheChange.append(day.name)
                }
            }
        }
        try assertDaysHold(checks, everyDay: true)
        XCTAssertTrue(shortAtTheChange.contains("speed-bump-seed76"), "76 no longer has the OS's count short at the change: \(shortAtTheChange)")
        XCTAssertGreaterThanOrEqual(shortAtTheChange.count, 2, "the generated days no longer have the case: \(shortAtTheChange)")
    }

    static func checker(_ configuration: String) throws -> LockInvariantChecker {
        let parsed = try ShieldBusConfiguration.parse(YAMLValue.parse(configuration, file: "speed-bump.yml"))
        let catalog = try AppCatalog.load(path: BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        return try LockInvariantChecker(configuration: parsed, catalog: catalog)
    }

    /// The journal with `bus.started` naming no quirks: as a broker before the ruling journaled it.
    static func withoutQuirks(_ journal: [Envelope]) -> [Envelope] {
        journal.map { envelope in
            guard envelope.topic == "bus.started" else { return envelope }
            var plain = envelope
            plain.body = JSONValue.object(["clock": "virtual"]).jsonBytes
            return plain
        }
    }
}

/// A day of these tests, played under both profiles.
struct CooldownDay {
    var name: String, start: String, zone: String, seed: Int
    var end = "after 5m"
    var steps: String

    /// Generated steps: "Dismiss" `after` the step before (by then the app is shielded past its threshold; the cooldown:
    /// 15 minutes), the app used across the cooldown's end (16 minutes and 5–50 s on) and opened again 30 s – 5 min later.
    static func dismissedAndUsedAcrossTheCooldown(_ app: String, after: String = "31m", random: inout SeededRandom) -> [String] {
        ["  - {after: \(after), press: primary}",
         "  - {after: 16m\(Int.random(in: 5...50, using: &random))s, home: true}",
         "  - {after: \(Int.random(in: 30...300, using: &random))s, open: \(app)}"]
    }

    /// Adds the day under both profiles; `realistic` checks its `ios-realistic` run (with the context to print).
    func addUnderBothProfiles(_ configuration: String, to checks: DayChecks, realistic: @escaping (ScenarioRun, String) throws -> Void) {
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: \(name)
            start: \(start)
            timeZone: \(zone)
            profile: \(profile)
            seed: \(seed)
            end: \(end)
            steps:
            \(steps)

            """
            let context = "\(name), \(profile):\n\(scenario)"
            checks.add(configuration, scenario, expectations: nil, context) { run in
                if profile == "ios-realistic" { try realistic(run, context) }
            }
        }
    }
}

extension ExploreRegressionTests {
    /// Speed-bump 76 as shrunk for this class (31 steps to 9), from 07:00 Tokyo: X used past the threshold (22:34:37 UTC),
    /// a move to Los Angeles, TikTok dismissed at 01:13:24 UTC (17:13:24 there), the cooldown to 01:28:24, the threshold
    /// registered ahead reached at 01:59:37 and delivered at 02:00:00, a move to UTC at 02:03:53 (Nov 24, a later date,
    /// begun before the cooldown's end), and X opened at 02:04:08; before the fix X was usable until 02:05:00.
    static let seed76 = """
          - {after: 4m37s, open: X}
          - {after: 2h46m33s, open: TikTok}
          - {after: 21m51s, timeZone: America/Los_Angeles}
          - {after: 23s, press: primary}
          - {after: 22m51s, open: X}
          - {after: 1m13s, open: TikTok}
          - {after: 26m25s, timeZone: UTC}
          - {after: 10s, press: primary}
          - {after: 5s, open: X}
        """
}
