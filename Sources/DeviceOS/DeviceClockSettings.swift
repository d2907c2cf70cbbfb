import Configuration
import DeviceAPI
import Foundation

/// The device clock and time zone the person sets (Settings › General › Date & Time): each change is announced to
/// the plugins and replans the wall-clock schedules.
extension DeviceOS {
    /// The device clock now (what `Date()` shows on the phone).
    var wallNow: Date { clock.wallTime(at: now) }

    /// The person sets the device clock: `device.clock-changed {offsetMs}`, then wall-clock schedules are planned again.
    func setClock(_ setting: ClockSetting) {
        // A shift moves the offset by exactly its amount: read through bus time, which moves on a real-time clock
        // between two readings, it could be off by a millisecond.
        let offset: Int64
        switch setting {
        case .shift(let seconds): offset = clock.offsetMilliseconds + Int64((seconds * 1000).rounded())
        case .absolute(let local): offset = DeviceAPI.busTime(local.resolve(in: clock.timeZone)) - bus.now
        }
        // A tool is told and nothing is announced; a scenario's step goes on as it always did (its journal stays).
        if offset == clock.offsetMilliseconds,
           inputChangedNothing("clock-unchanged", "the device clock shows that time already; nothing changed") { return }
        let dateShown = shownDate
        saveClock { try clock.setOffset(milliseconds: offset) }
        announceClockOffset()
        clockMoved(from: dateShown, zoneChanged: false)
    }

    /// `device.clock-changed {offsetMs}`: the device clock in force.
    func announceClockOffset() {
        emit(topic: DeviceTopic.clockChanged, body: ["offsetMs": .int(clock.offsetMilliseconds)], fact: StatedFact.clockOffset)
    }

    /// `device.time-zone-changed {timeZone}`: the zone in force.
    func announceTimeZone() {
        emit(topic: DeviceTopic.timeZoneChanged, body: ["timeZone": .string(clock.timeZone.identifier)], fact: StatedFact.timeZone)
    }

    /// The time zone in force changes: `device.time-zone-changed {timeZone}`, then wall-clock schedules follow it.
    func setTimeZone(_ identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return }  // the scenario checked the name
        if zone.identifier == clock.timeZone.identifier,
           inputChangedNothing("time-zone-unchanged", "the device is in \(zone.identifier) already; nothing changed") { return }
        let dateShown = shownDate
        saveClock { try clock.setTimeZone(zone) }
        announceTimeZone()
        clockMoved(from: dateShown, zoneChanged: true)
    }

    /// The date the device clock shows, as days since 1970-01-01 in the zone in force.
    fileprivate var shownDate: Int {
        let wall = wallNow
        return Int(((wall.timeIntervalSince1970 + Double(clock.timeZone.secondsFromGMT(for: wall))) / 86_400).rounded(.down))
    }

    func saveClock(_ change: () throws -> Void) {
        do { try change() } catch {
            storageFailed("cannot save the device clock in \(state.path): \(error)")
        }
    }

    /// The clock or zone changed while the device showed `dateShown`: a change to a later date begins another day.
    fileprivate func clockMoved(from dateShown: Int, zoneChanged: Bool) {
        announceClockToPlugins()
        activity.clockMoved(toALaterDate: shownDate > dateShown, zoneChanged: zoneChanged)
    }

    /// Plugins that start from now on learn the clock from their welcome; running ones from the events.
    func announceClockToPlugins() {
        attachedBus?.setPluginSetting("clockOffsetMs", .int(clock.offsetMilliseconds))
        attachedBus?.setPluginSetting("timeZone", .string(clock.timeZone.identifier))
        // How long the OS waits for a shield's answer: an action delegate's completion handler has that long.
        attachedBus?.setPluginSetting("replyTimeoutMs", .int(settings.replyTimeoutMilliseconds))
    }
}
