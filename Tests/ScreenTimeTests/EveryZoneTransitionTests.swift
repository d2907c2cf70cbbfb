import Foundation
import ShieldBusTestSupport
import XCTest
@testable import ScreenTime

/// ScheduleCalendar's date arithmetic on every IANA zone's transitions — not only on the four zones the other tests
/// name: jumps of 30 minutes (Australia/Lord_Howe), at 02:45 (Pacific/Chatham), at midnight (America/Santiago,
/// America/Havana), of a whole day (Pacific/Apia, Pacific/Kwajalein), forward and back. `make test` checks the zones
/// Foundation lists over two years; `make zones` (`SHIELDBUS_ZONES_FULL=1`) every zone file of the tz database from
/// 1970 to 2037 (`ZonesLane`). The oracle knows only the zone's offset at an instant (`secondsFromGMT(for:)`, the tz
/// database's primitive), not Foundation's calendar routines: a wall time's first instant is found by bisection
/// between the offsets around it.
final class EveryZoneTransitionTests: XCTestCase {
    static let zones = ZonesLane.zones

    static func transitions(in zone: TimeZone) -> [Date] { ZonesLane.transitions(in: zone) }

    /// The disagreements by zone, with the years they fall in: "America/Goose_Bay 1987–2010: 96".
    static func summary(_ failures: [(zone: String, instant: Date)]) -> String {
        var byZone: [String: [Int]] = [:]
        for failure in failures { byZone[failure.zone, default: []].append(1970 + Int(failure.instant.timeIntervalSince1970 / 31_556_952)) }
        return byZone.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.min()!)–\($0.value.max()!): \($0.value.count)" }.joined(separator: ", ")
    }

    /// The wall clock at an instant, as seconds since 1970 read in the zone.
    static func wall(_ instant: Date, _ zone: TimeZone) -> Double {
        instant.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: instant))
    }

    /// The first instant whose wall time is `target` or later: the wall time's first occurrence, or, when the zone
    /// skips it, the instant after the gap (`.nextTime`).
    /// With `after`: the first such instant after it (a fall-back across midnight shows a day's start twice: the
    /// next day starts at the second, when the date changes for good).
    static func firstInstant(showing target: Double, in zone: TimeZone, after: Date? = nil) -> Date {
        // No offset is more than a day, so three days either side bracket the target whatever the zone skipped.
        var low = after ?? Date(timeIntervalSince1970: target - 3 * 86_400), high = Date(timeIntervalSince1970: target + 3 * 86_400)
        precondition(wall(low, zone) < target && wall(high, zone) >= target)
        // Not monotone across a fall-back, but the first instant at or past the target is still found: below it every
        // wall time is earlier than the target.
        while high.timeIntervalSince(low) > 0.5 {
            let middle = Date(timeIntervalSince1970: ((low.timeIntervalSince1970 + high.timeIntervalSince1970) / 2).rounded(.down))
            if middle == low { break }
            if Self.firstAtOrPast(target, zone, from: low, to: middle) { high = middle } else { low = middle }
        }
        return high
    }

    /// Whether some instant in (from, to] shows `target` or later: the wall clock goes back only at a fall-back, so
    /// checking `to` and the last second before each transition between is enough (the instant of a fall-back itself
    /// shows the earlier time: the later one is never on the clock there).
    static func firstAtOrPast(_ target: Double, _ zone: TimeZone, from: Date, to: Date) -> Bool {
        if wall(to, zone) >= target { return true }
        var after = from
        while let transition = zone.nextDaylightSavingTimeTransition(after: after), transition <= to {
            if wall(transition.addingTimeInterval(-1), zone) >= target { return true }
            after = transition
        }
        return false
    }

    /// The answer `nextDate(after:matching: {hour, minute})` must give: the first day's match strictly after `after`.
    static func expectedNext(after: Date, hour: Int, minute: Int, in zone: TimeZone) -> Date {
        let today = (wall(after, zone) / 86_400).rounded(.down) * 86_400
        for days in -1...3 {
            let target = today + Double(days) * 86_400 + Double(hour * 3600 + minute * 60)
            let instant = firstInstant(showing: target, in: zone)
            if instant > after { return instant }
        }
        preconditionFailure("no day matched")
    }

    /// `nextDate(after:matching: {hour, minute})` from before, just before and just after each transition, for wall
    /// times at the jump's edges and inside it. The full lane also counts where Foundation's own
    /// `nextDate(…, .nextTime)` disagrees with the oracle (a figure for docs/fidelity.md § 5, not a failure: none of
    /// ShieldBus's arithmetic uses it).
    func testNextDateMatchesAroundEveryTransitionInEveryZone() {
        var checked = 0, transitions = 0, failures: [String] = [], foundationDisagrees = 0, wrong: [(zone: String, instant: Date)] = []
        for zone in Self.zones {
            let calendar = ScheduleCalendar(timeZone: zone)
            var foundation = Calendar(identifier: .gregorian)
            foundation.timeZone = zone
            for transition in Self.transitions(in: zone) {
                transitions += 1
                let before = Self.wall(transition.addingTimeInterval(-1), zone) + 1, after = Self.wall(transition, zone)
                // Wall times at the jump's edges, inside it, and a minute on either side.
                let edges = [before - 60, before, (before + after) / 2, after - 60, after, after + 60, min(before, after) - 3600]
                for edge in edges {
                    let seconds = Int(edge.truncatingRemainder(dividingBy: 86_400) + 86_400) % 86_400
                    let (hour, minute) = (seconds / 3600, seconds % 3600 / 60)
                    for start in [transition.addingTimeInterval(-6 * 3600), transition.addingTimeInterval(-1), transition.addingTimeInterval(1)] {
                        let expected = Self.expectedNext(after: start, hour: hour, minute: minute, in: zone)
                        let got = calendar.nextDate(after: start, matching: DateComponents(hour: hour, minute: minute))
                        checked += 1
                        if got != expected {
                            wrong.append((zone.identifier, start))
                            failures.append("\(zone.identifier): after \(start) matching \(hour):\(minute): got \(got.map { "\($0)" } ?? "nil"), expected \(expected)")
                        }
                        if ZonesLane.isFull, foundation.nextDate(after: start, matching: DateComponents(hour: hour, minute: minute),
                                                                 matchingPolicy: .nextTime) != expected {
                            foundationDisagrees += 1
                        }
                    }
                }
            }
        }
        print("EveryZoneTransitionTests: \(Self.zones.count) zones, \(ZonesLane.years), \(transitions) transitions, \(checked) wall times "
              + "matched, \(failures.count) disagreements" + (ZonesLane.isFull ? "; Foundation's nextDate disagrees on \(foundationDisagrees)" : ""))
        XCTAssertGreaterThan(checked, 3_000, "the zones with transitions were reached")
        XCTAssertEqual(failures.count, 0, "\(failures.count) of \(checked) (\(Self.summary(wrong))):\n" + failures.prefix(20).joined(separator: "\n"))
    }

    /// The first instant of the day containing an instant, and of the next day, at instants around every transition.
    func testDayStartsAroundEveryTransitionInEveryZone() {
        let (checked, failures) = Self.checkDayStarts(in: Self.zones, years: ZonesLane.years)
        print("EveryZoneTransitionTests: \(checked) instants' day starts, \(failures.count) disagreements")
        XCTAssertGreaterThan(checked, 2_000)
        XCTAssertEqual(failures.count, 0, failures.summary)
    }

    /// The same, from 1970 to 2037 in the zones where a fall-back took the clock back across midnight to the day before
    /// (America/St_Johns and America/Goose_Bay at 00:01 until 2010, America/Moncton until 2006, Antarctica/Casey three
    /// hours in 2010: the day begins, then the clock shows the day before again, whose day it is until its midnight
    /// comes a second time) and in eight others spread over the zone list: `make test`'s slice of `make zones`' span.
    func testDayStartsWhereAFallBackTakesTheClockBackAcrossMidnight() throws {
        let others = stride(from: 26, to: Self.zones.count, by: Self.zones.count / 8).map { Self.zones[$0] }
        let zones = try ["America/St_Johns", "America/Goose_Bay", "America/Moncton", "Antarctica/Casey"].map { try XCTUnwrap(TimeZone(identifier: $0)) }
        let (checked, failures) = Self.checkDayStarts(in: zones + others, years: 1970...2037)
        XCTAssertGreaterThan(checked, 1_000)
        XCTAssertEqual(failures.count, 0, failures.summary)
    }

    /// The day St. John's fell back from 00:01 to 23:01 the day before (2009-11-01 03:31Z): the day of the second pass is
    /// October 31, begun at its own midnight, and the next day begins when the clock shows November's midnight again;
    /// the OS's daily interval is November 1's from its first midnight.
    func testTheDayOfASecondPassAcrossMidnightIsTheDayBefore() throws {
        let calendar = ScheduleCalendar(timeZone: try XCTUnwrap(TimeZone(identifier: "America/St_Johns")))
        let utc = { (text: String) in ISO8601DateFormatter().date(from: text)! }
        // 00:00:30 on November 1 (NDT, −2:30), then 23:30 on October 31 again (NST, −3:30).
        let firstPass = utc("2009-11-01T02:30:30Z"), secondPass = utc("2009-11-01T03:00:00Z")
        XCTAssertEqual(calendar.startOfDay(containing: firstPass), utc("2009-11-01T02:30:00Z"))
        XCTAssertEqual(calendar.startOfDay(containing: secondPass), utc("2009-10-31T02:30:00Z"))
        XCTAssertEqual(calendar.startOfNextDay(after: secondPass), utc("2009-11-01T03:30:00Z"), "November's midnight, shown again")
        XCTAssertEqual(calendar.startOfNextDay(after: firstPass), utc("2009-11-02T03:30:00Z"))
        // The OS's daily interval, a schedule from midnight to midnight, begun at November's first midnight, runs on.
        let november = DateInterval(start: utc("2009-11-01T02:30:00Z"), end: utc("2009-11-02T03:30:00Z"))
        XCTAssertEqual(calendar.dailyInterval(containing: firstPass), november)
        XCTAssertEqual(calendar.dailyInterval(containing: secondPass), november)
        XCTAssertEqual(calendar.dailyInterval(containing: utc("2009-11-01T02:29:59Z")),
                       DateInterval(start: utc("2009-10-31T02:30:00Z"), end: utc("2009-11-01T02:30:00Z")))
    }

    /// Day starts and next-day starts at nine instants around every transition of `zones` in `years`, against the oracle.
    static func checkDayStarts(in zones: [TimeZone], years: ClosedRange<Int>) -> (checked: Int, failures: Disagreements) {
        var checked = 0, failures = Disagreements()
        for zone in zones {
            let calendar = ScheduleCalendar(timeZone: zone)
            for transition in ZonesLane.transitions(in: zone, years: years) {
                for offset in [-86_400.0, -3_601, -1, 0, 1, 1_800, 3_599, 7_200, 43_200] {
                    let instant = transition.addingTimeInterval(offset)
                    let today = (Self.wall(instant, zone) / 86_400).rounded(.down) * 86_400
                    let start = Self.firstInstant(showing: today, in: zone), next = Self.firstInstant(showing: today + 86_400, in: zone, after: instant)
                    let (gotStart, gotNext) = (calendar.startOfDay(containing: instant), calendar.startOfNextDay(after: instant))
                    checked += 1
                    if gotStart != start || gotNext != next { failures.wrong.append((zone.identifier, instant)) }
                    if gotStart != start { failures.lines.append("\(zone.identifier): start of the day of \(instant): got \(gotStart), expected \(start)") }
                    if gotNext != next { failures.lines.append("\(zone.identifier): start of the day after \(instant): got \(gotNext), expected \(next)") }
                }
            }
        }
        return (checked, failures)
    }

    /// The answers that disagree with the oracle, and where.
    struct Disagreements {
        var lines: [String] = []
        var wrong: [(zone: String, instant: Date)] = []
        var count: Int { lines.count }
        var summary: String { "\(lines.count) (\(EveryZoneTransitionTests.summary(wrong))):\n" + lines.prefix(20).joined(separator: "\n") }
    }

    /// The transitions the tests walk are every change of offset: between two listed ones (and before the first, after
    /// the last) the offset sampled every six hours never changes — a whole day skipped (Pacific/Apia) included. The
    /// fast lane samples every fortieth zone.
    func testTheListedTransitionsAreEveryOffsetChange() {
        let zones = ZonesLane.isFull ? Self.zones : Self.zones.enumerated().filter { $0.offset % 40 == 7 }.map(\.element)
        let (first, last) = (ZonesLane.span().start, ZonesLane.span().end)
        var samples = 0, missed: [String] = []
        for zone in zones {
            var listed = ZonesLane.transitions(in: zone)[...]
            var instant = first, offset = zone.secondsFromGMT(for: instant)
            while instant < last {
                let next = instant.addingTimeInterval(6 * 3600), nextOffset = zone.secondsFromGMT(for: next)
                var crossed = false
                while let transition = listed.first, transition <= next {
                    if transition > instant { crossed = true }
                    listed.removeFirst()
                }
                if nextOffset != offset && !crossed { missed.append("\(zone.identifier): \(offset) s → \(nextOffset) s between \(instant) and \(next)") }
                (instant, offset) = (next, nextOffset)
                samples += 1
            }
        }
        XCTAssertGreaterThan(samples, 10_000)
        XCTAssertEqual(missed, [], "offset changes no transition lists")
    }
}
