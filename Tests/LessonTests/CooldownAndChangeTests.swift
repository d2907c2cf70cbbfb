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
        var scenarios: [(name: String, start: String, zone: String, seed: Int, end: String, steps: String)] = [
            ("speed-bump-seed111", "2026-11-24T22:37", "Asia/Tokyo", 111, "after 9m26s", shrunk),
        ]
        for (index, day) in days.enumerated() {
            let second = Int.random(in: 1...25, using: &random)   // the cooldown ends this second past a minute
            let app = apps[index % apps.count]  // the dismissed app: the others stay shielded
            let steps = ["  - {at: \"08:01:\(String(format: "%02d", second))\", open: \(app)}",
                         "  - {after: 31m, press: primary}",                                          // the cooldown: 15 min
                         "  - {after: 16m\(Int.random(in: 5...50, using: &random))s, home: true}",    // used across its end
                         "  - {after: \(Int.random(in: 30...300, using: &random))s, open: \(app)}",
                         "  - {after: \(Int.random(in: 3...12, using: &random))m\(Int.random(in: 0...59, using: &random))s, \(day.change)}",
                         "  - {after: 40m, home: true}"]
            scenarios.append(("speed-bump-cooldown-and-change-\(index)", "2026-11-24T08:00", day.zone, 112 + index, "after 5m", steps.joined(separator: "\n")))
        }
        for day in scenarios {
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: \(day.name)
                start: \(day.start)
                timeZone: \(day.zone)
                profile: \(profile)
                seed: \(day.seed)
                end: \(day.end)
                steps:
                \(day.steps)

                """
                let context = "\(day.name), \(profile):\n\(scenario)"
                checks.add(configuration, scenario, expectations: nil, context) { run in
                    guard profile == "ios-realistic" else { return }
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
        }
        try assertDaysHold(checks)
        XCTAssertTrue(needingTwo.contains("speed-bump-seed111"), "111 no longer needs the second minute: \(needingTwo)")
        XCTAssertGreaterThanOrEqual(needingTwo.count, 2, "the generated days no longer need the second minute: \(needingTwo)")
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
