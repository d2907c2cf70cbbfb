// LocalDateTime: wall-clock times as users write them, and the one place they become instants (daylight saving included).

import CivilCalendar
import Foundation

/// A wall-clock date and time with no time zone, as written in a scenario (`2026-11-23T06:30`, `day 2 07:30`).
///
/// `resolve(in:)` is the only place a wall-clock time becomes an instant, so every scenario time follows
/// the same daylight-saving rules.
public struct LocalDateTime: Equatable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    /// A wall-clock time; nil when a field is out of range (month 13, 30 February, 24:00, minute 60, …).
    public init?(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        guard (1...9999).contains(year), (1...12).contains(month), (0...23).contains(hour),
              (0...59).contains(minute), (0...59).contains(second) else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        // Round-tripping through the UTC calendar catches days that the month does not have.
        let back = LocalDateTime.utcCalendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(wallSeconds)))
        guard back.year == year, back.month == month, back.day == day else { return nil }
    }

    /// The wall-clock time that `instant` shows in `zone`.
    public init(_ instant: Date, in zone: TimeZone) {
        let shifted = Date(timeIntervalSince1970: instant.timeIntervalSince1970.rounded(.down) + Double(zone.secondsFromGMT(for: instant)))
        let parts = LocalDateTime.utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: shifted)
        year = parts.year!
        month = parts.month!
        day = parts.day!
        hour = parts.hour!
        minute = parts.minute!
        second = parts.second!
    }

    /// Reads `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS` (a space may stand for the `T`); nil if it is not one.
    public init?(parsing text: String) {
        // Read byte by byte, without substrings: a scenario's steps may all be written this way, all read as a run starts.
        let bytes = text.utf8
        guard let separator = bytes.firstIndex(where: { $0 == UInt8(ascii: "T") || $0 == UInt8(ascii: " ") }),
              let date = LocalDateTime.calendarDate(bytes[..<separator]),
              let time = LocalDateTime.timeOfDay(bytes[bytes.index(after: separator)...]) else { return nil }
        self.init(year: date.year, month: date.month, day: date.day, hour: time.hour, minute: time.minute, second: time.second)
    }

    /// `YYYY-MM-DD` as numbers (not yet checked against the calendar); nil if it is not written so.
    private static func calendarDate<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> (year: Int, month: Int, day: Int)? {
        guard bytes.count == 10 else { return nil }
        var fields = [0, 0, 0], field = 0, digits = 0
        for byte in bytes {
            if byte == UInt8(ascii: "-") {
                guard digits == (field == 0 ? 4 : 2) else { return nil }
                field += 1
                digits = 0
                continue
            }
            guard field < 3, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            fields[field] = fields[field] * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard field == 2, digits == 2 else { return nil }
        return (fields[0], fields[1], fields[2])
    }

    /// Reads a time of day, `HH:MM` or `HH:MM:SS` (the hour may have one digit); nil if it is not one or is out of range.
    public static func timeOfDay(_ text: String) -> (hour: Int, minute: Int, second: Int)? {
        timeOfDay(text.utf8)
    }

    /// `timeOfDay(_:)` of UTF-8 bytes.
    static func timeOfDay<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> (hour: Int, minute: Int, second: Int)? {
        // Read byte by byte, without substrings: every step of a scenario has a time, all read as a run starts.
        var fields = (0, 0, 0), digits = (0, 0, 0), field = 0
        for byte in bytes {
            if byte == UInt8(ascii: ":") {
                field += 1
                guard field < 3 else { return nil }
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int(byte - UInt8(ascii: "0"))
            switch field {
            case 0: (fields.0, digits.0) = (fields.0 * 10 + digit, digits.0 + 1)
            case 1: (fields.1, digits.1) = (fields.1 * 10 + digit, digits.1 + 1)
            default: (fields.2, digits.2) = (fields.2 * 10 + digit, digits.2 + 1)
            }
            guard digits.0 <= 2, digits.1 <= 2, digits.2 <= 2 else { return nil }
        }
        guard field >= 1, digits.0 >= 1, digits.1 == 2, field == 1 || digits.2 == 2 else { return nil }
        guard fields.0 < 24, fields.1 < 60, fields.2 < 60 else { return nil }
        return (fields.0, fields.1, fields.2)
    }

    /// The same wall-clock time `days` calendar days later (a day is a calendar day, not 24 hours).
    public func addingDays(_ days: Int) -> LocalDateTime {
        var later = self
        let moved = LocalDateTime(wallSeconds: wallSeconds + days * 86_400)
        later.year = moved.year
        later.month = moved.month
        later.day = moved.day
        return later
    }

    /// This wall-clock time with another time of day.
    public func at(hour: Int, minute: Int, second: Int) -> LocalDateTime? {
        LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The instant this wall-clock time names in `zone`, by the Gregorian calendar.
    ///
    /// - A time that occurs twice (the hour repeated when clocks fall back) resolves to its **first**
    ///   occurrence, the one still on summer time: 02:30 on 25 Oct 2026 in Europe/Berlin is 00:30 UTC.
    /// - A time that does not exist (skipped when clocks spring forward) resolves to the **first valid
    ///   instant after it**, the moment of the change: 02:30 on 29 Mar 2026 in Europe/Berlin is 03:00
    ///   local summer time, 01:00 UTC.
    public func resolve(in zone: TimeZone) -> Date {
        LocalDateTime.resolve(wallSeconds: wallSeconds, in: zone)
    }

    /// The instant a wall-clock time, given as `wallSeconds`, names in `zone` (as `resolve(in:)`).
    static func resolve(wallSeconds: Int, in zone: TimeZone) -> Date {
        Date(timeIntervalSince1970: TimeInterval(ZonedClock(timeZone: zone).instant(ofLocalSeconds: wallSeconds)))
    }

    /// The instant of this wall-clock time's second occurrence in `zone` (the repeated hour when clocks fall back:
    /// 02:30 on 25 Oct 2026 in Europe/Berlin, second time, is 01:30 UTC); nil when it does not occur twice.
    public func resolveSecondOccurrence(in zone: TimeZone) -> Date? {
        let valid = ZonedClock(timeZone: zone).instants(ofLocalSeconds: wallSeconds)
        return valid.count > 1 ? Date(timeIntervalSince1970: TimeInterval(valid.max()!)) : nil
    }

    /// `2026-11-23 07:05` (seconds only when not zero).
    public var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let time = "\(two(hour)):\(two(minute))" + (second == 0 ? "" : ":\(two(second))")
        return "\(year)-\(two(month))-\(two(day)) \(time)"
    }

    /// An instant as people read it in `zone`, with the UTC offset so the two occurrences of a repeated hour
    /// differ: `2026-10-25 02:30 +02:00`.
    public static func describe(_ instant: Date, in zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: instant)
        let hours = abs(offset) / 3600, minutes = abs(offset) % 3600 / 60
        let sign = offset < 0 ? "-" : "+"
        return "\(LocalDateTime(instant, in: zone)) \(sign)\(hours < 10 ? "0" : "")\(hours):\(minutes < 10 ? "0" : "")\(minutes)"
    }

    /// Seconds since 1970 if this wall-clock time were UTC: the zone-free arithmetic every resolution starts from.
    var wallSeconds: Int {
        let parts = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return Int(LocalDateTime.utcCalendar.date(from: parts)!.timeIntervalSince1970)
    }

    /// The wall-clock time that `wallSeconds` seconds since 1970, read as UTC, show.
    init(wallSeconds: Int) {
        self.init(Date(timeIntervalSince1970: TimeInterval(wallSeconds)), in: LocalDateTime.utc)
    }

    private static let utc = TimeZone(identifier: "UTC")!

    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        return calendar
    }()
}

extension Character {
    /// 0–9 only (not the other scripts' digits `isNumber` accepts), as in every date and duration we read.
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension String {
    /// `trimmingCharacters(in: .whitespaces)`, without Foundation's copy when neither end is whitespace or beyond ASCII
    /// (every step time of a scenario is trimmed as a run starts).
    func trimmedOfWhitespace() -> String {
        func plain(_ byte: UInt8?) -> Bool { byte.map { $0 < 0x80 && $0 != 0x20 && $0 != 0x09 } ?? false }
        return plain(utf8.first) && plain(utf8.last) ? self : trimmingCharacters(in: .whitespaces)
    }
}
