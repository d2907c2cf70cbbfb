import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A dismiss whose cooldown ends on the device's next date (explore speed-bump 10941, `ios-realistic`): the threshold
/// cannot be registered ahead from the cooldown's end on the dismiss's date (the OS would read the interval's wall times
/// on today, where it already runs), so the monitor registered it from the resume's whole-minute callback, short by the
/// use since the cooldown's end, and its crossing came on a whole minute again: two delays where the product can avoid
/// one. It now waits for the midnight between and registers the interval from the cooldown's end on the new date.
extension ExploreRegressionTests {
    /// 10941 as shrunk (51 steps to 12): Sydney's spring-forward day, on to London, the clock set 1 h forward, 4 h back
    /// and 7 h forward (the device's midnight at 19:00 UTC); Instagram dismissed at 18:51:08 UTC, the cooldown to 19:06:08
    /// on the next date; TikTok and tiktok.com past the new day's threshold (20:56:21 device time); before the fix the
    /// threshold came at 20:58:00.
    static let seed10941 = CooldownDay(name: "speed-bump-seed10941", start: "2026-10-04T08:02", zone: "Australia/Sydney", seed: 10941,
                                       end: "after 1h34m42s", steps: """
          - {after: 16h50m23s, timeZone: Europe/London}
          - {after: 46m10s, open: Instagram}
          - {after: 1h44m54s, setClock: "+1h"}
          - {after: 10m29s, setClock: "-4h"}
          - {after: 55m38s, setClock: "+7h"}
          - {after: 1h21m34s, press: primary}
          - {after: 16m24s, close: null}
          - {after: 20m13s, open: TikTok}
          - {after: 12s, press: primary}
          - {after: 22m56s, visit: {url: "https://www.tiktok.com/", tab: 2, private: false}}
          - {after: 16m7s, open: Facebook}
          - {after: 26s, press: primary}
        """)

    /// 10941 as shrunk, and days like it: the speed bump up, a picked app dismissed 1–14 minutes before the device's midnight at a random
    /// second, used across the cooldown's end (90 s past it), then after a gap another picked app until past the new
    /// day's threshold, the gap drawn so that the crossing of a count from the resume's callback comes early in its
    /// minute (so the two delays add up past one minute). London on the found date, Sydney into its spring-forward day,
    /// New York into its fall-back day, Berlin into its spring-forward day, Tokyo. Both profiles, side by side: each holds,
    /// and under `ios-realistic` the threshold after the dismiss is the one registered ahead from the cooldown's end.
    func testACooldownEndingOnTheNextDateCountsFromItsEnd() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let days = [("Europe/London", "2026-10-03"), ("Australia/Sydney", "2026-10-03"), ("America/New_York", "2026-10-31"),
                    ("Europe/Berlin", "2026-03-28"), ("Asia/Tokyo", "2026-11-23")]
        var random = SeededRandom(seed: 10941)
        var scenarios = [Self.seed10941]
        for (index, (zone, date)) in days.enumerated() {
            let minute = Int.random(in: 46...58, using: &random)
            let dismissedAt = Int.random(in: 5...25, using: &random)  // the cooldown's end: this second past a minute
            // The OS's crossing, counted from the whole minute after the cooldown's end, falls this second past a minute.
            let crossing = Int.random(in: 1...(50 - dismissedAt), using: &random)
            let steps = ["  - {at: \"22:31\", open: X}",
                         "  - {at: \"23:\(minute):\(String(format: "%02d", dismissedAt - 5))\", open: Instagram}",
                         "  - {after: 5s, press: primary}",
                         "  - {after: 16m30s, home: true}",
                         "  - {after: \(Int.random(in: 1...5, using: &random))m\(crossing)s, open: TikTok}"]
            scenarios.append(CooldownDay(name: "speed-bump-cooldown-past-midnight-\(index)", start: "\(date)T22:30", zone: zone,
                                         seed: 10941 + index, end: "after 40m", steps: steps.joined(separator: "\n")))
        }
        let checks = DayChecks()
        for day in scenarios {
            day.addUnderBothProfiles(configuration, to: checks) { run, context in
                let dismissed = try XCTUnwrap(run.events("shield.action.handled").first, context).time
                let after = run.events("deviceactivity.event-did-reach-threshold").filter { $0.time > dismissed }
                XCTAssertEqual(after.first?.bodyValue["activity"]?.stringValue, "speed-bump.resume", context)
            }
        }
        try assertDaysHold(checks)
    }
}
