import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A speed bump's cooldown that ends in the hour a fall-back repeats (the lead's notes: a known untested case). The
/// monitor plans the cooldown's end in the device clock's wall time, which shows a time of that hour twice, and the OS
/// reads a one-off schedule's wall-clock start as its first pass.
extension ExploreRegressionTests {
    /// The property, on generated days: four zones on their fall-back night; a picked app dismissed so that its
    /// cooldown ends minutes before the repeated hour, in its first pass, in its second, or after it — with the shipped
    /// 15-minute cooldown on the fall-back date itself, and with a 5-hour cooldown (the product's `cooldownMinutes`) from
    /// a dismiss the evening before, across midnight. The app is used from the dismiss to 2–10 minutes past the
    /// cooldown's end, put away for 1–5 minutes, and used again past the count's 30 minutes. Under both profiles: the
    /// lock invariant holds (usable in the cooldown, the rest shielded), the count starts again at the cooldown's true
    /// end — the threshold comes 30 minutes of use after it, at that instant under faithful, within the checker's grace
    /// under ios-realistic — and the monitor's callbacks stay few (no check loop).
    func testACooldownEndingAroundARepeatedHourCountsFromItsTrueEnd() throws {
        let shipped = try ScenarioRun.shippedConfiguration("speed-bump")
        // Each zone's 2026 fall-back: the instant the repeated hour begins for the first time, in UTC.
        let fallBacks: [(zone: String, firstPass: String)] = [
            ("Europe/Berlin", "2026-10-25T00:00:00Z"), ("America/New_York", "2026-11-01T05:00:00Z"),
            ("Australia/Sydney", "2026-04-04T15:00:00Z"), ("America/Los_Angeles", "2026-11-01T08:00:00Z"),
        ]
        // Where the cooldown ends, in minutes from the repeated hour's first pass: before it, in each pass, after it.
        // The first pass's last quarter: a 15-minute window from there ends in the second pass.
        let placements: [(name: String, minutes: ClosedRange<Int>, secondPass: Bool)] = [
            ("before the repeated hour", -12 ... -2, false), ("in its first pass", 5...44, false),
            ("in its first pass's last quarter", 45...59, false), ("in its second pass", 62...118, true), ("after it", 122...140, false),
        ]
        let cooldowns = [15, 300]  // the shipped one (same date), and one from the evening before (the next date)
        var random = SeededRandom(seed: 0xC001_D57)
        let checks = DayChecks()
        var day = 0
        for (placementIndex, placement) in placements.enumerated() {
            for (cooldownIndex, cooldown) in cooldowns.enumerated() {
                // Each placement and length in two zones; across them every zone meets every placement.
                for zoneIndex in [(placementIndex + cooldownIndex) % 4, (placementIndex + cooldownIndex + 2) % 4] {
                    let (zone, firstPass) = fallBacks[zoneIndex]
                    let timeZone = try XCTUnwrap(TimeZone(identifier: zone))
                    let repeated = try XCTUnwrap(ISO8601DateFormatter().date(from: firstPass))
                    // The cooldown's end early in its minute, and a pause after it that ends early in one too: a count
                    // registered from a callback at the end's whole minute misses up to a minute of use, and its crossing
                    // then comes early in a minute and waits for the next (the two delays of docs/explore.md).
                    let cooldownEnd = repeated.addingTimeInterval(Double(Int.random(in: placement.minutes, using: &random) * 60 + Int.random(in: 5...25, using: &random)))
                    let usedAfterTheEnd = Int.random(in: 2...10, using: &random) * 60
                    let pause = Int.random(in: 1...5, using: &random) * 60 + Int.random(in: 1...20, using: &random)
                    let dismissed = cooldownEnd.addingTimeInterval(-Double(cooldown) * 60)
                    let opened = dismissed.addingTimeInterval(-31 * 60)
                    // The scenario starts on a whole minute well outside the repeated hour: its local start names one instant.
                    let start = repeated.addingTimeInterval(-Double(cooldown == 15 ? 2 : 8) * 3600)
                    let configuration = shipped.replacingOccurrences(of: "cooldownMinutes: 15", with: "cooldownMinutes: \(cooldown)")
                    let scenario = { (profile: String) in """
                        name: speed-bump-cooldown-in-a-repeated-hour-\(day)
                        start: \(Self.local(start, in: timeZone))
                        timeZone: \(zone)
                        profile: \(profile)
                        seed: \(day + 1)
                        end: after 5m
                        steps:
                          - {after: \(Int(opened.timeIntervalSince(start)))s, open: Instagram}
                          - {after: 31m, press: primary}
                          - {after: \(cooldown * 60 + usedAfterTheEnd)s, home: true}
                          - {after: \(pause)s, open: Instagram}
                          - {after: \(30 * 60 - usedAfterTheEnd + 5 * 60)s, home: true}
                          - {after: 2m, open: Instagram}
                          - {after: 1m, home: true}

                        """
                    }
                    for profile in ["faithful", "ios-realistic"] {
                        let context = "\(zone), cooldown of \(cooldown) min ending \(placement.name) (\(cooldownEnd)), \(profile):\n\(scenario(profile))"
                        checks.add(configuration, scenario(profile), expectations: nil, context) { run in
                            let dismiss = try XCTUnwrap(run.events("shield.action.handled").first, context).time
                            XCTAssertEqual(dismiss, BusTime(dismissed.timeIntervalSince1970 * 1000), context)
                            guard let reached = run.events("deviceactivity.event-did-reach-threshold").first(where: { $0.time > dismiss }) else {
                                return XCTFail("no threshold after the cooldown; \(context)")
                            }
                            let late = Double(reached.time) / 1000 - cooldownEnd.addingTimeInterval(Double(30 * 60 + pause)).timeIntervalSince1970
                            // Under whole-minute callbacks one minute for the threshold's callback, and one more in
                            // the second pass for the registration from the end warning's (the checker's two delays).
                            let delays = profile == "faithful" ? 0 : placement.secondPass ? 2 : 1
                            XCTAssertTrue(delays == 0 ? late == 0 : (0..<Double(60 * delays)).contains(late), "the threshold came \(late) s after 30 min of use from the cooldown's end; \(context)")
                            XCTAssertEqual(run.events("x.monitor.check-loop").count, 0, context)
                            let callbacks = run.journal.filter { $0.topic.hasPrefix("deviceactivity.interval-") || $0.topic.hasPrefix("deviceactivity.event-") }
                            XCTAssertLessThan(callbacks.count, 60, "\(callbacks.count) callbacks; \(context)")
                        }
                    }
                    day += 1
                }
            }
        }
        try assertDaysHold(checks)
    }
}
