import Foundation
import XCTest
@testable import ScreenTime

/// ScheduleCalendar's date arithmetic on every IANA zone's transitions of 2026 and 2027 — not only on the four zones
/// the other tests name: jumps of 30 minutes (Australia/Lord_Howe), at 02:45 (Pacific/Chatham), at midnight
/// (America/Santiago, America/Havana), forward and back. The oracle knows only the zone's offset at an instant
/// (`secondsFromGMT(for:)`, the tz database's primitive), not Foundation's calendar routines: a wall time's first
/// instant is found by bisection between the offsets around it.
final class EveryZoneTransitionTests: XCTestCase {
    /// Every zone the system knows, and the current names tzdata keeps only as links.
    static let zones = Set(TimeZone.knownTimeZoneIdentifiers + ["Asia/Kolkata", "Europe/Kyiv", "America/Nuuk"]).sorted()
        .compactMap(TimeZone.init(identifier:))

    /// The transitions of 2026 and 2027 in a zone.
    static func transitions(in zone: TimeZone) -> [Date] {
        var found: [Date] = []
        var from = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00Z
        let end = Date(timeIntervalSince1970: 1_830_297_600)    // 2028-01-01T00:00Z
        while let next = zone.nextDaylightSavingTimeTransition(after: from), next < end, found.count < 8 {
            found.append(next)
            from = next
        }
        return found
    }

    /// The wall clock at an instant, as seconds since 1970 read in the zone.
    static func wall(_ instant: Date, _ zone: TimeZone) -> Double {
        instant.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: instant))
    }

    /// The first instant whose wall time is `target` or later: the wall time's first occurrence, or, when the zone
    /// skips it, the instant after the gap (`.nextTime`).
    static func firstInstant(showing target: Double, in zone: TimeZone) -> Date {
        let day = 86_400.0
        var low = Date(timeIntervalSince1970: target - Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: target - day))) - day / 2)
        var high = Date(timeIntervalSince1970: target - Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: target + day))) + day / 2)
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
    /// checking `to` and the last second before a transition between is enough (the instant of a fall-back itself
    /// shows the earlier time: the later one is never on the clock there).
    static func firstAtOrPast(_ target: Double, _ zone: TimeZone, from: Date, to: Date) -> Bool {
        if wall(to, zone) >= target { return true }
        if let transition = zone.nextDaylightSavingTimeTransition(after: from), transition <= to {
            return wall(transition.addingTimeInterval(-1), zone) >= target
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

    func testNextDateMatchesAroundEveryTransitionInEveryZone() {
        var checked = 0, failures: [String] = []
        for zone in Self.zones {
            let calendar = ScheduleCalendar(timeZone: zone)
            for transition in Self.transitions(in: zone) {
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
                            failures.append("\(zone.identifier): after \(start) matching \(hour):\(minute): got \(got.map { "\($0)" } ?? "nil"), expected \(expected)")
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 3_000, "the zones with transitions were reached")
        XCTAssertEqual(failures.count, 0, "\(failures.count) of \(checked):\n" + failures.prefix(20).joined(separator: "\n"))
    }

    /// The first instant of the day containing an instant, and of the next day, at instants around every transition.
    func testDayStartsAroundEveryTransitionInEveryZone() {
        var checked = 0, failures: [String] = []
        for zone in Self.zones {
            let calendar = ScheduleCalendar(timeZone: zone)
            for transition in Self.transitions(in: zone) {
                for offset in [-86_400.0, -3_601, -1, 0, 1, 1_800, 3_599, 7_200, 43_200] {
                    let instant = transition.addingTimeInterval(offset)
                    let today = (Self.wall(instant, zone) / 86_400).rounded(.down) * 86_400
                    let start = Self.firstInstant(showing: today, in: zone), next = Self.firstInstant(showing: today + 86_400, in: zone)
                    checked += 1
                    if calendar.startOfDay(containing: instant) != start {
                        failures.append("\(zone.identifier): start of the day of \(instant): got \(calendar.startOfDay(containing: instant)), expected \(start)")
                    }
                    if calendar.startOfNextDay(after: instant) != next {
                        failures.append("\(zone.identifier): start of the day after \(instant): got \(calendar.startOfNextDay(after: instant)), expected \(next)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 2_000)
        XCTAssertEqual(failures.count, 0, "\(failures.count) of \(checked):\n" + failures.prefix(20).joined(separator: "\n"))
    }
}
