// CallbackThrottle: the OS's limit on how often one app's DeviceActivity monitor is called back, in bus time.

/// A monitor that registers, at each callback, an interval starting at once is woken again at the same instant, for
/// ever: in virtual time the day would spin at one instant until a wall-clock timeout cut it, at a step that depends on
/// the machine's speed. What iOS does with such an extension is not documented, so the device draws its own line in
/// bus time: at most `perMinute` callbacks for one app's activities in any minute; one past it is not delivered (said
/// as `bus.error` `callback-loop`, which fails the run: `RunHealth`), and the loop stops at the same step on every run
/// and machine (docs/fidelity.md § 4).
///
/// Bounded: at most `perMinute` instants kept per app that has activities.
struct CallbackThrottle {
    /// More callbacks than this in a minute of one app's monitor is a loop: a product's schedules (20 activities at
    /// most, each starting and ending once a day with a few warnings and thresholds) stay far below it.
    static let perMinute = 60
    static let window: Int64 = 60_000

    /// Each app's callbacks in the last minute (bus times, ms), oldest first; `""` is a device with one product.
    private var recent: [String: [Int64]] = [:]

    /// Whether a callback of `app`'s monitor at `now` is delivered; one delivered is counted.
    mutating func admits(app: String, now: Int64) -> Bool {
        var times = recent[app, default: []]
        let cutoff = now - Self.window
        times.removeFirst(times.firstIndex { $0 > cutoff } ?? times.count)
        let admitted = times.count < Self.perMinute
        if admitted { times.append(now) }
        recent[app] = times
        return admitted
    }
}
