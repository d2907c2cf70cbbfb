import Foundation

/// The wall clock of one time zone (Gregorian): maps instants to local days and clock
/// hours. DST-correct because every boundary comes from `Calendar`, never from
/// multiplying 3600 or 86400.
struct LocalClock: Equatable, Sendable {
    /// One local clock hour: `[start, end)` in absolute time, on `day` at `hour`.
    struct HourSlot: Equatable {
        let day: LocalDay
        let hour: Int
        let end: Date
    }

    let calendar: Calendar

    init(timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// The local day that contains `date`.
    func day(containing date: Date) -> LocalDay {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return Self.localDay(parts)
    }

    /// The local clock hour that contains `date`. On a fall-back day the repeated hour
    /// appears twice (two slots with the same `hour`); on a spring-forward day the
    /// skipped hour never appears.
    func hourSlot(containing date: Date) -> HourSlot {
        let parts = calendar.dateComponents([.year, .month, .day, .hour], from: date)
        // A Gregorian calendar always has an hour interval around any finite instant.
        let end = calendar.dateInterval(of: .hour, for: date)!.end
        return HourSlot(day: Self.localDay(parts), hour: parts.hour!, end: end)
    }

    /// The absolute interval of a local day: 23 h, 24 h or 25 h long around DST changes.
    func interval(of day: LocalDay) -> DateInterval {
        // Noon exists on every day in every zone, whereas midnight may be skipped by DST.
        let noon = DateComponents(year: day.year, month: day.month, day: day.day, hour: 12)
        return calendar.dateInterval(of: .day, for: calendar.date(from: noon)!)!
    }

    /// The wall-clock time of `date` as "HH:mm".
    func clockTime(of date: Date) -> String {
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return TwoDigits.pad(parts.hour!) + ":" + TwoDigits.pad(parts.minute!)
    }

    private static func localDay(_ parts: DateComponents) -> LocalDay {
        // Components produced by a Gregorian calendar always name an existing day.
        LocalDay(year: parts.year!, month: parts.month!, day: parts.day!)!
    }
}

/// Zero-padding for clock times and durations ("05").
enum TwoDigits {
    static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
