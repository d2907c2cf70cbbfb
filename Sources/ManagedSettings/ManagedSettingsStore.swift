// ManagedSettings, as iOS names it: the named stores that shield apps, categories and web domains, and the
// shield-action extension point. Plugins import it exactly as extension code does on iOS.
@_exported import ScreenTime
import DeviceAPI
import Foundation
import ShieldBusSDK

/// A named store of settings (`ManagedSettingsStore`). Its properties are set as on iOS —
/// `store.shield.applications = tokens` — and each set is a write to the OS at once. iOS drops a refused write
/// silently; here the refusal is also an event on the bus (`state.call-failed`), counted in `shieldbus status`.
/// The throwing forms (`shield.write`, `shield.update`, `removeAllSettings`) are ShieldBus's, for code that acts on
/// the refusal.
open class ManagedSettingsStore {
    /// A store's name (`ManagedSettingsStore.Name`).
    public struct Name: Hashable, RawRepresentable, Sendable, Codable, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        /// The store `ManagedSettingsStore()` opens.
        public static let `default` = Name("default")
    }

    /// The store's name.
    public let name: Name
    /// Its shield settings.
    public let shield: Shield
    /// Its web content settings.
    public let webContent: WebContent
    /// Its application settings.
    public let application: ApplicationSettings

    /// The default store.
    public convenience init() { self.init(named: .default) }

    /// The store with this name.
    public init(named name: Name) {
        self.name = name
        shield = Shield(store: name.rawValue)
        webContent = WebContent(store: name.rawValue)
        application = ApplicationSettings(store: name.rawValue)
    }

    /// Removes every setting of this store (`clearAllSettings()`): only the stores' owner may, when the
    /// configuration names one. A refusal is reported on the bus.
    open func clearAllSettings() {
        SilentCall.report("ManagedSettingsStore(named: \(name.rawValue)).clearAllSettings()") { try removeAllSettings() }
    }

    /// Removes every setting of this store, throwing when the OS refuses (ShieldBus's form of `clearAllSettings`).
    public func removeAllSettings() throws {
        try shield.write(ShieldSettings())
    }

    /// The store's shield settings (`ShieldSettings` on iOS, bound to its store): each property reads the OS's
    /// current value and each set writes it.
    public final class Shield {
        let store: String
        init(store: String) { self.store = store }

        /// Apps shielded by token.
        public var applications: Set<ApplicationToken>? {
            get { read(\.applications) }
            set { set("applications") { $0.applications = newValue } }
        }
        /// Apps shielded by category.
        public var applicationCategories: ShieldSettings.ActivityCategoryPolicy<Application>? {
            get { read(\.applicationCategories) }
            set { set("applicationCategories") { $0.applicationCategories = newValue } }
        }
        /// Web domains shielded by token.
        public var webDomains: Set<WebDomainToken>? {
            get { read(\.webDomains) }
            set { set("webDomains") { $0.webDomains = newValue } }
        }
        /// Web domains shielded by category.
        public var webDomainCategories: ShieldSettings.ActivityCategoryPolicy<WebDomain>? {
            get { read(\.webDomainCategories) }
            set { set("webDomainCategories") { $0.webDomainCategories = newValue } }
        }

        private func read<Value>(_ setting: KeyPath<ShieldSettings, Value?>) -> Value? {
            SilentCall.report("ManagedSettingsStore(named: \(store)).shield (read)") { try current()[keyPath: setting] } ?? nil
        }

        private func set(_ property: String, _ change: (inout ShieldSettings) -> Void) {
            SilentCall.report("ManagedSettingsStore(named: \(store)).shield.\(property) = …") { try update(change) }
        }

        // ShieldBus's throwing forms.

        /// The store's current settings, read from the OS.
        public func current() throws -> ShieldSettings {
            try PluginRuntime.running().call(DeviceTopic.settingsReadRequest, NoValue(), expecting: ManagedSettingsSnapshot.self).stores[store] ?? ShieldSettings()
        }

        /// Replaces the store's settings.
        public func write(_ settings: ShieldSettings) throws {
            _ = try PluginRuntime.running().call(DeviceTopic.settingsWriteRequest, ManagedSettingsWrite(store: store, shield: settings), expecting: NoValue.self)
        }

        /// Changes the settings with `change` and writes them when they changed.
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

    /// Web content settings (`WebContentSettings`). ShieldBus's device does not filter web content yet: a set is
    /// refused and reported on the bus (`state.call-failed`), never silently ignored; reads give nil.
    public final class WebContent {
        let store: String
        init(store: String) { self.store = store }

        /// How web content is filtered (`WebContentSettings.FilterPolicy`).
        public enum FilterPolicy: Hashable, Sendable {
            case none
            case auto(Set<WebDomain> = [], except: Set<WebDomain> = [])
            case specific(Set<WebDomain>)
            case all(except: Set<WebDomain> = [])
        }

        /// The filter (`blockedByFilter`).
        public var blockedByFilter: FilterPolicy? {
            get { nil }
            set { SilentCall.unsupported("ManagedSettingsStore(named: \(store)).webContent.blockedByFilter = …", "web content filters") }
        }
    }

    /// Application settings (`ApplicationSettings`). ShieldBus's device has no app installs or removals: a set is
    /// refused and reported on the bus, never silently ignored; reads give nil.
    public final class ApplicationSettings {
        let store: String
        init(store: String) { self.store = store }

        /// Whether the person may delete apps (`denyAppRemoval`).
        public var denyAppRemoval: Bool? {
            get { nil }
            set { SilentCall.unsupported("ManagedSettingsStore(named: \(store)).application.denyAppRemoval = …", "app removal") }
        }
        /// Whether the person may install apps (`denyAppInstallation`).
        public var denyAppInstallation: Bool? {
            get { nil }
            set { SilentCall.unsupported("ManagedSettingsStore(named: \(store)).application.denyAppInstallation = …", "app installation") }
        }
        /// Apps the person may not use at all (`blockedApplications`).
        public var blockedApplications: Set<Application>? {
            get { nil }
            set { SilentCall.unsupported("ManagedSettingsStore(named: \(store)).application.blockedApplications = …", "blocked applications") }
        }
    }
}
