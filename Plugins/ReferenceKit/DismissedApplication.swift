import ManagedSettings
import ShieldBusSDK

/// The app a speed bump's last dismiss let through, in the tokens the OS uses now.
///
/// The delegate records the token the shield handed it (`nudge.application`). An iOS update regenerates every token
/// and carries the OS's own copies over — the stores' shields, the activities' events — but not the App Group: the
/// recorded token then names no app. The shields stay right (the store's copy is the OS's); what breaks is writing
/// them again from scratch, as the companion app does after a revocation cleared them: passing the stale token
/// shields the dismissed app. So the monitor, at each callback, finds the dismissed app in the OS's copies — the one
/// selected app the store lets through — and records it in its own slice, for the nudge it belongs to.
public enum DismissedApplication {
    /// The monitor's record: the token in today's tokens, and the cooldown end of the nudge it stands for.
    struct Record: Codable, Equatable {
        var token: String
        var cooldownUntil: Double
    }

    /// The dismissed app: the monitor's record when it is for the last nudge, else the delegate's.
    public static func current(in defaults: SharedDefaults) throws -> ApplicationToken? {
        let cooldownUntil = try defaults.double(forKey: SharedKey.nudgeCooldownUntil)
        if let record = try defaults.value(Record.self, forKey: SharedKey.dismissedApplicationNow), record.cooldownUntil == cooldownUntil {
            return ApplicationToken(rawValue: record.token)
        }
        return try defaults.string(forKey: SharedKey.nudgeApplication).map(ApplicationToken.init(rawValue:))
    }

    /// Records the dismissed app again when its token is no longer among the selection's (`selected`, the OS's copy):
    /// it is the selected app the store's shield lets through — left out of its apps, or an exception to its
    /// categories. Nothing is recorded when that is not exactly one app (no speed bump up, or a selection changed).
    public static func keepCurrent(in defaults: SharedDefaults, selected: Set<ApplicationToken>, shield: ShieldSettings) throws {
        guard !selected.isEmpty, let token = try current(in: defaults), !selected.contains(token),
              let cooldownUntil = try defaults.double(forKey: SharedKey.nudgeCooldownUntil) else { return }
        var letThrough = selected.subtracting(shield.applications ?? [])
        if case .specific(_, let except)? = shield.applicationCategories { letThrough.formUnion(except) }
        guard letThrough.count == 1, let now = letThrough.first else { return }
        _ = try defaults.set(Record(token: now.rawValue, cooldownUntil: cooldownUntil), forKey: SharedKey.dismissedApplicationNow)
    }
}
