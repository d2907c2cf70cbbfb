import DeviceActivity
import FamilyControls
import Foundation
import Logging
import ShieldBusSDK

/// What a product's app and extensions agree on: its App Group, its ManagedSettings store, where the app keeps the
/// person's pick, and the activities the app registers for its monitor: the OS's copy of the pick (`kept`), the
/// one-off window that wakes the monitor (`wake`) and the slot for a check the OS refused (`reserve`).
public struct MonitoredProduct: Sendable {
    /// Every activity's name begins with it (`<name>.selection`, `<name>.wake`, the chain's `<name>.reblock_0` …).
    public let name: String
    public let group: String
    public let storeName: String
    /// The App Group key under which the app keeps the person's pick (the app's slice).
    public let selectionKey: String
    public let kept: KeptSelection
    public let wake: DeviceActivityName
    public let reserve: DeviceActivityName

    public init(name: String, group: String, storeName: String? = nil, selectionKey: String = "selection") {
        self.name = name
        self.group = group
        self.storeName = storeName ?? name
        self.selectionKey = selectionKey
        kept = KeptSelection(activity: DeviceActivityName("\(name).selection"), event: DeviceActivityEvent.Name("\(name).selection"))
        wake = DeviceActivityName("\(name).wake")
        reserve = DeviceActivityName("\(name).reserve")
    }

    var logger: Logger? { PluginRuntime.current?.logger }

    /// The product's App Group, as this plugin may write it (its slice); nil, logged, when it cannot be opened (a
    /// wrong group name, a plugin not in the group).
    public func defaults() -> SharedDefaults? {
        do {
            return try SharedDefaults.forPlugin(suiteName: group)
        } catch {
            logger?.error("cannot open \(group): \(error)")
            return nil
        }
    }

    /// The pick the app saved, with the OS's current copy of it (the saved tokens go stale at an iOS update).
    public func selection(_ defaults: SharedDefaults) -> BlockList {
        let saved = ((try? defaults.value(FamilyActivitySelection.self, forKey: selectionKey)) ?? nil).map(BlockList.init) ?? BlockList()
        return kept.current(saved, center: DeviceActivityCenter())
    }

    // MARK: The app's part

    /// The app's set-up, at every start and again after an approval (a revocation takes every schedule with it):
    /// authorization; the pick in the OS's current tokens, saved and registered as the OS's copy (an iOS update
    /// regenerates the tokens, and a revocation took the OS's copy — the saved one alone would shield nothing); the
    /// reserve slot and the product's own `schedules`, each registered when missing; then a wake-up, so the monitor
    /// decides at once. False when the person has not approved (nothing to set up until an approval); throws what
    /// stopped it otherwise (`MonitoredProductApp` says it, and tries again what can pass).
    @discardableResult
    public func setUp(schedules: [DeviceActivityName: DeviceActivitySchedule] = [:], center: DeviceActivityCenter = DeviceActivityCenter()) throws -> Bool {
        let defaults = try SharedDefaults.forPlugin(suiteName: group)
        guard try AuthorizationCenter.shared.requestAuthorization(for: .individual) == .approved else { return false }
        let picked = try AuthorizationCenter.shared.pickActivities()
        if try defaults.value(FamilyActivitySelection.self, forKey: selectionKey) != picked { try defaults.set(picked, forKey: selectionKey) }
        try kept.register(selection(defaults), center: center)
        let registered = Set(try center.monitoredActivities())
        if !registered.contains(reserve) { try center.startMonitoring(reserve, during: TrueTimeSchedules.allDay) }
        for (activity, schedule) in schedules.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where !registered.contains(activity) {
            try center.startMonitoring(activity, during: schedule)
        }
        try startWakeWindow(center: center)
        return true
    }

    /// A one-off window starting now: the monitor's callback decides at once and plans its checks (after a choice the
    /// person made in the app, or the set-up). False, logged, when the OS refused it.
    @discardableResult
    public func wakeTheMonitor(center: DeviceActivityCenter = DeviceActivityCenter()) -> Bool {
        do {
            try startWakeWindow(center: center)
            return true
        } catch {
            logger?.error("cannot wake the monitor: \(error)")
            return false
        }
    }

    private func startWakeWindow(center: DeviceActivityCenter) throws {
        try center.startMonitoring(wake, during: TrueTimeSchedules.window(at: BusClock.absoluteNow))
    }

    /// Whether an authorization change is an approval (the app sets up again then).
    public static func isApproval(_ envelope: Envelope) -> Bool {
        envelope.topic == "familycontrols.authorization.changed" && envelope.bodyValue["status"]?.stringValue == "approved"
    }
}
