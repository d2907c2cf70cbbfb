import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// Fall-backs that take the clock back across midnight to the day before (`make zones` found them): America/St_Johns
/// and America/Goose_Bay at 00:01 until 2010, America/Moncton until 2006, Antarctica/Casey three hours in 2010. The
/// day begins, then the clock shows the day before again until its midnight comes a second time. The date shown is the
/// day before; the OS's daily interval, begun at the first midnight, runs on (`ScheduleCalendar.dailyInterval`).
extension DaylightSavingTests {
    /// Generated nights: a focus window placed in the repeated stretch as `transitionNights` places them (from its first
    /// minute, in its middle, or up to its last, across the midnight it holds), and a speed bump's daily threshold reached
    /// before the first midnight, in the second pass and after the second midnight, apps opened in both passes. Under
    /// both profiles every day holds. `make test` plays St. John's 2009 night; `make zones` every such night of every
    /// zone from 1970 to 2037. The slice's speed bump reached in the second pass (St. John's, 2009-10-31 23:30 again)
    /// was lifted at the second midnight: the product keyed its day by the date shown, not by the OS's day.
    func testDaysWhereAFallBackTakesTheClockBackAcrossMidnight() throws {
        let zones = ZonesLane.isFull ? ZonesLane.zones : [try XCTUnwrap(TimeZone(identifier: "America/St_Johns"))]
        let years = ZonesLane.isFull ? 1970...2037 : 2009...2009
        var nights = Self.transitionNights(zones: zones, years: years, where: Self.crossesMidnightBackwards)
        // Three placements a night: the full lane plays one in turn, the slice the window across the midnight the
        // stretch holds.
        nights = ZonesLane.isFull ? nights.enumerated().filter { $0.offset % 3 == $0.offset / 3 % 3 }.map(\.element) : nights.filter { $0.3 < $0.2 }
        XCTAssertFalse(nights.isEmpty, "the tz database has such nights")
        let (focus, speedBump) = (try ScenarioRun.shippedConfiguration("focus-window"), try ScenarioRun.shippedConfiguration("speed-bump"))
        var random = SeededRandom(seed: 0x26_0002)
        let checks = DayChecks()
        try Self.addFocusWindowNights(nights, shipped: focus, named: "focus-window-midnight-shown-twice", seeds: 0, random: &random, to: checks)
        let bumps = Self.speedBumpNights(zones: zones, years: years)
        XCTAssertEqual(bumps.count, ZonesLane.isFull ? nights.count : nights.count * 3, "a speed-bump day a night in the full lane, three in the slice")
        for (night, (zone, start, steps)) in bumps.enumerated() {
            for profile in ["faithful", "ios-realistic"] {
                let scenario = Self.nightScenario("speed-bump-midnight-shown-twice-\(night)", start: start, zone: zone, profile: profile, seed: night, steps: steps)
                checks.add(speedBump, scenario, expectations: nil, "speed-bump night \(night) (\(zone)), \(profile):\n\(scenario)")
            }
        }
        if ZonesLane.isFull { print("MidnightShownTwiceTests: \(nights.count) focus-window nights, \(bumps.count) speed-bump nights, \(checks.days.count) days played") }
        try assertDaysHold(checks, everyDay: true)
    }

    /// Speed-bump days on each night whose fall-back takes the clock back across midnight: the day starts half an hour
    /// before the repeated stretch's first pass; Instagram is used for 34 minutes so that the 30-minute threshold is
    /// reached 20 minutes before the first midnight, in the middle of the second pass before the midnight comes again,
    /// or 15 minutes after it; then TikTok is opened for 3 minutes every 25 until an hour past the second midnight.
    /// The full lane plays one placement a night, in turn; the slice all three.
    static func speedBumpNights(zones: [TimeZone], years: ClosedRange<Int>) -> [(String, String, [String])] {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm"
        var days: [(String, String, [String])] = []
        for zone in zones {
            for transition in ZonesLane.transitions(in: zone, years: years) {
                let before = Self.wallMinute(transition.addingTimeInterval(-60), zone) + 1, after = Self.wallMinute(transition, zone)
                guard crossesMidnightBackwards(before: before, after: after) else { continue }
                // Minutes from the transition: the first midnight, the second, and the start (before the first pass).
                let midnight = Int((Double(before - 1) / 1_440).rounded(.down)) * 1_440
                let (first, second, start) = (midnight - before, midnight - after, after - before - 30)
                let reaches = [first - 20, second / 2, second + 15]
                let placements = ZonesLane.isFull ? [reaches[days.count % 3]] : reaches
                formatter.timeZone = zone
                for reach in placements {
                    var steps = ["  - {after: \(reach - 31 - start)m, open: Instagram}", "  - {after: 34m, home: true}"]
                    var at = reach + 3
                    while at + 25 < second + 60 {
                        steps += ["  - {after: 22m, open: TikTok}", "  - {after: 3m, home: true}"]
                        at += 25
                    }
                    days.append((zone.identifier, formatter.string(from: transition.addingTimeInterval(Double(start) * 60)), steps))
                }
            }
        }
        return days
    }
}
