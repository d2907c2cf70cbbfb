import DeviceAPI
import Foundation
import ScreenTime

/// The clock's events, on the device clock (the one the person may set, in the zone in force), as iOS posts its
/// day change at the midnight the phone shows: `clock.tick` at every whole minute it shows while a plugin subscribes
/// to it, and `clock.day-changed` at every midnight it shows that starts a day.
///
/// A year has 525,600 minutes: a tick nobody handles would still cost a sequence step and a journal line, so
/// ticks go out only to a bus that wants them; a plugin that needs the day boundary takes `clock.day-changed`.
final class ClockTicker {
    private unowned let host: any DeviceHost
    private let clock: DeviceClock
    /// The next midnight on the device clock (its wall time), and the zone and offset it was found with: found again
    /// when the person changes either. A midnight the change skipped starts no day; one the clock shows again does.
    private var nextMidnight: Date
    private var midnightZone: TimeZone
    private var midnightOffset: Int64
    /// The timer of the next whole minute.
    private var pending: UInt64?

    init(host: any DeviceHost, clock: DeviceClock) {
        self.host = host
        self.clock = clock
        (midnightZone, midnightOffset) = (clock.timeZone, clock.offsetMilliseconds)
        nextMidnight = Self.midnight(after: clock.wallTime(at: host.now), in: midnightZone)
    }

    func start() {
        scheduleNext(after: host.now)
    }

    /// The person set the clock or changed the zone: the next whole minute and midnight are the new clock's.
    func clockMoved() {
        if let pending { host.bus.cancel(pending) }
        (midnightZone, midnightOffset) = (clock.timeZone, clock.offsetMilliseconds)
        nextMidnight = Self.midnight(after: clock.wallTime(at: host.now), in: midnightZone)
        scheduleNext(after: host.now)
    }

    private func scheduleNext(after date: Date) {
        let next = clock.busInstant(showing: DeviceActivityService.nextWholeMinute(clock.wallTime(at: date).addingTimeInterval(0.001)))
        pending = host.bus.schedule(at: busTime(next)) { [self] in
            pending = nil
            // The minute planned, read back through the offset: a millisecond of rounding aside, a whole minute.
            let read = clock.wallTime(at: next)
            let shown = Date(timeIntervalSince1970: (read.timeIntervalSince1970 / 60).rounded() * 60)
            if host.bus.isSubscribed(DeviceTopic.clockTick) {
                host.emit(topic: DeviceTopic.clockTick, body: ["local": .string(LocalTime.string(shown, in: clock.timeZone))])
            }
            if shown >= nextMidnight {
                host.emit(topic: DeviceTopic.dayChanged, body: ["local": .string(LocalTime.string(shown, in: midnightZone))])
                nextMidnight = Self.midnight(after: shown, in: midnightZone)
            }
            scheduleNext(after: next)
        }
    }

    /// The first midnight after the wall time `shown` that starts a day: the end of the OS's daily interval (a
    /// midnight shown a second time, after a fall-back across midnight, starts none).
    private static func midnight(after shown: Date, in zone: TimeZone) -> Date {
        ScheduleCalendar(timeZone: zone).dailyInterval(containing: shown).end
    }
}

/// Local date-times as people read them: `2026-11-23T07:30:00`.
enum LocalTime {
    static func string(_ date: Date, in timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    }
}
