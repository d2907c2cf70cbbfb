import Foundation
import XCTest
@testable import UsageReports

/// A month's roll-up stands in for its days: a report made from roll-ups (stored as JSON, as the report builder stores
/// them) is the report made from the days, to the last bit, and a roll-up that no longer sums the stored days is refused.
final class MonthRollupTests: XCTestCase {
    /// 400 generated days (both DST changes of two years); 80 random runs of up to 394 days, the first a whole year.
    func testAReportFromRollupsIsTheReportFromTheDays() throws {
        var generator = SyntheticUsage(seed: 17)
        var ledger = UsageLedger(timeZone: Berlin.zone)
        let last = Berlin.day("2026-11-29")
        try ledger.ingest(contentsOf: generator.records(days: 400, endingOn: last).records)
        let rollups = try storedRollups(of: ledger)
        XCTAssertGreaterThan(rollups.count, 12)
        var random = SyntheticUsage(seed: 23)
        var used = 0
        for round in 0..<80 {
            let first = round == 0 ? last.adding(days: -365) : last.adding(days: -random.next(420))
            let end = round == 0 ? last : first.adding(days: random.next(400 - 7))
            let context: ReportContext = round.isMultiple(of: 2) ? .range : .monthly
            let fromDays = try ledger.rangeReport(from: first, to: end, context: context)
            let fromRollups = try ledger.rangeReport(from: first, to: end, context: context) { part in
                let month = LocalMonth(containing: part.lowerBound)
                if part == month.firstDay...month.lastDay, let rollup = rollups[month] {
                    used += 1
                    return rollup.totals
                }
                return UsageTotals(ledger.days(in: part))
            }
            XCTAssertEqual(fromRollups, fromDays, "\(first) … \(end)")
        }
        XCTAssertGreaterThan(used, 200, "whole months were taken from their roll-ups")
    }

    /// A roll-up sums exactly the stored days it names: another version of any day, a day more or a day less, or
    /// another time zone, and it is refused.
    func testARollupIsRefusedOnceItsDaysChange() throws {
        var generator = SyntheticUsage(seed: 2)
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(contentsOf: generator.records(days: 30, endingOn: Berlin.day("2026-11-30")).records)
        let month = try XCTUnwrap(LocalMonth("2026-11"))
        let days = ledger.days(in: month.firstDay...month.lastDay)
        var random = SyntheticUsage(seed: 9)
        let stored = Dictionary(uniqueKeysWithValues: days.map { ($0.day, Int64(random.next(1000))) })
        let rollup = MonthRollup(month: month, timeZoneIdentifier: Berlin.zone.identifier, days: days.map { ($0, stored[$0.day]!) })
        XCTAssertTrue(rollup.sums(stored, timeZoneIdentifier: Berlin.zone.identifier))
        XCTAssertFalse(rollup.sums(stored, timeZoneIdentifier: "Europe/London"))
        for day in stored.keys {
            var changed = stored
            changed[day]! += 1
            XCTAssertFalse(rollup.sums(changed, timeZoneIdentifier: Berlin.zone.identifier), "\(day) written since")
            changed[day] = nil
            XCTAssertFalse(rollup.sums(changed, timeZoneIdentifier: Berlin.zone.identifier), "\(day) dropped since")
        }
        var more = stored
        more[Berlin.day("2026-11-30").adding(days: -30)] = 1
        XCTAssertFalse(rollup.sums(more, timeZoneIdentifier: Berlin.zone.identifier), "a day more")
        XCTAssertEqual(rollup.totals.days.map(\.day), days.map(\.day), "only the month's days with data")
    }

    /// The day lines are stored as columns; columns of different lengths do not decode (a reader then reads the days).
    func testDayColumnsOfDifferentLengthsDoNotDecode() throws {
        var ledger = UsageLedger(timeZone: Berlin.zone)
        try ledger.ingest(FixedWeek.app("Maps", "2026-11-02 08:00", "2026-11-02 08:30"))
        try ledger.ingest(FixedWeek.app("Maps", "2026-11-03 08:00", "2026-11-03 08:10"))
        let month = try XCTUnwrap(LocalMonth("2026-11"))
        let rollup = MonthRollup(month: month, timeZoneIdentifier: Berlin.zone.identifier, days: ledger.days.map { ($0, 1) })
        var json = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(rollup)) as? [String: Any])
        var totals = try XCTUnwrap(json["totals"] as? [String: Any]), days = try XCTUnwrap(totals["days"] as? [String: Any])
        XCTAssertEqual(days["totalSeconds"] as? [Double], [1800, 600], "one column per field")
        days["pickups"] = [0]
        totals["days"] = days
        json["totals"] = totals
        XCTAssertThrowsError(try JSONDecoder().decode(MonthRollup.self, from: JSONSerialization.data(withJSONObject: json)))
    }

    /// The roll-up of every month of the ledger, through JSON and back (the store keeps JSON).
    private func storedRollups(of ledger: UsageLedger) throws -> [LocalMonth: MonthRollup] {
        let months = Set(ledger.days.map { LocalMonth(containing: $0.day) })
        var rollups: [LocalMonth: MonthRollup] = [:]
        for month in months {
            let days = ledger.days(in: month.firstDay...month.lastDay).map { (usage: $0, version: Int64(1)) }
            let rollup = MonthRollup(month: month, timeZoneIdentifier: Berlin.zone.identifier, days: days)
            rollups[month] = try JSONDecoder().decode(MonthRollup.self, from: JSONEncoder().encode(rollup))
        }
        return rollups
    }
}
