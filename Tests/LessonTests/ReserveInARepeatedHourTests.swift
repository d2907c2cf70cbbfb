import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// A check the OS refused at the activity limit goes to the reserve slot; when it falls in the second pass of a
/// repeated DST hour, no window starts when due there (the OS reads the wall time as the first pass, already over), so
/// the reserve holds it as an interval's end warning, its start meaning nothing (MonitorKit's
/// `CheckChain.registerReserve`). Found by explore on Bedtime, seed 942 (faithful and ios-realistic): a pass granted
/// at 02:19 in Sydney's second 02:00–03:00 with the limit full ran on for 6 minutes past its end; with the reserve's
/// start taken as its check, the chain then looped.
extension ExploreRegressionTests {
    /// Bedtime nights with the activity limit filled before midnight and "5 more minutes" pressed at minutes 3, 19, 40
    /// and 57 of the repeated hour's second pass, in three zones' fall-back nights, both profiles: each pass ends on
    /// time, and nothing loops.
    func testAPassEndingInARepeatedHourWithTheLimitFullEndsOnTime() throws {
        let configuration = try ScenarioRun.shippedConfiguration("bedtime")
        let checks = DayChecks()
        // The night's date, its zone, and how long after 23:40 (true time) the repeated hour's second pass begins.
        let nights = [("2026-04-04", "Australia/Sydney", 3 * 3600 + 20 * 60), ("2026-10-24", "Europe/Berlin", 3 * 3600 + 20 * 60),
                      ("2026-10-31", "America/New_York", 2 * 3600 + 20 * 60)]
        for (date, zone, secondPass) in nights {
            for minute in [3, 19, 40, 57] {
                for profile in ["faithful", "ios-realistic"] {
                    let scenario = """
                        name: bedtime-pass-in-a-repeated-hour
                        start: \(date)T21:10
                        timeZone: \(zone)
                        profile: \(profile)
                        seed: 942
                        end: after 7h
                        steps:
                          - {at: "23:40", fillActivityLimit: true}
                          - {after: \(secondPass + minute * 60)s, open: Chess}
                          - {after: 6s, press: secondary}
                          - {after: 4m, home: true}
                          - {after: 2m, open: Chess}

                        """
                    checks.add(configuration, scenario, expectations: nil, "\(zone) minute \(minute), \(profile)") { run in
                        XCTAssertFalse(run.events("shield.action.handled").isEmpty, "\(zone) minute \(minute): no pass was asked for")
                    }
                }
            }
        }
        try assertDaysHold(checks)
    }
}
