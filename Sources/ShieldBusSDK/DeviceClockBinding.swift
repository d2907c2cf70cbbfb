import CDeviceClock
import CivilCalendar
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
///
/// A plugin process binds the process's clock; a plugin hosted on a thread of a test's process binds that thread's
/// own (`Scope.thread`), so that several plugins in one process each read their own bus time.
struct DeviceClockBinding {
    enum Scope { case process, thread }

    let scope: Scope
    /// The person's offset last bound: a change moves a running clock either way.
    private var offsetInForce: TimeInterval?

    init(scope: Scope) { self.scope = scope }

    /// The zone bound last, process-wide (`TZ` is the process's): one device's plugins share its zone. A process starts
    /// with the zone its `TZ` names, which the broker sets to the device's at each launch: Foundation and the C library
    /// read their system zone from it, so a first bind of that zone has nothing to reset.
    private static let zoneInForce = LockedValue<String?>(getenv("TZ").map { String(cString: $0) })

    /// Sets the clock to `deviceTime`, running at `rate` device seconds per host second (0 in virtual time).
    /// A running clock (real, scaled time) never goes back to an event's stamp, which trails it by the delivery's delay —
    /// unless the person set the device clock (`offset` changed), which moves it either way, as on a phone.
    mutating func set(deviceTime: Date, rate: Double, offset: TimeInterval) {
        var target = deviceTime.timeIntervalSince1970
        let isSet = scope == .thread ? shieldbus_device_clock_thread_is_set() != 0 : shieldbus_device_clock_is_set() != 0
        if rate > 0, offset == offsetInForce, isSet {
            target = max(target, Date().timeIntervalSince1970)
        }
        offsetInForce = offset
        // Whole nanoseconds within Int64's range (years 1678–2262).
        let nanoseconds = min(max((target * 1_000_000_000).rounded(), -9.2e18), 9.2e18)
        let bound = nanoseconds.isFinite ? Int64(nanoseconds) : 0
        switch scope {
        case .process: shieldbus_device_clock_set(bound, rate)
        case .thread: shieldbus_device_clock_set_thread(bound, rate)
        }
    }

    /// Makes the zone named `identifier` (`zone()` when it is not the one in force: an unknown name gives UTC) the
    /// process's `TimeZone.current` (through `TZ`, which Foundation reads for the system zone). The name is compared
    /// first: binding runs at every event, and a `TimeZone` made per event is a look-up in Foundation's cache.
    static func set(zoneNamed identifier: String?, _ zone: () -> TimeZone) {
        zoneInForce.withValue { inForce in
            if identifier != nil, identifier == inForce { return }
            let zone = zone()
            guard zone.identifier != inForce else { return }
            inForce = zone.identifier
            setenv("TZ", zone.identifier, 1)
            tzset()
            NSTimeZone.resetSystemTimeZone()
            ZoneOffsets.forgetAll()
        }
    }
}

/// A value behind a lock, for the few process-wide facts the SDK keeps.
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    var current: Value { lock.withLock { value } }

    func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}
