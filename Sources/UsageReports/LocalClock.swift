import CivilCalendar
import Foundation

/// The wall clock of one time zone (Gregorian): maps instants to local days and clock hours. DST-correct because every
/// boundary comes from the zone's offsets (`ZonedClock`, the arithmetic the device OS and the checker use), never from
/// multiplying 3600 or 86400, nor from Foundation's calendar routines, which on Linux can be wrong across transitions.
struct LocalClock: Equatable, Sendable {
    /// One local clock hour: `[start, end)` in absolute time, on `day` at `hour`.
    struct HourSlot: Equatable {
        let day: LocalDay
        let hour: Int
        let end: Date
    }

    let clock: ZonedClock

    init(timeZone: TimeZone) {
        clock = ZonedClock(timeZone: timeZone)
    }

    /// The local day that contains `date`: the date the clock shows.
    func day(containing date: Date) -> LocalDay {
        LocalDay(dayNumber: clock.wallReading(of: date).day)
    }

    /// The local clock hour that contains `date`. On a fall-back day the repeated hour
    /// appears twice (two slots with the same `hour`); on a spring-forward day the
    /// skipped hour never appears.
    func hourSlot(containing date: Date) -> HourSlot {
        let local = clock.localSeconds(of: date)
        return HourSlot(day: LocalDay(dayNumber: CivilCalendar.floorDiv(local, 86_400)),
                        hour: CivilCalendar.floorMod(local, 86_400) / 3_600, end: clock.endOfHour(containing: date))
    }

    /// The absolute interval of a local day: 23 h, 24 h or 25 h long around DST changes. It starts at the day's midnight
    /// (its first occurrence), or at the end of a gap that skips it.
    func interval(of day: LocalDay) -> DateInterval {
        let start = clock.instant(ofLocalSeconds: day.dayNumber * 86_400)
        let end = clock.instant(ofLocalSeconds: (day.dayNumber + 1) * 86_400)
        return DateInterval(start: Date(timeIntervalSince1970: TimeInterval(start)), end: Date(timeIntervalSince1970: TimeInterval(end)))
    }

    /// The wall-clock time of `date` as "HH:mm".
    func clockTime(of date: Date) -> String {
        let second = CivilCalendar.floorMod(clock.localSeconds(of: date), 86_400)
        return TwoDigits.pad(second / 3_600) + ":" + TwoDigits.pad(second % 3_600 / 60)
    }
}

/// Zero-padding for clock times and durations ("05").
enum TwoDigits {
    static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
