import CivilCalendar
import Foundation

/// A Gregorian calendar day on the wall clock of a ledger's time zone, e.g. `2026-03-29`.
///
/// Day arithmetic is pure (a proleptic Gregorian day number), so it needs no calendar
/// and no time zone. Encodes as the string `"YYYY-MM-DD"`.
public struct LocalDay: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The year, e.g. 2026.
    public let year: Int
    /// The month, 1...12.
    public let month: Int
    /// The day of the month, 1...31.
    public let day: Int

    /// Creates a day, or returns nil when the date does not exist (e.g. 2026-02-29).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        let candidate = LocalDay(dayNumber: CivilCalendar.dayNumber(year: year, month: month, day: day))
        guard candidate.year == year, candidate.month == month, candidate.day == day else { return nil }
        self = candidate
    }

    /// Parses `"YYYY-MM-DD"`; returns nil for anything else or for a date that does not exist.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// Days since 1970-01-01 (negative before it).
    init(dayNumber: Int) {
        (year, month, day) = CivilCalendar.date(dayNumber: dayNumber)
    }

    /// Days since 1970-01-01 (negative before it).
    var dayNumber: Int { CivilCalendar.dayNumber(year: year, month: month, day: day) }

    /// The day `days` days later (earlier when negative).
    public func adding(days: Int) -> LocalDay {
        LocalDay(dayNumber: dayNumber + days)
    }

    /// The ISO weekday: 1 = Monday … 7 = Sunday.
    public var weekday: Int {
        // 1970-01-01 was a Thursday (ISO 4).
        let mondayBased = ((dayNumber + 3) % 7 + 7) % 7
        return mondayBased + 1
    }

    /// The English three-letter weekday, e.g. "Mon" (fixed, so output does not depend on the locale).
    public var shortWeekdayName: String { LocalDay.shortWeekdays[weekday - 1] }

    /// The English weekday, e.g. "Monday".
    var weekdayName: String { LocalDay.weekdays[weekday - 1] }

    /// The English three-letter month, e.g. "Mar".
    var shortMonthName: String { LocalDay.shortMonths[month - 1] }

    /// E.g. "Sunday, 8 March 2026".
    var longTitle: String { "\(weekdayName), \(day) \(LocalDay.months[month - 1]) \(year)" }

    /// E.g. "March 2026".
    var monthTitle: String { "\(LocalDay.months[month - 1]) \(year)" }

    /// E.g. "8 Mar".
    var shortTitle: String { "\(day) \(shortMonthName)" }

    /// `"YYYY-MM-DD"`.
    public var description: String {
        let yyyy = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yyyy)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }

    public static func < (lhs: LocalDay, rhs: LocalDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let parsed = LocalDay(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is not a day; expected an existing date as YYYY-MM-DD")
        }
        self = parsed
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    private static let shortWeekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let shortMonths = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let months = ["January", "February", "March", "April", "May", "June", "July", "August",
                                 "September", "October", "November", "December"]
}
