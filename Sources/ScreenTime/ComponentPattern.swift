import CivilCalendar
import Foundation

/// The wall-clock times that DateComponents match, as `Calendar.nextDate(matching:)` reads them.
///
/// Fields finer than the finest field set take their minimum (`{hour: 9}` is 09:00:00);
/// fields coarser than it that are not set are free (`{hour: 9}` matches every day).
struct ComponentPattern {
    private let year: Int?
    private let month: Int?
    private let day: Int?
    private let weekday: Int?
    /// Matching seconds of the day, ascending; empty when the components set nothing.
    let secondsOfDay: [Int]
    /// The day numbers of the year the components name, if they name one.
    let yearDayRange: ClosedRange<Int>?

    init(_ components: DateComponents) {
        // Levels: 0 year, 1 month, 2 day or weekday, 3 hour, 4 minute, 5 second.
        let levels = [components.year, components.month, components.day ?? components.weekday,
                      components.hour, components.minute, components.second]
        let finest = levels.lastIndex { $0 != nil } ?? -1
        func value(_ set: Int?, level: Int, minimum: Int) -> Int? {
            set ?? (level > finest ? minimum : nil)
        }
        year = components.year
        month = value(components.month, level: 1, minimum: 1)
        weekday = components.weekday
        day = components.weekday == nil ? value(components.day, level: 2, minimum: 1) : components.day
        func choices(_ set: Int?, level: Int, count: Int) -> [Int] {
            value(set, level: level, minimum: 0).map { [$0] } ?? Array(0..<count)
        }
        let hours = choices(components.hour, level: 3, count: 24)
        let minutes = choices(components.minute, level: 4, count: 60)
        let seconds = choices(components.second, level: 5, count: 60)
        secondsOfDay = finest < 0 ? [] : hours.flatMap { h in
            minutes.flatMap { m in seconds.map { s in (h * 60 + m) * 60 + s } }
        }
        yearDayRange = components.year.map { year in
            CivilCalendar.dayNumber(year: year, month: 1, day: 1)...(CivilCalendar.dayNumber(year: year + 1, month: 1, day: 1) - 1)
        }
    }

    func matches(dayNumber: Int) -> Bool {
        let date = CivilCalendar.date(dayNumber: dayNumber)
        return (year ?? date.year) == date.year
            && (month ?? date.month) == date.month
            && (day ?? date.day) == date.day
            && (weekday ?? CivilCalendar.weekday(dayNumber: dayNumber)) == CivilCalendar.weekday(dayNumber: dayNumber)
    }
}
