import Broker
import DeviceAPI
import Foundation
import ScreenTime

/// The clock's events: `clock.tick` at every whole minute of bus time while a plugin subscribes to it, and
/// `clock.day-changed` at every local midnight in the time zone in force.
///
/// A year has 525,600 minutes: a tick nobody handles would still cost a sequence step and a journal line, so
/// ticks go out only to a bus that wants them; a plugin that needs the day boundary takes `clock.day-changed`.
final class ClockTicker {
    private unowned let host: any DeviceHost
    /// The bus the device is attached to, read once: a year's half a million ticks would each copy it out of `host`.
    private let bus: any ServiceBus
    /// The time zone in force (the person may change it).
    private let zoneInForce: () -> TimeZone
    /// The next local midnight (bus time), and the zone it was found in: found again when the zone changes.
    private var nextMidnight: Date
    private var midnightZone: TimeZone

    init(host: any DeviceHost, zoneInForce: @escaping () -> TimeZone) {
        self.host = host
        bus = host.bus
        self.zoneInForce = zoneInForce
        midnightZone = zoneInForce()
        nextMidnight = Self.midnight(after: host.now, in: midnightZone)
    }

    func start() {
        scheduleNext(after: host.now)
    }

    private func scheduleNext(after date: Date) {
        let next = DeviceActivityService.nextWholeMinute(date.addingTimeInterval(0.001))
        bus.schedule(at: busTime(next)) { [self] in
            if bus.isSubscribed(DeviceTopic.clockTick) {
                host.emit(topic: DeviceTopic.clockTick, body: ["local": .string(LocalTime.string(next, in: zoneInForce()))])
            }
            if zoneInForce() != midnightZone {
                midnightZone = zoneInForce()
                nextMidnight = Self.midnight(after: next.addingTimeInterval(-0.001), in: midnightZone)
            }
            if next >= nextMidnight {
                host.emit(topic: DeviceTopic.dayChanged, body: ["local": .string(LocalTime.string(next, in: midnightZone))])
                nextMidnight = Self.midnight(after: next, in: midnightZone)
            }
            scheduleNext(after: next)
        }
    }

    /// The first local midnight after `date` that starts a day: the end of the OS's daily interval (a midnight shown a
    /// second time, after a fall-back across midnight, starts none).
    private static func midnight(after date: Date, in zone: TimeZone) -> Date {
        ScheduleCalendar(timeZone: zone).dailyInterval(containing: date).end
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
