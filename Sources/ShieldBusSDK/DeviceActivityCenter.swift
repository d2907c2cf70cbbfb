import DeviceAPI
import Foundation
import ScreenTime

/// Starts and stops DeviceActivity monitoring (DeviceActivity's `DeviceActivityCenter`).
public struct DeviceActivityCenter {
    public typealias MonitoringError = DeviceActivityMonitoringError

    public init() {}

    /// Starts monitoring `activity` during `schedule`, watching `events`. Throws the OS's validation error
    /// (interval too short or long, too many activities, invalid components, unauthorized) as a `PluginError.device`.
    public func startMonitoring(_ activity: DeviceActivityName, during schedule: DeviceActivitySchedule,
                                events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:]) throws {
        _ = try runtime().call(DeviceTopic.startMonitoringRequest, StartMonitoring(activity: activity, schedule: schedule, events: events), expecting: NoValue.self)
    }

    /// Stops monitoring the given activities (all of them when empty).
    public func stopMonitoring(_ activities: [DeviceActivityName] = []) throws {
        _ = try runtime().call(DeviceTopic.stopMonitoringRequest, StopMonitoring(activities: activities), expecting: NoValue.self)
    }

    /// An activity's events as the OS holds them — in the current tokens, even after an OS update regenerated them.
    public func events(for activity: DeviceActivityName) throws -> [DeviceActivityEvent.Name: DeviceActivityEvent] {
        try runtime().call(DeviceTopic.eventsRequest, MonitoredEvents(activity: activity), expecting: MonitoredEvents.self).events
    }

    /// The activities being monitored.
    public func activities() throws -> [DeviceActivityName] {
        try runtime().call(DeviceTopic.activitiesRequest, NoValue(), expecting: MonitoredActivities.self).activities
    }
}

/// FamilyControls' authorization, as the companion app asks for it.
public struct AuthorizationCenter {
    public static let shared = AuthorizationCenter()

    /// Asks the person for authorization; returns the answer (`approved`, `denied`, or `notDetermined` while
    /// the configuration says `ask` and nobody has answered yet).
    @discardableResult
    public func requestAuthorization(for member: FamilyControlsMember) throws -> AuthorizationStatus {
        try runtime().call(DeviceTopic.authorizationRequest, AuthorizationRequest(member: member), expecting: AuthorizationState.self).status
    }

    /// What the person picks in the FamilyActivityPicker (only the main app shows the picker).
    public func pickActivities() throws -> FamilyActivitySelection {
        let runtime = try runtime()
        guard !runtime.isExtension else { throw PluginError.unavailableInExtension("FamilyActivityPicker") }
        return try runtime.call(DeviceTopic.pickerRequest, NoValue(), expecting: PickerResult.self).selection
    }
}

/// A named ManagedSettings store (ManagedSettings' `ManagedSettingsStore`). Setting a shield property
/// writes the whole store to the OS at once, as iOS applies it at once.
public final class ManagedSettingsStore {
    public let name: String
    public let shield: Shield

    /// The store with this name (`default` when none is given).
    public init(named name: String = "default") {
        self.name = name
        shield = Shield(store: name)
    }

    /// Removes every setting of this store (only the stores' owner may, when the configuration names one).
    public func clearAllSettings() throws {
        try shield.write(ShieldSettings())
    }

    /// The store's shield settings; each setter is a synchronous write to the OS that throws when refused.
    public final class Shield {
        let store: String
        init(store: String) { self.store = store }

        /// The store's current settings, read from the OS.
        public func current() throws -> ShieldSettings {
            try runtime().call(DeviceTopic.settingsReadRequest, NoValue(), expecting: ManagedSettingsSnapshot.self).stores[store] ?? ShieldSettings()
        }

        /// Replaces the store's settings.
        public func write(_ settings: ShieldSettings) throws {
            _ = try runtime().call(DeviceTopic.settingsWriteRequest, ManagedSettingsWrite(store: store, shield: settings), expecting: NoValue.self)
        }

        /// Changes the settings with `change` and writes them.
        public func update(_ change: (inout ShieldSettings) -> Void) throws {
            let before = try current()
            var settings = before
            change(&settings)
            if settings != before { try write(settings) }
        }

        public func setApplications(_ tokens: Set<ApplicationToken>?) throws { try update { $0.applications = tokens } }
        public func setApplicationCategories(_ policy: ShieldSettings.ActivityCategoryPolicy<Application>?) throws { try update { $0.applicationCategories = policy } }
        public func setWebDomains(_ tokens: Set<WebDomainToken>?) throws { try update { $0.webDomains = tokens } }
        public func setWebDomainCategories(_ policy: ShieldSettings.ActivityCategoryPolicy<WebDomain>?) throws { try update { $0.webDomainCategories = policy } }
    }
}
