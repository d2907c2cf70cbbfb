import Foundation
import ScreenTime

/// The device's time zone over a run: the configured zone, then each `device.time-zone-changed`. Products' hours
/// are local wall time in the zone in force; the checker judges in true (bus) time, so a repeated DST hour is
/// two real hours and a skipped one is none.
struct ZoneTimeline {
    /// A local wall-clock reading: the local day (days since 1970-01-01) and the second within it.
    struct WallTime: Equatable {
        var day: Int
        var secondOfDay: Double
    }

    private(set) var changes: [(from: Date, zone: TimeZone)]

    init(initial: TimeZone) {
        changes = [(Date.distantPast, initial)]
    }

    mutating func change(to zone: TimeZone, at date: Date) {
        changes.append((date, zone))
    }

    func zone(at date: Date) -> TimeZone {
        changes.last { $0.from <= date }!.zone
    }

    func offset(at date: Date) -> Int {
        zone(at: date).secondsFromGMT(for: date)
    }

    func wallTime(at date: Date) -> WallTime {
        let local = date.timeIntervalSince1970 + Double(offset(at: date))
        let day = Int((local / 86_400).rounded(.down))
        return WallTime(day: day, secondOfDay: local - Double(day) * 86_400)
    }

    /// The instants within `range` where `holds` is true of the wall time, given every second of the day at
    /// which its answer can change (`boundaries`); local midnight, DST transitions and zone changes are added.
    func periods(in range: DateInterval, boundaries: [Double], where holds: (WallTime) -> Bool) -> Periods {
        let cuts = Array(Set(instants(in: range, wallSeconds: boundaries + [0]) + [range.start, range.end])).sorted()
        var result = Periods()
        for (start, end) in zip(cuts, cuts.dropFirst()) where holds(wallTime(at: start)) {
            result.insert(DateInterval(start: start, end: end))
        }
        return result
    }

    /// The true instant at which the day the device clock shows at `date` began on that clock, the clock reading
    /// `clockOffset` ahead of true time: the start of the OS's daily interval, which a clock set forward moves earlier.
    func deviceDayStart(at date: Date, clockOffset: TimeInterval) -> Date {
        deviceDay(at: date, clockOffset: clockOffset).start
    }

    /// The true instant at which the OS's next daily interval begins after `date`, the device clock unchanged: when it
    /// next shows midnight (the first instant of its next day, when the zone skips midnight; not a midnight it shows a
    /// second time after a fall-back across midnight, `ScheduleCalendar.dailyInterval`).
    func nextDeviceDayStart(after date: Date, clockOffset: TimeInterval) -> Date {
        deviceDay(at: date, clockOffset: clockOffset).end
    }

    /// The OS's daily interval that contains `date` on the device clock, in true time.
    func deviceDay(at date: Date, clockOffset: TimeInterval) -> DateInterval {
        let day = ScheduleCalendar(timeZone: zone(at: date)).dailyInterval(containing: date.addingTimeInterval(clockOffset))
        return DateInterval(start: day.start.addingTimeInterval(-clockOffset), end: day.end.addingTimeInterval(-clockOffset))
    }

    /// Whether the device clock, reading `clockOffset` ahead of true time, shows at `date` a wall time it showed before
    /// under the offset in force up to two hours earlier: the second pass of an hour that a fall-back repeats, which
    /// the OS reads a schedule's wall-clock start as the first pass of.
    func showsARepeatedWallTime(at date: Date, clockOffset: TimeInterval) -> Bool {
        let shown = date.addingTimeInterval(clockOffset), zone = zone(at: date)
        let before = zone.secondsFromGMT(for: shown.addingTimeInterval(-7200)), now = zone.secondsFromGMT(for: shown)
        guard before > now else { return false }
        // The instant that showed the same wall time under the earlier offset, if that offset was then in force.
        let firstPass = shown.addingTimeInterval(Double(now - before))
        return zone.secondsFromGMT(for: firstPass) == before
    }

    /// Every instant in `range` at which the wall clock shows one of `wallSeconds` (0, 1 or 2 a day: DST), and every
    /// instant at which the offset from UTC changes.
    func instants(in range: DateInterval, wallSeconds: [Double]) -> [Date] {
        var found: [Date] = changes.map(\.from).filter { range.contains($0) }
        // Whole days, with a day of margin each side: the wall day of an instant may differ from its UTC day.
        let firstDay = wallTime(at: range.start).day - 1, lastDay = wallTime(at: range.end).day + 1
        var previous = range.start.addingTimeInterval(-86_400)
        // Every recorded zone's offsets near the wall reading are candidates, not only those in force at that
        // reading taken as UTC: a zone held for two hours, or one whose offset DST changed that day, would
        // otherwise never be sampled and its midnight or focus hour lost.
        let zones = changes.map(\.zone)
        for day in firstDay...max(firstDay, lastDay) {
            let dayStart = Date(timeIntervalSince1970: Double(day) * 86_400)
            for second in wallSeconds {
                let local = Double(day) * 86_400 + second
                let offsets = Set([-86_400.0, 0, 86_400].flatMap { shift in
                    zones.map { $0.secondsFromGMT(for: Date(timeIntervalSince1970: local + shift)) }
                })
                for offset in offsets {
                    let instant = Date(timeIntervalSince1970: local - Double(offset))
                    if self.offset(at: instant) == offset, range.contains(instant) { found.append(instant) }
                }
            }
            let next = dayStart.addingTimeInterval(86_400)
            if let transition = offsetChange(between: previous, and: next), range.contains(transition) { found.append(transition) }
            previous = next
        }
        return found
    }

    /// The first instant (to the millisecond) in `(from, to]` whose offset differs from `from`'s, if the offset changes.
    private func offsetChange(between from: Date, and to: Date) -> Date? {
        guard offset(at: from) != offset(at: to) else { return nil }
        var low = (from.timeIntervalSince1970 * 1000).rounded(.down), high = (to.timeIntervalSince1970 * 1000).rounded(.up)
        let before = offset(at: from)
        while high - low > 1 {
            let middle = ((low + high) / 2).rounded(.down)
            if offset(at: Date(timeIntervalSince1970: middle / 1000)) == before { low = middle } else { high = middle }
        }
        return Date(timeIntervalSince1970: high / 1000)
    }
}
