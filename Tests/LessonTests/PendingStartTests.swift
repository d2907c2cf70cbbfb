import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// explore's habit-lock 2319 (issue #9, docs/explore.md): under `whole-minute-callbacks` an interval's start waits for
/// the next whole minute, and a broker that crashed meanwhile forgot it — the reload took the interval as announced. With
/// the 20-activity limit full the reserve holds the unlock's only re-check, so nothing re-blocked after the unlock (78
/// min past it in 2319). The OS now keeps a waiting start and announces it after the reload.
extension ExploreRegressionTests {
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
