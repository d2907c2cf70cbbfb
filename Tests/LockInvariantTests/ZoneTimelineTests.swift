import Configuration
import Foundation
@testable import LockInvariant
import ShieldBusTestSupport
import XCTest

/// The checker's wall-clock cuts (a local midnight, a focus hour's start or end) in every zone the device was in,
/// however briefly — explore found days where a zone held for two hours, or a zone whose offset DST changed that
/// day, had its cuts missed, and a whole stretch was judged by its first instant (focus-window 13, two-products 30).
final class ZoneTimelineTests: XCTestCase {
    private func zone(_ name: String) -> TimeZone { TimeZone(identifier: name)! }

    private func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    /// The property, checked minute by minute: every instant at which the wall clock of the zone in force shows a
    /// boundary (over the day of `day` and the days around it) is found. `first` holds until `enter`, `brief` until
    /// `leave`, then `last`.
    private func checkCuts(_ first: TimeZone, _ brief: TimeZone, _ last: TimeZone, enter: Date, leave: Date, day: Date,
                           boundaries: [Double], run: String) -> Int {
        var timeline = ZoneTimeline(initial: first)
        timeline.change(to: brief, at: enter)
        timeline.change(to: last, at: leave)
        let range = DateInterval(start: day.addingTimeInterval(-86_400), end: day.addingTimeInterval(3 * 86_400))
        let found = Set(timeline.instants(in: range, wallSeconds: boundaries).map { Int64(($0.timeIntervalSince1970).rounded()) })
        var expected: Set<Int64> = []
        var instant = range.start
        while instant < range.end {
            let wall = timeline.wallTime(at: instant).secondOfDay
            for boundary in boundaries where abs(wall - boundary) < 0.5 {
                expected.insert(Int64(instant.timeIntervalSince1970.rounded()))
            }
            instant.addTimeInterval(60)
        }
        let missed = expected.subtracting(found)
        XCTAssertTrue(missed.isEmpty, "\(run): \(first.identifier) → \(brief.identifier) at \(enter) → \(last.identifier) at \(leave): missed \(missed.sorted().map { Date(timeIntervalSince1970: Double($0)) })")
        return expected.count
    }

    /// Property: for generated stays (a zone held 30 min to 6 h between two others, on ordinary and DST days),
    /// every instant at which the wall clock of the zone in force shows a boundary is found (checked minute by minute).
    func testEveryWallClockCutIsFoundInAZoneHeldBriefly() throws {
        let zones = ["Europe/London", "Australia/Sydney", "America/New_York", "Asia/Tokyo", "GMT", "Europe/Berlin", "America/Los_Angeles"]
        // Ordinary days and the 2026 DST days of these zones (Sydney Apr 5 / Oct 4, New York Mar 8 / Nov 1, Europe Mar 29 / Oct 25).
        let days = ["2026-04-05", "2026-10-04", "2026-03-08", "2026-11-01", "2026-03-29", "2026-10-25", "2026-06-15", "2026-12-01"]
        var random = SeededRandom(seed: 13)
        func next(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &random) }
        for run in 0..<120 {
            let first = zone(zones[next(zones.count)]), brief = zone(zones[next(zones.count)]), last = zone(zones[next(zones.count)])
            let day = date(days[next(days.count)] + "T00:00:00Z")
            let enter = day.addingTimeInterval(Double(next(48 * 60)) * 60)
            let leave = enter.addingTimeInterval(Double(30 + next(330)) * 60)
            _ = checkCuts(first, brief, last, enter: enter, leave: leave, day: day, boundaries: [0, 13 * 3_600, Double(next(1_440)) * 60],
                          run: "run \(run)")
        }
    }

    /// The same property around the transitions of 2026 and 2027 of every zone (`make zones`, `SHIELDBUS_ZONES_FULL=1`:
    /// every zone file of the tz database; `make test`: a seeded twentieth of them): the zone entered up to 6 h before
    /// the transition and held across it, from and to zones of other offsets, with boundaries at midnight, at the
    /// wall times on either side of the jump and at a random minute.
    func testEveryWallClockCutIsFoundAcrossEveryZonesTransitions() throws {
        let others = ["UTC", "Asia/Tokyo", "America/Los_Angeles", "Asia/Kolkata", "Pacific/Kiritimati"].map(zone)
        var random = SeededRandom(seed: 26)
        func next(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &random) }
        var runs = 0, cuts = 0
        for brief in ZonesLane.zones {
            for transition in ZonesLane.transitions(in: brief, years: 2026...2027) {
                // The draws are made for every transition, so the slice is the same runs as the full lane's.
                let first = others[next(others.count)], last = others[next(others.count)]
                let enter = transition.addingTimeInterval(-Double(next(6 * 60)) * 60)
                let leave = transition.addingTimeInterval(Double(30 + next(330)) * 60)
                let anyMinute = Double(next(1_440)) * 60
                guard ZonesLane.isFull || next(20) == 0 else { continue }
                let before = transition.addingTimeInterval(-1).timeIntervalSince1970 + 1 + Double(brief.secondsFromGMT(for: transition.addingTimeInterval(-1)))
                let after = transition.timeIntervalSince1970 + Double(brief.secondsFromGMT(for: transition))
                let edges = [before, after].map { ($0.truncatingRemainder(dividingBy: 86_400) + 86_400).truncatingRemainder(dividingBy: 86_400) }
                let day = Date(timeIntervalSince1970: (transition.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
                cuts += checkCuts(first, brief, last, enter: enter, leave: leave, day: day, boundaries: [0, anyMinute] + edges,
                                  run: "\(brief.identifier) around \(transition)")
                runs += 1
            }
        }
        print("ZoneTimelineTests: \(runs) stays across a transition, \(cuts) wall-clock cuts checked minute by minute")
        XCTAssertGreaterThan(runs, ZonesLane.isFull ? 400 : 10)
    }
}
