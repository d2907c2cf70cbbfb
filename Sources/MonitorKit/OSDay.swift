// OSDay: the day DeviceActivity counts a day's use in, as a product can follow it across clock and zone changes.

import AppGroupStore
import CivilCalendar
import Foundation
import ScreenTime
import ShieldBusSDK

/// The OS's day: the daily interval DeviceActivity counts a day's use in, in true time, as a product can follow it. It
/// runs from its midnight on the device clock, in the zone in force, to the next. A zone change leaves the running day
/// running, its count from its own midnight, to the first midnight the new zone's clock shows after it began — at once
/// when that is past, and then the new zone's day begins (Apple: an interval is counted in the zone of its start, its
/// end read on the wall clock; docs/fidelity.md § 4). A clock the person sets replans the day (its count from the
/// midnight the new clock is in); set to the same or an earlier date, it is still the day the product keeps, to the new
/// day's end (the checker's ruling, docs/explore.md "The device's day"); to a later date it is another.
///
/// The date shown does not tell the days apart: after a zone change the day that goes on may show an earlier date, and
/// the new zone's day may show the same date as the one that ended. So a day is known by its `key`, kept in the App
/// Group (`monitor.osDay`): an extension may not live from one change to the next, and read after a change it applies
/// the rule to the zone and the clock it finds.
public struct OSDay: Codable, Equatable, Sendable {
    /// Where the OS's count of the day began, and where the day ends, in true time.
    public var start: Date
    public var end: Date
    /// The day's identity, ordered as the days: where it began, in UTC (`2026-11-22T23:00:00Z`).
    public var key: String
    /// The date the device clock showed at the day's start (days since 1970-01-01), or the date a clock set back
    /// took it to.
    var date: Int
    /// The zone and the device clock's offset (ms) it was last read in.
    var zone: String
    var offsetMs: Int64

    public static let defaultsKey = "monitor.osDay"

    /// The OS's day now, from the one kept in `defaults` (saved there when it changed, unless `saving` is false: a
    /// plugin whose slice does not hold the key reads it only).
    public static func current(in defaults: SharedDefaults, saving: Bool = true, now: Date = BusClock.absoluteNow) -> OSDay {
        let offsetMs = Int64((BusClock.clockOffset * 1000).rounded())
        let zone = BusClock.timeZone
        let fresh = day(containing: now, zone: zone, offsetMs: offsetMs)
        let kept = ((try? defaults.entry(forKey: defaultsKey)) ?? nil).flatMap { entry in OSDay(storedJSON: entry.rawJSON) ?? (try? entry.value(OSDay.self)) }
        var day = fresh
        // The kept zone is most often the one in force, already made (a zone made from its name costs a lookup).
        if let kept, let keptZone = kept.zone == zone.identifier ? zone : TimeZone(identifier: kept.zone) {
            // The day that ran before whatever changed: the kept one, or the one after it on the same clock and zone.
            let running = now < kept.end ? kept : Self.day(containing: now, zone: keptZone, offsetMs: kept.offsetMs)
            if kept.offsetMs != offsetMs {
                if fresh.date <= running.date { day = OSDay(start: fresh.start, end: fresh.end, key: running.key, date: fresh.date, zone: zone.identifier, offsetMs: offsetMs) }
            } else if kept.zone != zone.identifier {
                let offset = Double(offsetMs) / 1000
                let end = ScheduleCalendar(timeZone: zone).endOfDailyInterval(startedAt: running.start.addingTimeInterval(offset)).addingTimeInterval(-offset)
                // Its date is now the one shown, as the checker's day continued across the change takes it.
                let shown = Int(now.timeIntervalSince1970.rounded(.down)) + Int(offsetMs / 1000)
                let date = CivilCalendar.floorDiv(shown + zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(shown))), 86_400)
                if end > now { day = OSDay(start: running.start, end: end, key: running.key, date: date, zone: zone.identifier, offsetMs: offsetMs) }
            } else {
                day = running
            }
        }
        if saving, day != kept { _ = try? defaults.set(day, forKey: defaultsKey) }
        return day
    }

    /// The daily interval that contains `now` on the device clock in `zone`, in true time.
    static func day(containing now: Date, zone: TimeZone, offsetMs: Int64) -> OSDay {
        let offset = Double(offsetMs) / 1000
        let shown = now.addingTimeInterval(offset)
        let interval = ScheduleCalendar(timeZone: zone).dailyInterval(containing: shown)
        let start = interval.start.addingTimeInterval(-offset)
        let wall = Int(interval.start.timeIntervalSince1970.rounded(.down)) + zone.secondsFromGMT(for: interval.start)
        return OSDay(start: start, end: interval.end.addingTimeInterval(-offset), key: key(of: start), date: CivilCalendar.floorDiv(wall, 86_400),
                     zone: zone.identifier, offsetMs: offsetMs)
    }

    /// `2026-11-22T23:00:00Z`: a true instant in UTC, to the second.
    static func key(of start: Date) -> String {
        let seconds = Int(start.timeIntervalSince1970.rounded(.down))
        let day = CivilCalendar.floorDiv(seconds, 86_400), second = seconds - day * 86_400
        let date = CivilCalendar.date(dayNumber: day)
        return "\(date.year)-\(zeroPadded(date.month, to: 2))-\(zeroPadded(date.day, to: 2))T\(zeroPadded(second / 3_600, to: 2)):\(zeroPadded(second % 3_600 / 60, to: 2)):\(zeroPadded(second % 60, to: 2))Z"
    }
}

extension OSDay {
    /// The day as `ValueCoding` stores it (`{"date":…,"end":…,"key":…,"offsetMs":…,"start":…,"zone":…}`, dates in seconds
    /// since 1970), read with the bus's JSON reader: the monitor reads the kept day at every check, and a `JSONDecoder`
    /// set up per read costs more than the App-Group read itself. It reads what `JSONDecoder` would, and nil from any
    /// other text (another key, an integer written as a fraction), which then goes to `JSONDecoder`, which reads it or
    /// says what is wrong.
    init?(storedJSON json: String) {
        guard case .object(let members)? = try? JSONValue(parsing: json), members.count == 6,
              case .int(let date)? = members["date"], let date = Int(exactly: date), case .int(let offsetMs)? = members["offsetMs"],
              let start = Self.seconds(members["start"]), let end = Self.seconds(members["end"]),
              case .string(let key)? = members["key"], case .string(let zone)? = members["zone"] else { return nil }
        self.init(start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end), key: key, date: date, zone: zone, offsetMs: offsetMs)
    }

    /// A date's seconds since 1970 as `JSONDecoder`'s `.secondsSince1970` reads them: any JSON number.
    private static func seconds(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let seconds)?: return Double(seconds)
        case .double(let seconds)?: return seconds
        default: return nil
        }
    }
}
