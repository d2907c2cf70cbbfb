import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A broker crash in the middle of a day forgets neither counted use nor a check that was due.
/// Each test keeps, in its doc comment, the explore failure that found it.
final class BrokerCrashDayTests: RegressionDayCase {}

extension BrokerCrashDayTests {
    /// explore, speed-bump, seeds 11, 301, 502, 505 and 506 (docs/explore.md), seed 11 shrunk to three steps: Facebook
    /// used for 4 min 18 s, the broker crashes, Snapchat opened — the daily threshold fired 30 minutes after the crash,
    /// 4 min 18 s late. The OS's usage history and the threshold's delivered callbacks lived only in memory, and the
    /// reload after the crash counted the interval from zero. Both are now in device.sqlite, and the reload replays
    /// the interval's use. Both profiles; under ios-realistic the callback comes at the next whole minute.
    func testABrokerCrashDoesNotForgetTheUseCountedTowardAThreshold() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let checks = DayChecks()
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: speed-bump-crash-forgets-usage
            start: 2026-03-07T07:31
            timeZone: America/New_York
            profile: \(profile)
            seed: 11
            end: day 1 08:05
            steps:
              - {at: "07:31:06", open: Facebook}
              - {after: 4m18s, crashBroker: true}
              - {after: 0s, open: Snapchat}
            expect:
              - {at: "08:00:50", usable: Snapchat}
              - {at: "08:02:10", shielded: Snapchat}

            """
            checks.add(configuration, scenario, expectations: 2, profile)
        }
        try assertDaysHold(checks)
    }

    /// The property behind the test above, on generated days: selected apps used in stretches (switching apps, going
    /// home, the broker crashing at random instants during counted use, once more after the threshold), in several
    /// zones and on DST days. The threshold is reached exactly once, when the use adds up to 30 minutes — at that
    /// instant under faithful, within the next whole minute under ios-realistic — and the lock invariant holds.
    func testTheSpeedBumpsThresholdCountsUseAcrossBrokerCrashes() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let apps = ["Instagram", "TikTok", "Facebook", "X", "Snapchat"]
        let places = [("America/New_York", "2026-03-07"), ("America/New_York", "2026-03-08"), ("Europe/Berlin", "2026-10-25"),
                      ("Australia/Sydney", "2026-11-24"), ("Asia/Tokyo", "2026-11-24")]
        var crashes = 0
        let checks = DayChecks()
        for seed in UInt64(1)...6 {
            var random = SeededRandom(seed: seed)
            let (zone, date) = places[Int(seed - 1) % places.count]
            var steps: [String] = [], used = 0, elapsed = 5 * 60, crashesBefore = 0
            var thresholdAt: Int?  // seconds from the start of the day's scenario
            steps.append("  - {after: \(elapsed)s, open: \(apps.randomElement(using: &random)!)}")
            while thresholdAt == nil {
                let stretch = Int.random(in: 60...(9 * 60), using: &random)
                if used + stretch >= 1800 { thresholdAt = elapsed + 1800 - used }
                used += stretch
                elapsed += stretch
                switch Int.random(in: 0..<4, using: &random) {
                case let kind where kind < 2 && thresholdAt == nil:
                    // The crash closes the app; it comes back after a gap that counts nothing.
                    let gap = Int.random(in: 0...90, using: &random)
                    steps.append("  - {after: \(stretch)s, crashBroker: true}")
                    steps.append("  - {after: \(gap)s, open: \(apps.randomElement(using: &random)!)}")
                    elapsed += gap
                    crashesBefore += 1
                case 2:
                    steps.append("  - {after: \(stretch)s, open: \(apps.randomElement(using: &random)!)}")
                default:
                    let away = Int.random(in: 60...(20 * 60), using: &random)
                    steps.append("  - {after: \(stretch)s, home: true}")
                    steps.append("  - {after: \(away)s, open: \(apps.randomElement(using: &random)!)}")
                    elapsed += away
                }
            }
            // One more crash after the threshold: its callback is not delivered again.
            steps.append("  - {after: 2m, crashBroker: true}")
            crashes += crashesBefore
            let threshold = try XCTUnwrap(thresholdAt)
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: speed-bump-threshold-across-crashes-\(seed)
                start: \(date)T07:00
                timeZone: \(zone)
                profile: \(profile)
                seed: \(seed)
                end: after 5m
                steps:
                \(steps.joined(separator: "\n"))

                """
                let context = "seed \(seed), \(profile):\n\(scenario)"
                checks.add(configuration, scenario, expectations: nil, context) { run in
                    let start = try XCTUnwrap(run.events("bus.started").first).time
                    let reached = run.events("deviceactivity.event-did-reach-threshold").filter { $0.bodyValue["event"]?.stringValue == "speed-bump.limit" }
                    XCTAssertEqual(reached.count, 1, context)
                    let late = (try XCTUnwrap(reached.first, context).time - start) / 1000 - Int64(threshold)
                    XCTAssertTrue(profile == "faithful" ? late == 0 : (0..<60).contains(late), "\(late) s late; \(context)")
                }
            }
        }
        try assertDaysHold(checks, everyDay: true)
        XCTAssertGreaterThanOrEqual(crashes, 12, "the days crash the broker during counted use (\(crashes) times)")
    }
}

/// explore's habit-lock 2319 (issue #9, docs/explore.md): under `whole-minute-callbacks` an interval's start waits for
/// the next whole minute, and a broker that crashed meanwhile forgot it — the reload took the interval as announced. With
/// the 20-activity limit full the reserve holds the unlock's only re-check, so nothing re-blocked after the unlock (78
/// min past it in 2319). The OS now keeps a waiting start and announces it after the reload.
extension BrokerCrashDayTests {
    /// Days around it: the limit filled, an unlock whose first re-check (15 minutes on, in the reserve) is due at a random
    /// second, the broker crashing 1 s to just under a minute later, before that check's whole minute; the app in front
    /// is shielded after the unlock's end. Both profiles; under `ios-realistic` every day fails without the fix.
    func testAReserveCheckDueWhenTheBrokerCrashesStillComes() throws {
        let configuration = try ScenarioRun.shippedConfiguration("habit-lock")
        var random = SeededRandom(seed: 0x2319)
        for day in 0..<4 {
            let unlock = 9 * 3600 + 7 * 60 + Int.random(in: 5...40, using: &random)
            let crash = unlock + 15 * 60 + Int.random(in: 1...(58 - unlock % 60), using: &random)
            func clock(_ second: Int) -> String { String(format: "%02d:%02d:%02d", second / 3600, second / 60 % 60, second % 60) }
            for profile in ["faithful", "ios-realistic"] {
                let scenario = """
                name: reserve-check-broker-crash-\(day)
                start: 2026-11-24T09:00
                timeZone: Europe/Berlin
                profile: \(profile)
                seed: \(day + 2319)
                steps:
                  - {at: "09:00", open: Habit Lock}
                  - {at: "09:05", habit: Read}
                  - {after: 0s, habit: Walk}
                  - {after: 1m, fillActivityLimit: true}
                  - {at: "\(clock(unlock))", habit: Stretch}
                  - {after: 20s, open: Instagram}
                  - {at: "\(clock(crash))", crashBroker: true}
                  - {after: 2m, open: Instagram}
                end: day 1 \(clock(unlock + 35 * 60))
                expect:
                  - {at: "\(clock(crash + 3 * 60))", usable: Instagram}
                  - {at: "\(clock(unlock + 32 * 60 + 30))", shielded: Instagram}

                """
                let run = try assertDayHolds(configuration, scenario, expectations: 2, "day \(day), \(profile):\n\(scenario)")
                XCTAssertFalse(run.events("x.monitor.recheck-refused").isEmpty, "\(profile): no re-check went to the reserve, so the day tests nothing")
                XCTAssertFalse(run.events("bus.started").filter { $0.bodyValue["after"]?.stringValue == "crash" }.isEmpty, "\(profile): the broker did not crash")
            }
        }
    }
}
