import Foundation
import ManagedSettings
import ShieldBusSDK

/// Which of the reference products a reference plugin plays (the seeds' three apps); what it is held to is its
/// configuration's `promise:`.
public enum Product: String, Sendable {
    /// Habit Doom: the selection stays shielded until the day's habits are done; then unlocked for a while.
    case habitLock = "habit-lock"
    /// The focus app: shields during focus hours; a grace pass opens one app for a few minutes.
    case focusWindow = "focus-window"
    /// Tether: past a daily threshold a speed bump; dismissing it unblocks the current app and pauses monitoring.
    case speedBump = "speed-bump"

    /// The one of three values that is this product's. The reference plugins pick their class with it, not with a
    /// dictionary keyed by `Product`, whose `Hashable` conformance would be looked up at run time at every launch (a
    /// scan of the program's conformance records).
    func pick<Value>(habitLock: Value, focusWindow: Value, speedBump: Value) -> Value {
        switch self {
        case .habitLock: habitLock
        case .focusWindow: focusWindow
        case .speedBump: speedBump
        }
    }
}

/// The settings every reference plugin reads from its `options` in the configuration.
///
/// Read from the options' JSON without `Codable` (`JSONReadableOptions`): the monitor, renderer and delegate read them
/// at every launch of a short-lived extension.
public struct ProductOptions: JSONReadableOptions, Sendable {
    public var product: Product
    /// The App Group the product's plugins share.
    public var appGroup: String
    /// The ManagedSettings store the product shields through.
    public var store: String = "lock"
    /// Habit lock: habits to complete per day, and how long completing them unlocks.
    public var habitsPerDay: Int = 3
    public var unlockMinutes: Int = 30
    /// Focus window: the focus hours (local "HH:MM"), and how long a grace pass lasts.
    public var focusHours: [FocusHours] = []
    public var passMinutes: Int = 5
    /// Speed bump: the daily threshold and the cooldown after a dismiss.
    public var thresholdMinutes: Int = 30
    public var cooldownMinutes: Int = 15
    /// Shield renderer: the icon's resource name (a file in the renderer's resources).
    public var icon: String?

    /// One window of focus hours, local times of day (`"09:00"` to `"12:00"`); a wrong time is an options error.
    public typealias FocusHours = WallClockWindow

    /// The keys the options may have (the configuration checks the same: `ReferencePluginOptions.product`).
    enum Key: String, CaseIterable {
        case product, appGroup, store, habitsPerDay, unlockMinutes, focusHours, passMinutes, thresholdMinutes, cooldownMinutes, icon
    }

    public init(json: JSONValue) throws {
        let options = try OptionsObject(json, in: "the product's options", allowed: Key.allCases.map(\.rawValue))
        func int(_ key: Key, default value: Int) throws -> Int { try options.int(key.rawValue) ?? value }
        let word = try options.required(Key.product.rawValue, options.string)
        guard let product = Product(rawValue: word) else {
            throw PluginOptionsError.invalid(key: Key.product.rawValue, problem: "'\(word)' is not one of habit-lock, focus-window, speed-bump")
        }
        self.product = product
        appGroup = try options.required(Key.appGroup.rawValue, options.string)
        store = try options.string(Key.store.rawValue) ?? "lock"
        habitsPerDay = try int(.habitsPerDay, default: 3)
        unlockMinutes = try int(.unlockMinutes, default: 30)
        // A window's other keys are ignored, as the configuration ignores them (it does not check inside them).
        focusHours = try options.objects(Key.focusHours.rawValue, in: "focusHours", allowed: nil)?.map(FocusHours.init) ?? []
        passMinutes = try int(.passMinutes, default: 5)
        thresholdMinutes = try int(.thresholdMinutes, default: 30)
        cooldownMinutes = try int(.cooldownMinutes, default: 15)
        icon = try options.string(Key.icon.rawValue)
    }

    /// The speed bump's daily threshold over `list`; `includingPastActivity`: the OS counts the interval's use before
    /// the registration too (Apple's `includesPastActivity`; otherwise it counts from the registration).
    public func thresholdEvent(_ list: BlockList, includingPastActivity: Bool = false) -> DeviceActivityEvent {
        DeviceActivityEvent(applications: list.applications, categories: list.categories, webDomains: list.webDomains,
                            threshold: DateComponents(minute: thresholdMinutes), includesPastActivity: includingPastActivity)
    }

    /// This plugin's options (readable before it connects).
    public static func current() throws -> ProductOptions {
        try PluginRuntime.launchOptions(as: ProductOptions.self)
    }
}

extension WallClockWindow {
    enum Key: String { case start, end }

    init(_ window: OptionsObject) throws {
        self.init(start: try window.required(Key.start.rawValue, window.clockTime),
                  end: try window.required(Key.end.rawValue, window.clockTime))
    }
}
