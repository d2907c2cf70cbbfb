import Foundation
import ManagedSettings
import ShieldBusSDK

/// The passes a monitor granted — app token → end in true time — kept in the App Group, running or not yet shielded
/// again. A shield button's delegate may record only the last pass; the monitor keeps them all, so a second pass
/// never strands the first app unshielded. Ends are absolute: a clock the person sets extends nothing.
public struct PassBook {
    public let defaults: SharedDefaults
    public let key: String

    public init(defaults: SharedDefaults, key: String = "monitor.passes") {
        self.defaults = defaults
        self.key = key
    }

    /// Every pass recorded, app token → end (seconds since 1970).
    public func all() -> [String: Double] {
        (try? defaults.value([String: Double].self, forKey: key)) ?? [:]
    }

    public func save(_ passes: [String: Double]) throws {
        try defaults.set(passes, forKey: key)
    }

    /// The passes still running at `now`.
    public func running(at now: Date) -> [(application: ApplicationToken, until: Date)] {
        all().map { (ApplicationToken(rawValue: $0.key), Date(timeIntervalSince1970: $0.value)) }.filter { $0.until > now }
    }

    /// Records a pass (replacing one for the same app).
    public func grant(_ application: ApplicationToken, until: Date) throws {
        var passes = all()
        passes[application.rawValue] = until.timeIntervalSince1970
        try save(passes)
    }

    /// The instant a check should come to end the first pass that is still recorded: the whole minute after its end.
    public func nextCheck() -> Date? {
        all().values.min().map { TrueTimeSchedules.minuteAfter(Date(timeIntervalSince1970: $0)) }
    }
}
