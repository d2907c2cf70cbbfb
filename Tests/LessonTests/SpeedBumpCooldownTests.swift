// Longer than 500 lines: one regression day per test, each with the explore failure it pins in its doc comment;
// the days of one behaviour are read together.
import BusProtocol
import Configuration
import Foundation
import LockInvariant
import ShieldBusTestSupport
import XCTest

/// A speed bump's count and cooldown: the threshold after a cooldown comes once, at the use it counts, across changes, pauses, relaunches and updates.
/// Each test keeps, in its doc comment, the explore failure that found it.
final class SpeedBumpCooldownTests: RegressionDayCase {}

extension SpeedBumpCooldownTests {
    /// One of the issue's classes: an iOS update during a speed-bump cooldown. Two faults hid each other: the OS's
    /// usage meter stopped at the update and never counted the app still in front again, and the monitor, resuming
    /// after the cooldown, registered the threshold on the saved — now stale — tokens. Either way the speed bump never
    /// came back that day (and the checker of this branch called the day held: the `expect:` entry caught it).
    func testAnIOSUpdateDuringASpeedBumpCooldownDoesNotEndTheSpeedBumps() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let checks = DayChecks()
        for updateAfter in ["1m", "5m", "13m"] {
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-update-in-cooldown
                start: 2026-11-24T07:00
                timeZone: Europe/Berlin
                profile: \(profile)
                seed: 5
                steps:
                  - {at: "07:05", open: Speed Bump}
                  - {after: 10s, authorize: approved}
                  - {after: 1m, home: true}
                  - {at: "08:00", open: Instagram}
                  - {after: 31m, press: primary}
                  - {after: \(updateAfter), osUpdate: true}
                end: day 1 09:30
                expect:
                  - {at: "08:40", usable: Instagram}
                  - {at: "09:20", shielded: Instagram}

                """
                checks.add(configuration, scenario, expectations: 2, "update \(updateAfter) into the cooldown, \(profile)")
            }
        }
        try assertDaysHold(checks)
    }

    /// explore, speed-bump, seed 304 (faithful; shrunk from 41 steps to these 4): TikTok used for 20 minutes, the app
    /// force-quit, Instagram opened — and no speed bump at 30 minutes. The relaunched app registered the daily
    /// threshold again, and the OS counts a threshold from its registration: the use so far was forgiven. The app now
    /// leaves a running threshold (and a cooldown) alone. The relaunch at several points of the count, both profiles.
    func testARelaunchOfTheAppDoesNotRestartTheSpeedBumpsCount() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let checks = DayChecks()
        for (quitAfter, seed) in [("37s", 304), ("5m", 8), ("9m", 19)] {
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-relaunch-keeps-the-count
                start: 2026-11-24T08:38
                timeZone: Asia/Tokyo
                profile: \(profile)
                seed: \(seed)
                steps:
                  - {at: "10:07:28", open: TikTok}
                  - {after: 20m9s, home: true}
                  - {after: \(quitAfter), forceQuit: Speed Bump}
                  - {after: 8s, open: Instagram}
                  - {after: 15m, home: true}
                end: after 5m

                """
                checks.add(configuration, scenario, expectations: nil, "force-quit \(quitAfter) after, \(profile)")
            }
        }
        try assertDaysHold(checks)
    }
}

/// A speed bump's threshold after a cooldown and a clock or zone change (explore speed-bump 111, 2254, `ios-realistic`):
/// the change ends the interval registered ahead at the cooldown's end, so the count left is the daily threshold's,
/// registered from the resume's whole-minute callback (short by the use since the cooldown's end), and its crossing is
/// delivered on a whole minute again — two documented delays no product can avoid. The lead's ruling: the checker allows
/// two minutes for that threshold under `whole-minute-callbacks` (docs/explore.md, "Two delays after a cooldown and a
/// clock or zone change").
extension SpeedBumpCooldownTests {
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
                let change = try XCTUnwrap(run.journal.first { ["device.clock-changed", "device.time-zone-changed"].contains($0.topic) }, context)
                let after = run.events("deviceactivity.event-did-reach-threshold").filter { $0.time > change.time }
                // A zone change leaves the interval registered ahead running unless the new zone's clock is past its end
                // (docs/fidelity.md § 4): either count may come first, and the day holds either way.
                if change.topic == "device.clock-changed" {
                    XCTAssertEqual(after.map { $0.bodyValue["activity"]?.stringValue }, ["speed-bump.daily"], context)
                }
                // Judged as if the journal named no quirks, the checker allows one minute only.
                let zone = try XCTUnwrap(TimeZone(identifier: day.zone))
                if !LockInvariantChecker(products: checker.products, timeZone: zone).verdicts(for: Self.withoutQuirks(run.journal)).allSatisfy(\.isHeld) {
                    needingTwo.append(day.name)
                }
            }
        }
        try assertDaysHold(checks, everyDay: true)
        // The clock set after the cooldown's end (days 2 and 3) is the case: a zone change leaves `resume` running.
        XCTAssertFalse(needingTwo.isEmpty, "the days with the clock set need the second minute")
        XCTAssertTrue(Set(needingTwo).isSubset(of: ["speed-bump-cooldown-and-change-2", "speed-bump-cooldown-and-change-3"]), "\(needingTwo)")
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

extension SpeedBumpCooldownTests {
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

/// A dismiss whose cooldown ends on the device's next date (explore speed-bump 10941, `ios-realistic`): the threshold
/// cannot be registered ahead from the cooldown's end on the dismiss's date (the OS would read the interval's wall times
/// on today, where it already runs), so the monitor registered it from the resume's whole-minute callback, short by the
/// use since the cooldown's end, and its crossing came on a whole minute again: two delays where the product can avoid
/// one. It now waits for the midnight between and registers the interval from the cooldown's end on the new date.
extension SpeedBumpCooldownTests {
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

/// The speed bump's count after a dismiss's cooldown (explore, speed-bump 76, 114, 124, `ios-realistic`): the monitor
/// registered the threshold again from the resume's callback, which the whole-minute quirk delivers up to a minute after
/// the cooldown's end, and the threshold itself came up to a minute late: two delays, past the checker's minute. The
/// monitor now registers the threshold ahead, on an interval starting at the cooldown's end, so only the threshold's
/// own delay is left.
extension SpeedBumpCooldownTests {
    /// 76 as shrunk (31 steps to 10): X used past the threshold, TikTok dismissed, used again after the cooldown.
    func testAThresholdAfterACooldownComesWithOneDelayOnly() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let checks = DayChecks()
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: speed-bump-seed76
            start: 2026-11-24T07:00
            timeZone: Asia/Tokyo
            profile: \(profile)
            seed: 76
            end: after 1h48m9s
            steps:
              - {after: 4m37s, open: X}
              - {after: 2h46m33s, open: TikTok}
              - {after: 28m39s, press: primary}
              - {after: 15m14s, close: null}
              - {after: 31m24s, open: TikTok}
              - {after: 14m41s, open: Discord}
              - {after: 17m34s, open: Speed Bump}
              - {after: 6m12s, forceQuit: Speed Bump}
              - {after: 22s, press: secondary}
              - {after: 9m36s, open: TikTok}

            """
            checks.add(configuration, scenario, expectations: nil, profile) { run in
                XCTAssertTrue(run.events("deviceactivity.event-did-reach-threshold").contains { $0.bodyValue["activity"]?.stringValue == "speed-bump.resume" },
                              "\(profile): the threshold after the cooldown was not the one registered ahead")
            }
        }
        try assertDaysHold(checks)
    }

    /// Days around it: four zones, a dismiss at a random second, 5–14 minutes of the dismissed app in the cooldown, then
    /// picked apps until past the threshold. Under both profiles each day holds the invariant: the threshold after the
    /// cooldown comes within the minute.
    func testThresholdsAfterACooldownHold() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let zones = ["Asia/Tokyo", "Europe/Berlin", "America/New_York", "Australia/Sydney"]
        let apps = ["Instagram", "TikTok", "Facebook", "X"]
        var random = SeededRandom(seed: 0x76)
        let checks = DayChecks()
        for day in 0..<4 {
            let steps = ["  - {at: \"08:01\", open: \(apps[day])}",
                         "  - {after: 31m, press: primary}",
                         "  - {after: \(Int.random(in: 5...14, using: &random))m\(Int.random(in: 0...59, using: &random))s, home: true}",
                         "  - {after: \(Int.random(in: 2...10, using: &random))m\(Int.random(in: 0...59, using: &random))s, open: \(apps.randomElement(using: &random)!)}",
                         "  - {after: 35m, home: true}"]
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-after-a-cooldown-\(day)
                start: 2026-11-24T08:00
                timeZone: \(zones[day])
                profile: \(profile)
                seed: \(76 + day)
                end: after 5m
                steps:
                \(steps.joined(separator: "\n"))

                """
                checks.add(configuration, scenario, expectations: nil, "day \(day), \(profile):\n\(scenario)")
            }
        }
        try assertDaysHold(checks)
    }

    /// A cooldown that ends on the next device day (explore speed-bump 2009: dismissed at 23:46:05 Berlin, the cooldown
    /// to 00:01:05): the threshold registered ahead on a window from 00:01:05 to the day's end would be read by the OS on
    /// today, where it already runs, so it started at once and the monitor planned it again until ack-timeout. Days
    /// around it: four zones, the dismiss at a random minute between 23:37 and 23:55, both profiles; each day plays
    /// to its end and holds the invariant.
    func testACooldownThatEndsAfterTheDevicesMidnightDoesNotLoop() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let zones = ["Europe/Berlin", "Asia/Tokyo", "America/New_York", "Australia/Sydney"]
        var random = SeededRandom(seed: 2009)
        let checks = DayChecks()
        for day in 0..<4 {
            let opened = "23:\(String(format: "%02d", Int.random(in: 6...24, using: &random)))"
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-cooldown-past-midnight-\(day)
                start: 2026-11-24T22:00
                timeZone: \(zones[day])
                profile: \(profile)
                seed: \(2009 + day)
                end: after 40m
                steps:
                  - {at: "\(opened)", open: Instagram}
                  - {after: 31m, press: primary}
                  - {after: 3m, home: true}
                  - {after: 20m, open: Instagram}

                """
                checks.add(configuration, scenario, expectations: nil, "day \(day), \(profile):\n\(scenario)") { run in
                    XCTAssertLessThan(run.events("deviceactivity.interval-did-start").count, 50, "day \(day), \(profile): an interval started again and again")
                }
            }
        }
        try assertDaysHold(checks)
    }
}

/// The ruling's two delays with a pause (explore speed-bump 10563, `ios-realistic`): after a cooldown and a clock or
/// zone change the OS's count is the daily registration's, short by the use between the cooldown's end and the
/// resume's whole-minute callback. A person who stops within that use past the checker's threshold gets no crossing
/// until they come back, hours later; the first of the two delays is a minute of use, not of time (docs/explore.md,
/// "The first of the two delays is a minute of use").
extension SpeedBumpCooldownTests {
    /// 10563 as shrunk, and days like it: a picked app dismissed at a random second, used across the cooldown's end
    /// (so the daily registration misses some of the count), a clock or zone change (the same date), the app put away a
    /// few seconds past the checker's threshold — fewer than the OS's count lacks — and opened again three hours later.
    /// Both profiles, side by side; each holds. Under `ios-realistic` each day has the case itself: no threshold after
    /// the dismiss until the reopening, hours past the checker's threshold (so two minutes of wall time would not hold
    /// it), then the daily one's.
    func testAThresholdAfterACooldownAndAPauseWithinItsMinuteOfUse() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let days: [(zone: String, change: String)] = [
            ("Europe/Berlin", "timeZone: Europe/London"),        // an hour back, the same date
            ("America/Los_Angeles", "timeZone: America/New_York"), // 3 h forward (10563 the other way)
            ("America/New_York", "setClock: \"-3h\""),          // the clock back, the same date
            ("Europe/Berlin", "timeZone: Asia/Dubai"),          // 3 h forward
        ]
        let apps = ["Snapchat", "Instagram", "TikTok", "Facebook"]
        var random = SeededRandom(seed: 10563)
        let checks = DayChecks()
        var scenarios = [CooldownDay(name: "speed-bump-seed10563", start: Self.seed10563.start, zone: "Europe/Berlin", seed: 10563,
                                     end: Self.seed10563.end, steps: Self.seed10563.steps)]
        for (index, day) in days.enumerated() {
            let app = apps[index]
            let second = Int.random(in: 1...25, using: &random)      // the cooldown ends this second past a minute
            let across = Int.random(in: 5...50, using: &random)      // used this long past the cooldown's end's minute
            let away = Int.random(in: 30...300, using: &random)
            let change = Int.random(in: 3...12, using: &random) * 60
            // The cooldown ends at 08:47:second; the app is used 60 + `across` s from then before going home, and again
            // from its reopening until `past` s after the checker's threshold — fewer than the 60 − second s the daily
            // count lacks (the use before its registration at 08:48:00).
            let lacking = 60 - second
            let past = Int.random(in: 3...(lacking - 5), using: &random)
            let untilHome = 30 * 60 - (60 + across) + past
            let steps: [String] = [
                "  - {at: \"08:01:\(String(format: "%02d", second))\", open: \(app)}",
                "  - {after: 31m, press: primary}",
                "  - {after: 16m\(across)s, home: true}",
                "  - {after: \(away)s, open: \(app)}",
                "  - {after: \(change)s, \(day.change)}",
                "  - {after: \(untilHome - change)s, home: true}",
                "  - {after: 3h, open: \(app)}",
                "  - {after: 3m, home: true}",
            ]
            scenarios.append(CooldownDay(name: "speed-bump-paused-at-the-threshold-\(index)", start: "2026-11-24T08:00", zone: day.zone,
                                         seed: 10564 + index, steps: steps.joined(separator: "\n")))
        }
        for day in scenarios {
            day.addUnderBothProfiles(configuration, to: checks) { run, context in
                let dismissed = try XCTUnwrap(run.events("shield.action.handled").last, context).time
                let reopened = try XCTUnwrap(run.events("activity.app.opened").last { $0.bodyValue["reason"]?.stringValue == "user" }, context).time
                let after = run.events("deviceactivity.event-did-reach-threshold").filter { $0.time > dismissed }
                if run.events("device.clock-changed").isEmpty {
                    // A zone change leaves the interval registered ahead running (docs/fidelity.md § 4): its count, from the
                    // cooldown's end, brings the threshold.
                    XCTAssertEqual(after.first?.bodyValue["activity"]?.stringValue, "speed-bump.resume", context)
                } else {
                    XCTAssertEqual(after.map { $0.bodyValue["activity"]?.stringValue }, ["speed-bump.daily"], context)
                    XCTAssertTrue(after.allSatisfy { $0.time > reopened }, "the crossing came before the pause: \(context)")
                }
            }
        }
        try assertDaysHold(checks)
    }

    /// Speed-bump 10563 as shrunk (57 steps to 10), from Berlin: Snapchat dismissed at 19:18:14 UTC, the cooldown to
    /// 19:33:14 and its use on to 19:41:02 (the daily threshold registered at 19:34:00, 46 s short), a move to Los
    /// Angeles at 21:36:40 (the same date), Snapchat used past its threshold (22:53:57 UTC) to 22:54:09 and opened again at
    /// 22:55:58; before the fix usable until 22:56:59, 3 min 2 s past the threshold.
    static let seed10563 = (start: "2026-11-24T08:02", end: "after 1m1s", steps: """
          - {after: 19h39m10s, open: Facebook}
          - {after: 16h36m49s, open: Snapchat}
          - {after: 15s, press: primary}
          - {after: 22m48s, open: Discord}
          - {after: 24m42s, open: Snapchat}
          - {after: 4m2s, open: LinkedIn}
          - {after: 1h26m54s, timeZone: America/Los_Angeles}
          - {after: 59m7s, open: Snapchat}
          - {after: 18m22s, close: null}
          - {after: 1m49s, open: Snapchat}
        """)
}
