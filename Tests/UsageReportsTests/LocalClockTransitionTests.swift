import Foundation
import XCTest
@testable import UsageReports

/// The report ledger's wall clock (`LocalClock`) around daylight-saving transitions, against a reference that knows
/// only each zone's offset at an instant (`secondsFromGMT(for:)`) and scans minute by minute: the day and hour each
/// instant is counted in, where its hour ends, and where each day begins and ends. Zones with jumps of 30, 60 and 120
/// minutes, a midnight skipped (Santiago, Havana) and a fall-back across midnight (St. John's, 2009).
final class LocalClockTransitionTests: XCTestCase {
    private static let cases: [(zone: String, years: ClosedRange<Int>)] = [
        ("Europe/Berlin", 2026...2027), ("America/New_York", 2026...2027), ("Australia/Lord_Howe", 2026...2027),
        ("Pacific/Chatham", 2026...2027), ("America/Santiago", 2026...2027), ("America/Havana", 2026...2027),
        ("Antarctica/Troll", 2026...2027), ("America/St_Johns", 2009...2009),
    ]

    /// The wall clock's reading of an instant in `zone`: seconds since 1970-01-01 as if the zone were UTC.
    private func local(_ instant: Int, _ zone: TimeZone) -> Int {
        instant + zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
    }

    private func floorDiv(_ a: Int, _ b: Int) -> Int { Int((Double(a) / Double(b)).rounded(.down)) }

    /// Every instant (to the second) at which the zone's offset changes within the years, by an hourly scan and bisection.
    private func transitions(_ zone: TimeZone, _ years: ClosedRange<Int>) -> [Int] {
        let first = Int(ISO8601DateFormatter().date(from: "\(years.lowerBound)-01-01T00:00:00Z")!.timeIntervalSince1970)
        let last = Int(ISO8601DateFormatter().date(from: "\(years.upperBound + 1)-01-01T00:00:00Z")!.timeIntervalSince1970)
        func offset(_ instant: Int) -> Int { zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))) }
        var found: [Int] = []
        for hour in stride(from: first, to: last, by: 3_600) where offset(hour) != offset(hour + 3_600) {
            var low = hour, high = hour + 3_600
            while high - low > 1 {
                let middle = (low + high) / 2
                if offset(middle) == offset(low) { low = middle } else { high = middle }
            }
            found.append(high)
        }
        return found
    }

    func testHourSlotsAndDaysMatchAMinuteByMinuteScanAroundEveryTransition() throws {
        var checked = 0
        for (name, years) in Self.cases {
            let zone = try XCTUnwrap(TimeZone(identifier: name))
            let clock = LocalClock(timeZone: zone)
            let changes = transitions(zone, years)
            XCTAssertFalse(changes.isEmpty, "\(name) changes its offset in \(years)")
            for change in changes {
                // Every minute from 3 hours before the change to 3 hours after, and the seconds either side of it.
                let instants = Array(stride(from: change - 3 * 3_600, through: change + 3 * 3_600, by: 60)) + [change - 1, change, change + 1]
                for instant in instants {
                    let reading = local(instant, zone)
                    let slot = clock.hourSlot(containing: Date(timeIntervalSince1970: TimeInterval(instant)))
                    let day = floorDiv(reading, 86_400)
                    XCTAssertEqual(slot.day, LocalDay(dayNumber: day), "\(name) at \(instant)")
                    XCTAssertEqual(slot.hour, (reading - day * 86_400) / 3_600, "\(name) at \(instant)")
                    // The slot ends at the first second whose wall hour or offset differs.
                    func sameHour(_ at: Int) -> Bool {
                        floorDiv(local(at, zone), 3_600) == floorDiv(reading, 3_600) && local(at, zone) - at == reading - instant
                    }
                    var probe = instant
                    while sameHour(probe + 60) { probe += 60 }
                    var end = probe + 1
                    while sameHour(end) { end += 1 }
                    XCTAssertEqual(Int(slot.end.timeIntervalSince1970), end, "\(name): the hour of \(instant) ends")
                    checked += 1
                }
                // The days around the change begin where the clock first shows their date (at its midnight, or after a
                // gap that skips it) and end where it first shows the next.
                let changeDay = floorDiv(local(change, zone), 86_400)
                for day in (changeDay - 1)...(changeDay + 1) {
                    let interval = clock.interval(of: LocalDay(dayNumber: day))
                    func firstShowing(_ date: Int) -> Int {
                        var instant = date * 86_400 - 16 * 3_600
                        while floorDiv(local(instant, zone), 86_400) < date { instant += 60 }
                        while floorDiv(local(instant - 1, zone), 86_400) >= date { instant -= 1 }
                        return instant
                    }
                    XCTAssertEqual(Int(interval.start.timeIntervalSince1970), firstShowing(day), "\(name): the start of day \(day)")
                    XCTAssertEqual(Int(interval.end.timeIntervalSince1970), firstShowing(day + 1), "\(name): the end of day \(day)")
                }
            }
        }
        XCTAssertGreaterThan(checked, 10_000)
    }

    func testClockTimesAreTheWallClockOnBothPassesOfARepeatedHour() throws {
        let clock = LocalClock(timeZone: try XCTUnwrap(TimeZone(identifier: "Europe/Berlin")))
        let fallBack = 1_792_890_000  // 01:00 UTC on 25 October 2026: 03:00 CEST becomes 02:00 CET
        XCTAssertEqual(clock.clockTime(of: Date(timeIntervalSince1970: TimeInterval(fallBack - 60))), "02:59")
        XCTAssertEqual(clock.clockTime(of: Date(timeIntervalSince1970: TimeInterval(fallBack))), "02:00")
        XCTAssertEqual(clock.clockTime(of: Date(timeIntervalSince1970: TimeInterval(fallBack + 3_599))), "02:59")
        XCTAssertEqual(clock.interval(of: LocalDay("2026-10-25")!).duration, 25 * 3_600)
        XCTAssertEqual(clock.interval(of: LocalDay("2026-03-29")!).duration, 23 * 3_600)
    }
}
