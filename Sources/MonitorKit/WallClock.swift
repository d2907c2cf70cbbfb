import CivilCalendar
import Foundation
import ScreenTime
import ShieldBusSDK

/// Local calendar days as the products key them in the App-Group store ("2026-11-23").
public enum DayKey {
    public static func string(_ date: Date, in timeZone: TimeZone) -> String {
        let reading = WallReading(date, in: timeZone)
        guard reading.day >= WallReading.firstGregorianDay else {
            // Before 15 October 1582 `Calendar`'s Gregorian calendar counts Julian dates.
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            let c = calendar.dateComponents([.year, .month, .day], from: date)
            return "\(zeroPadded(c.year!, to: 4))-\(zeroPadded(c.month!, to: 2))-\(zeroPadded(c.day!, to: 2))"
        }
        let c = CivilCalendar.date(dayNumber: reading.day)
        return "\(zeroPadded(c.year, to: 4))-\(zeroPadded(c.month, to: 2))-\(zeroPadded(c.day, to: 2))"
    }

    public static func today() -> String { string(BusClock.absoluteNow, in: BusClock.timeZone) }

    /// The date before the one `key` names ("2026-03-30" → "2026-03-29"), by the calendar: not the date 24 hours
    /// earlier, which on the day after a 25-hour day (a fall-back) is still the same date, and on the day after a
    /// 23-hour one can be two dates back. Nil for a key that names no date.
    public static func dayBefore(_ key: String) -> String? {
        let parts = key.split(separator: "-", omittingEmptySubsequences: false).compactMap { Int($0) }
        guard parts.count == 3, (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return nil }
        let day = CivilCalendar.dayNumber(year: parts[0], month: parts[1], day: parts[2])
        let named = CivilCalendar.date(dayNumber: day)
        guard named.year == parts[0], named.month == parts[1], named.day == parts[2] else { return nil }
        let before = CivilCalendar.date(dayNumber: day - 1)
        return "\(zeroPadded(before.year, to: 4))-\(zeroPadded(before.month, to: 2))-\(zeroPadded(before.day, to: 2))"
    }

    /// The date of the day the OS counts DeviceActivity in, on the device clock (the person may have set it): the date
    /// it shows, except in the second pass of a fall-back across midnight, which shows the day before while the OS's
    /// day begun at the first midnight runs on.
    public static func deviceToday() -> String {
        let shown = BusClock.deviceClock(at: BusClock.absoluteNow)
        return string(ScheduleCalendar(timeZone: BusClock.timeZone).dailyInterval(containing: shown).start, in: BusClock.timeZone)
    }

    /// The true instant at which the OS's day on the device clock began (its midnight in the zone in force): the start of
    /// its daily interval (`ScheduleCalendar.dailyInterval`), which the DeviceActivity count of the day runs from.
    public static func deviceDayStart() -> Date {
        let now = BusClock.absoluteNow
        let shown = BusClock.deviceClock(at: now)
        return now.addingTimeInterval(ScheduleCalendar(timeZone: BusClock.timeZone).dailyInterval(containing: shown).start.timeIntervalSince(shown))
    }
}

/// What the wall clock shows at an instant in a time zone: its day (days since 1970-01-01, proleptic Gregorian) and
/// the second of that day, from the zone's offset alone. What `Calendar`'s Gregorian calendar gives for the same
/// instant, without making a calendar — a launch's first `Calendar(identifier:)` is among the costliest first uses
/// of its start; `WallClockReadingTests` compare the two.
extension DateComponents {
    /// The hour, minute and second the wall clock shows at `date` in `timeZone` — what `Calendar`'s
    /// `dateComponents([.hour, .minute, .second], from:)` gives — from the zone's offset, without making a calendar
    /// (a short-lived extension's first `Calendar` makes it and its caches at every launch).
    public init(wallTimeOf date: Date, in timeZone: TimeZone) {
        let second = WallReading(date, in: timeZone).second
        self.init(hour: second / 3_600, minute: second % 3_600 / 60, second: second % 60)
    }
}

struct WallReading {
    let day: Int
    let second: Int

    init(_ date: Date, in timeZone: TimeZone) {
        (day, second) = ZonedClock(timeZone: timeZone).wallReading(of: date)
    }

    /// 15 October 1582, the Gregorian calendar's first day: `Calendar` counts the dates before it as Julian ones
    /// (the weekdays run on unbroken).
    static let firstGregorianDay = CivilCalendar.dayNumber(year: 1582, month: 10, day: 15)
}

/// A local wall-clock time of day, `"HH:MM"` in JSON, e.g. `"22:30"`.
public struct ClockTime: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Minutes since local midnight, 0…1439.
    public let minuteOfDay: Int

    /// Parses `"HH:MM"` (00:00 … 23:59); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let hour = Int(parts[0]), let minute = Int(parts[1]),
              (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        minuteOfDay = hour * 60 + minute
    }

    /// A time of day from minutes since midnight (wrapping past 24:00).
    public init(minuteOfDay: Int) {
        self.minuteOfDay = ((minuteOfDay % 1440) + 1440) % 1440
    }

    /// The local time of day of `date` in `timeZone`, to the minute.
    public init(of date: Date, in timeZone: TimeZone) {
        minuteOfDay = WallReading(date, in: timeZone).second / 60
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let time = ClockTime(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: Self.notATimeOfDay(text))
        }
        self = time
    }

    /// Why `text` is refused as a time of day.
    public static func notATimeOfDay(_ text: String) -> String { "'\(text)' is not a time of day; expected HH:MM like 22:30" }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// `"HH:MM"`.
    public var description: String {
        "\(zeroPadded(minuteOfDay / 60, to: 2)):\(zeroPadded(minuteOfDay % 60, to: 2))"
    }

    public static func < (lhs: ClockTime, rhs: ClockTime) -> Bool { lhs.minuteOfDay < rhs.minuteOfDay }
}

/// A window of wall-clock time, every day or on some weekdays: local times of day in the zone in force, as the
/// device shows them; an end at or before the start ends on the next day (22:30–06:30). Judged by the wall clock
/// itself, never by a schedule's interval: in a repeated DST hour the clock shows the window's times twice, and an
/// interval (which the OS reads as the first pass) covers only the first.
public struct WallClockWindow: Sendable, Equatable {
    public var start: ClockTime
    public var end: ClockTime
    /// The weekdays the window starts on (1 Sunday … 7 Saturday, as `Calendar` numbers them); nil: every day.
    public var weekdays: Set<Int>?

    public init(start: ClockTime, end: ClockTime, weekdays: Set<Int>? = nil) {
        self.start = start
        self.end = end
        self.weekdays = weekdays
    }

    /// Whether a wall time of day (minutes since midnight) is inside the window on any day; a window past midnight wraps.
    public func contains(minuteOfDay minute: Int) -> Bool {
        start < end ? (start.minuteOfDay..<end.minuteOfDay).contains(minute) : minute >= start.minuteOfDay || minute < end.minuteOfDay
    }

    /// Whether the wall clock at `date` (true time; the device shows it in `timeZone`) is inside the window, counting an
    /// overnight window's morning to the day it started.
    public func contains(_ date: Date, in timeZone: TimeZone = BusClock.timeZone) -> Bool {
        let minute = ClockTime(of: date, in: timeZone).minuteOfDay
        guard contains(minuteOfDay: minute) else { return false }
        guard let weekdays else { return true }
        let weekday = CivilCalendar.weekday(dayNumber: WallReading(date, in: timeZone).day)
        let started = start < end || minute >= start.minuteOfDay ? weekday : (weekday + 5) % 7 + 1
        return weekdays.contains(started)
    }

    /// When the occurrence in progress at `date` began (true time), nil outside the window: walked back minute by
    /// minute, as a repeated DST hour is not a calendar's "previous" wall time, each minute read in the zone then in
    /// force (`zones`; a `ZoneHistory`): after travel, the night that began at home is not tonight's. A window's edges
    /// fall on whole minutes; a zone change may start an occurrence between two, at its own instant.
    public func occurrenceStart(containing date: Date, zones: ZoneReading = ZoneReading()) -> Date? {
        guard contains(date, in: zones.zone(at: date)) else { return nil }
        var inside = date
        var minute = Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 60).rounded(.down) * 60)
        for _ in 0...(24 * 60) {
            guard contains(minute, in: zones.zone(at: minute)) else {
                // Outside at this minute: the occurrence began at the next, or at a zone change between them.
                let change = zones.changes.last { $0 > minute && $0 <= inside && contains($0, in: zones.zone(at: $0)) }
                return change ?? min(inside, minute.addingTimeInterval(60))
            }
            inside = minute
            minute.addTimeInterval(-60)
        }
        return inside
    }

    /// Whether the occurrence in progress at `date` is the one an action at `action` aimed at: the one in progress then,
    /// or else the next to start, within a day ("skip tonight" tapped in the evening). Each minute is read in the zone
    /// then in force: an occurrence a time-zone change ends is over, and the next one is another.
    public func isTheOccurrence(after action: Date, containing date: Date, zones: ZoneReading = ZoneReading()) -> Bool {
        guard action <= date, let start = occurrenceStart(containing: date, zones: zones) else { return false }
        if start <= action { return true }
        guard start.timeIntervalSince(action) <= 86_400 else { return false }
        // Another occurrence between the action and this one: inside at a whole minute, or at a zone change.
        var minute = TrueTimeSchedules.minuteAfter(action)
        while minute < start {
            if contains(minute, in: zones.zone(at: minute)) { return false }
            minute.addTimeInterval(60)
        }
        return !zones.changes.contains { $0 > action && $0 < start && contains($0, in: zones.zone(at: $0)) }
    }

    public var startComponents: DateComponents { DateComponents(hour: start.minuteOfDay / 60, minute: start.minuteOfDay % 60) }
    public var endComponents: DateComponents { DateComponents(hour: end.minuteOfDay / 60, minute: end.minuteOfDay % 60) }
}

// On `Array`, not `Collection`: a generic caller's `contains(where:)` would have the runtime look up the collection's
// iterator type, a scan of the program's conformance records in every process (a short-lived extension is a new one
// at each callback).
extension Array where Element == WallClockWindow {
    /// Whether the wall clock at `date` is inside any of the windows.
    public func contain(_ date: Date, in timeZone: TimeZone = BusClock.timeZone) -> Bool {
        for window in self where window.contains(date, in: timeZone) { return true }
        return false
    }

    /// The first whole minute after `now` and before `now + horizon` at which being inside the windows changes, else
    /// `now + horizon`. Walked minute by minute, since a boundary's second pass in a repeated hour is not a calendar's
    /// "next" wall time; every zone's offset is whole minutes, so a boundary falls on a whole true minute. The horizon
    /// keeps a check close: a schedule far out may fire early, late or never.
    public func nextChange(after now: Date, within horizon: TimeInterval = 44 * 60) -> Date {
        // The zone in force, made once for the whole walk (a minute at a time): nothing changes it meanwhile.
        let zone = BusClock.timeZone
        let inside = contain(now, in: zone), latest = now.addingTimeInterval(horizon)
        var minute = TrueTimeSchedules.minuteAfter(now)
        while minute < latest {
            if contain(minute, in: zone) != inside { return minute }
            minute = minute.addingTimeInterval(60)
        }
        return latest
    }
}

/// `value` in decimal with leading zeros to `width` digits (`%0*d` for values ≥ 0): `String(format:)` casts each argument
/// to `CVarArg` at run time, costly the first time in a process — and a short-lived extension is a new process each launch.
public func zeroPadded(_ value: Int, to width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

/// The zones the device was in, and from when, kept in the App Group by the monitor that hears each change: a window's
/// past occurrences are read in the zone then in force, as the OS shows them (and as the checker judges them).
public struct ZoneHistory {
    public let defaults: SharedDefaults
    public let key: String
    /// Changes older than this are dropped: no occurrence reaches further back.
    public static let kept: TimeInterval = 2 * 86_400

    public init(defaults: SharedDefaults, key: String = "monitor.zones") {
        self.defaults = defaults
        self.key = key
    }

    private struct Change: Codable, Equatable {
        var at: Double
        var zone: String
    }

    private func changes() -> [Change] { ((try? defaults.value([Change].self, forKey: key)) ?? nil) ?? [] }

    /// Notes the zone in force from `date` on (nothing when it is the one in force already).
    public func record(_ zone: TimeZone = BusClock.timeZone, at date: Date = BusClock.absoluteNow) throws {
        var list = changes()
        guard list.last?.zone != zone.identifier else { return }
        // The first note stands for every time before it: the monitor knows no earlier zone.
        list.append(Change(at: list.isEmpty ? Date.distantPast.timeIntervalSince1970 : date.timeIntervalSince1970, zone: zone.identifier))
        // Keep the last change older than the horizon: it is the zone in force at the horizon.
        let horizon = date.timeIntervalSince1970 - Self.kept
        if let lastOld = list.lastIndex(where: { $0.at <= horizon }), lastOld > 0 { list.removeFirst(lastOld) }
        try defaults.set(list, forKey: key)
    }

    /// The zone in force at `date`: the last change at or before it, else the device's now.
    public func zone(at date: Date) -> TimeZone {
        changes().last { $0.at <= date.timeIntervalSince1970 }.flatMap { TimeZone(identifier: $0.zone) } ?? BusClock.timeZone
    }

    /// The history as a window reads it, from one read of the App Group.
    public func reader() -> ZoneReading {
        ZoneReading(changes().compactMap { change in TimeZone(identifier: change.zone).map { (Date(timeIntervalSince1970: change.at), $0) } })
    }
}

/// The zones in force over time, as read once: each from its instant on (the first for all time before it).
public struct ZoneReading {
    private let list: [(from: Date, zone: TimeZone)]

    /// Only the device's zone now, for all time.
    public init() {
        list = []
    }

    public init(_ list: [(from: Date, zone: TimeZone)]) {
        self.list = list
    }

    public func zone(at date: Date) -> TimeZone {
        list.last { $0.from <= date }?.zone ?? list.first?.zone ?? BusClock.timeZone
    }

    /// The instants the zone changed (not the first entry's, which stands for all time before).
    public var changes: [Date] { list.dropFirst().map(\.from) }
}
