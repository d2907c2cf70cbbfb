import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// ManagedSettings: the named stores of shield settings, persisted, with ShieldBus's ownership rule —
/// any plugin of the app may add a shield, only the stores' owner may remove one.
final class ManagedSettingsService {
    private unowned let device: DeviceOS
    private(set) var stores: [String: ShieldSettings]

    init(device: DeviceOS) throws {
        self.device = device
        stores = try device.state.load([String: ShieldSettings].self, key: "managedsettings.stores") ?? [:]
    }

    var matcher: ShieldMatcher { ShieldMatcher(stores: stores) }

    func handle(_ envelope: Envelope) {
        switch envelope.topic {
        case DeviceTopic.settingsReadRequest:
            device.reply(to: envelope, .success(ManagedSettingsSnapshot(stores: stores)))
        case DeviceTopic.settingsWriteRequest:
            guard let write = device.decode(ManagedSettingsWrite.self, from: envelope) else { return }
            if let error = refusal(of: write, by: envelope.source) {
                device.reply(to: envelope, DeviceReply<NoValue>.failure(error))
                return
            }
            apply(write.shield, to: write.store, writer: envelope.source)
            device.reply(to: envelope, .success(NoValue()))
        default:
            break
        }
    }

    /// Why a write is refused, if it is.
    private func refusal(of write: ManagedSettingsWrite, by writer: String) -> DeviceError? {
        guard device.authorization.isApproved else {
            return DeviceError(code: "unauthorized", message: "FamilyControls authorization is \(device.authorization.status.rawValue): request and get authorization before writing shields")
        }
        if write.store.isEmpty || write.store.count > 64 {
            return DeviceError(code: "bad-store-name", message: "a store name must be 1 to 64 characters")
        }
        if let owner = device.settings.storeOwners[write.store] ?? device.settings.managedSettingsOwner, writer != owner,
           !write.shield.covers(stores[write.store] ?? ShieldSettings()) {
            return DeviceError(code: "only-owner-may-remove",
                               message: "\(writer) may add shields but not remove them: only \(owner) (the stores' owner) removes shields; write your intent to the App-Group store instead")
        }
        return nil
    }

    func apply(_ shield: ShieldSettings, to store: String, writer: String) {
        // Writing what is already there changes nothing, and says nothing.
        guard shield != (stores[store] ?? ShieldSettings()) else { return }
        if shield.isEmpty { stores[store] = nil } else { stores[store] = shield }
        persist()
        device.emit(DeviceTopic.settingsChanged, ManagedSettingsChanged(store: store, shield: shield, writer: writer))
        device.screen.reevaluate(reason: "managed-settings")
    }

    func clearAll(reason: String) {
        for name in stores.keys.sorted() { apply(ShieldSettings(), to: name, writer: "system") }
    }

    func migrate(_ migration: TokenMigration) {
        stores = stores.mapValues(migration.migrate)
        persist()
    }

    private func persist() {
        device.save(stores, key: "managedsettings.stores")
    }
}

extension ShieldSettings {
    /// Whether these settings shield at least everything `old` shields (nothing was removed).
    func covers(_ old: ShieldSettings) -> Bool {
        func superset<T>(_ new: Set<T>?, _ old: Set<T>?) -> Bool { (old ?? []).isSubset(of: new ?? []) }
        return superset(applications, old.applications) && superset(webDomains, old.webDomains)
            && Self.covers(applicationCategories, old.applicationCategories)
            && Self.covers(webDomainCategories, old.webDomainCategories)
    }

    private static func covers<A>(_ new: ActivityCategoryPolicy<A>?, _ old: ActivityCategoryPolicy<A>?) -> Bool {
        switch (old ?? .none, new ?? .none) {
        case (.none, _): return true
        case (.all(let oldExcept), .all(let newExcept)): return newExcept.isSubset(of: oldExcept)
        case (.specific, .all(let newExcept)): return newExcept.isEmpty
        case (.specific(let oldCategories, let oldExcept), .specific(let newCategories, let newExcept)):
            return oldCategories.isSubset(of: newCategories) && newExcept.isSubset(of: oldExcept)
        default: return false
        }
    }
}
