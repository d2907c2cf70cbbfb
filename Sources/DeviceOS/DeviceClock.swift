// DeviceClock: the device's wall clock and time zone as the person set them — apart from true (bus) time.

import DeviceAPI
import Foundation
import ScreenTime

/// What the device's clock shows: bus time (the true time, which runs on untouched) plus the offset the person
/// set in Settings, in the time zone in force. Wall-clock schedules (DeviceActivity) follow it, as on a phone;
/// both survive a restart (device.sqlite).
final class DeviceClock {
    /// Device clock minus bus time, in ms (0 until the person sets the clock).
    private(set) var offsetMilliseconds: Int64
    /// The IANA zone in force.
    private(set) var timeZone: TimeZone
    private(set) var calendar: ScheduleCalendar
    /// Whether the zone in force is the one the device's state last ran in (false: a fresh device's configured zone).
    let zoneIsStored: Bool
    private let state: DeviceStateStore

    init(state: DeviceStateStore, defaultTimeZone: TimeZone) throws {
        self.state = state
        offsetMilliseconds = try state.load(Int64.self, key: "clock.offsetMs") ?? 0
        let stored = try state.load(String.self, key: "clock.timeZone").flatMap(TimeZone.init(identifier:))
        zoneIsStored = stored != nil
        timeZone = stored ?? defaultTimeZone
        calendar = ScheduleCalendar(timeZone: timeZone)
    }

    /// The device-clock reading at a bus instant.
    func wallTime(at busInstant: Date) -> Date { busInstant.addingTimeInterval(Double(offsetMilliseconds) / 1000) }

    /// The bus instant at which the device clock shows `wallTime`.
    func busInstant(showing wallTime: Date) -> Date { wallTime.addingTimeInterval(-Double(offsetMilliseconds) / 1000) }

    func setOffset(milliseconds: Int64) throws {
        offsetMilliseconds = milliseconds
        try state.save(milliseconds, key: "clock.offsetMs")
    }

    func setTimeZone(_ zone: TimeZone) throws {
        timeZone = zone
        calendar = ScheduleCalendar(timeZone: zone)
        try state.save(zone.identifier, key: "clock.timeZone")
    }
}
