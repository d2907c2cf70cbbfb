import CDeviceClock
import Foundation

/// Puts the device's clock and zone behind the system's: inside a plugin, `Date()`, `Date.now`, `gettimeofday`,
/// `clock_gettime(CLOCK_REALTIME)` and `time()` read the device clock (bus time plus whatever the person set the
/// clock by), and `TimeZone.current` and `Calendar.current` are the device's zone in force — so extension code that
/// computes expiries and schedules with them runs on the device's time, as on a phone. Monotonic clocks stay the
/// host's (timeouts, polls). In virtual time the clock holds still at the instant of the event being handled.
///
/// The reads are this program's own definitions of the C library's clock calls (`CDeviceClock`), not libfaketime:
/// the time changes with every event, and libfaketime takes it from a variable or file that it parses again at
/// each read when asked not to cache, and fakes monotonic clocks, sleeps and polls unless told one by one not to.
enum DeviceClockBinding {
    // A plugin's callbacks run on its one runtime loop (`PluginRuntime`), which alone binds the clock.
    nonisolated(unsafe) private static var zoneInForce: String?
    nonisolated(unsafe) private static var offsetInForce: TimeInterval?

    /// Sets the process's clock to `deviceTime`, running at `rate` device seconds per host second (0 in virtual time).
    /// A running clock (real, scaled time) never goes back to an event's stamp, which trails it by the delivery's delay —
    /// unless the person set the device clock (`offset` changed), which moves it either way, as on a phone.
    static func set(deviceTime: Date, rate: Double, offset: TimeInterval) {
        var target = deviceTime.timeIntervalSince1970
        if rate > 0, offset == offsetInForce, shieldbus_device_clock_is_set() != 0 {
            target = max(target, Date().timeIntervalSince1970)
        }
        offsetInForce = offset
        // Whole nanoseconds within Int64's range (years 1678–2262).
        let nanoseconds = min(max((target * 1_000_000_000).rounded(), -9.2e18), 9.2e18)
        shieldbus_device_clock_set(nanoseconds.isFinite ? Int64(nanoseconds) : 0, rate)
    }

    /// Makes `zone` the process's `TimeZone.current` (through `TZ`, which Foundation reads for the system zone).
    static func set(zone: TimeZone) {
        guard zone.identifier != zoneInForce else { return }
        zoneInForce = zone.identifier
        setenv("TZ", zone.identifier, 1)
        tzset()
        NSTimeZone.resetSystemTimeZone()
    }
}
