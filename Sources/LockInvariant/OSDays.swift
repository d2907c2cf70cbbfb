import Foundation
import ScreenTime

/// The OS's daily intervals over a journal — the day DeviceActivity counts use in — and where each one's count begins.
///
/// A day runs from its midnight on the device clock, in the zone in force, to the next. A clock the person sets ends
/// the running day when the new clock puts it elsewhere, and the day the clock is in then begins (its count from its
/// midnight, hours before the change perhaps). A zone change does not: the running day goes on, its count from its
/// own midnight, and ends at the first midnight the new zone's wall clock shows after it began — at once, when that is
/// past (then the new zone's day begins). What the device OS does (`DeviceActivityService.clockMoved`), after Apple: the
/// zone at an interval's start serves "for the entirety of the interval", its end is read "on wall-clock time".
struct OSDays {
    struct Day {
        /// When it was the OS's day, in true time: from its midnight, or from the change that began it, to its end or
        /// the next clock or zone change.
        var span: DateInterval
        /// Where its count of use begins: its midnight on the device clock.
        var countStart: Date
        /// Whether the person's setting of the device clock began this stretch (not a midnight or a zone change).
        var afterClockSet = false
    }

    private(set) var days: [Day]

    init(days: [Day]) {
        self.days = days
    }

    init(_ facts: JournalFacts) {
        let zones = facts.zones, range = facts.range
        func dailyInterval(at date: Date) -> DateInterval { zones.deviceDay(at: date, clockOffset: facts.clockOffset(at: date)) }
        var days: [Day] = []
        var from = range.start
        var current = dailyInterval(at: from)
        var afterClockSet = false
        while from < range.end {
            let change = facts.nextClockOrZoneChange(after: from)
            let until = min(range.end, change ?? range.end, current.end)
            days.append(Day(span: DateInterval(start: from, end: until), countStart: current.start, afterClockSet: afterClockSet))
            from = until
            afterClockSet = false
            guard from < range.end else { break }
            if from >= current.end { current = dailyInterval(at: from) }
            guard change == from else { continue }
            if zones.changes.contains(where: { $0.from == from }) {
                let offset = facts.clockOffset(at: from)
                let end = ScheduleCalendar(timeZone: zones.zone(at: from)).endOfDailyInterval(startedAt: current.start.addingTimeInterval(offset))
                    .addingTimeInterval(-offset)
                current = end > from ? DateInterval(start: current.start, end: end) : dailyInterval(at: from)
            } else {
                current = dailyInterval(at: from)
                afterClockSet = true
            }
        }
        self.days = days
    }

    /// Where the count of the OS's day running at `date` begins (for an instant past the range, the last day's).
    func countStart(at date: Date) -> Date? {
        days.last { $0.span.start <= date }?.countStart
    }
}
