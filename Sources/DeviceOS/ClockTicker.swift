import DeviceAPI
import Foundation

/// Emits `clock.tick` at every whole minute of bus time, with the local time in the device's time zone.
struct ClockTicker {
    unowned let device: DeviceOS

    func start() {
        scheduleNext(after: device.now)
    }

    private func scheduleNext(after date: Date) {
        let next = DeviceActivityService.nextWholeMinute(date.addingTimeInterval(0.001))
        device.bus.schedule(at: busTime(next)) { [device] in
            device.emit(topic: DeviceTopic.clockTick, body: ["local": .string(LocalTime.string(next, in: device.settings.timeZone))])
            ClockTicker(device: device).scheduleNext(after: next)
        }
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
