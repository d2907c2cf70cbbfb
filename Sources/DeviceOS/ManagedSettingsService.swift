import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// ManagedSettings: the named stores of shield settings, persisted, with ShieldBus's ownership rule —
/// any plugin of the app may add a shield, only the stores' owner may remove one. On a device with several
/// products, each app reads and writes only its own stores; the OS merges them all (any store's shield holds).
/// A write is in force and announced (`managedsettings.changed`) only once `device.sqlite` holds it: an unlock or a
/// re-block is durable before it is told, so a crash never leaves a journal (and plugins) told of shields the
/// restarted device does not have. A write the disk cannot take waits, in order, and takes effect when it is saved.
final class ManagedSettingsService: ShieldStores {
    private unowned let host: any DeviceHost
    private let directory: DeviceDirectory
    private let authorization: any AuthorizationStatuses
    /// Waiting writes were put in force and announced: what the stores shield may have changed.
    private let enforced: () -> Void
    /// The stores in force: what `device.sqlite` holds.
    private(set) var stores: [String: ShieldSettings] {
        didSet {
            readReplies.removeAll()
            matchers.removeAll()
        }
    }
    /// The body of the `managedsettings.read.reply` each reader (by source) was last given, while the stores stay as
    /// they were: plugins read them at every callback, and they change far more rarely.
    private var readReplies: [String: [UInt8]] = [:]
    /// Each product's matcher (by the product's name), while the stores stay as they were: the OS matches at every
    /// open, and picking a product's stores out of all is a dictionary built each time.
    private var matchers: [String: ShieldMatcher] = [:]
    /// Who made each store what it is (saved with the stores, for `JournalCatchUp`).
    private var writers: [String: String]
    /// Writes accepted while the disk could not take them, in order: in force and announced once saved.
    private var waiting: [Write] = []

    private struct Write {
        var shield: ShieldSettings
        var store: String
        var writer: String
    }

    /// The stores and writers with every waiting write made: what the next save holds.
    private var written: (stores: [String: ShieldSettings], writers: [String: String]) {
        var stores = self.stores, writers = self.writers
        for write in waiting {
            stores[write.store] = write.shield.isEmpty ? nil : write.shield
            writers[write.store] = write.writer
        }
        return (stores, writers)
    }

    /// Apple's limit on the named stores one process uses (ManagedSettingsStore's documentation). Only stores holding
    /// settings count: one written empty is gone.
    static let maximumNamedStores = 50

    /// The stores as the device's state holds them; `enforced` is told after each change is put in force.
    init(host: any DeviceHost, directory: DeviceDirectory, authorization: any AuthorizationStatuses, enforced: @escaping () -> Void) throws {
        self.host = host
        self.directory = directory
        self.authorization = authorization
        self.enforced = enforced
        stores = try host.state.load([String: ShieldSettings].self, key: Self.storesKey) ?? [:]
        writers = try host.state.load([String: String].self, key: "managedsettings.writers") ?? [:]
    }

    /// The plugin (or "system") whose write made `store` what it is.
    func lastWriter(of store: String) -> String { writers[store] ?? "system" }

    /// The stores of `product`'s app (every store on a device with one product).
    func matcher(for product: DeviceProduct) -> ShieldMatcher {
        if let matcher = matchers[product.name] { return matcher }
        let matcher = ShieldMatcher(stores: stores.filter { product.owns(store: $0.key) })
        matchers[product.name] = matcher
        return matcher
    }

    func handle(_ envelope: Envelope) {
        switch envelope.topic {
        case DeviceTopic.settingsReadRequest:
            host.reply(to: envelope, bodyJSON: readReply(for: envelope.source))
        case DeviceTopic.settingsWriteRequest:
            guard let write = host.decode(ManagedSettingsWrite.self, from: envelope) else { return }
            if let error = refusal(of: write, by: envelope.source) {
                host.reply(to: envelope, DeviceReply<NoValue>.failure(error))
                return
            }
            apply(write.shield, to: write.store, writer: envelope.source)
            host.replySuccess(to: envelope)
        default:
            break
        }
    }

    /// What `source` reads of the stores: an app sees its own stores; a tool or tap (no product's) sees the device's.
    private func readReply(for source: String) -> [UInt8] {
        if let body = readReplies[source] { return body }
        let product = directory.audience(of: source) == nil ? nil : directory.product(of: source)
        let snapshot = ManagedSettingsSnapshot(stores: product.map { own in stores.filter { own.owns(store: $0.key) } } ?? stores)
        let body = DeviceAPICoding.encode(DeviceReply.success(snapshot))
        readReplies[source] = body
        return body
    }

    /// Why a write is refused, if it is.
    private func refusal(of write: ManagedSettingsWrite, by writer: String) -> DeviceError? {
        if let over = write.shield.tokenSetOverTheLimit {
            // iOS takes such a write without an error and shields nothing past the limit; here the whole write is refused,
            // loudly — stricter on purpose: a product that needs more tokens must not look as if it worked.
            return DeviceError(code: "too-many-tokens", message: "\(over.setting) holds \(over.count) tokens: ManagedSettings takes at most "
                + "\(ShieldSettings.maximumTokens) per set (iOS shields nothing past it, without a word); the store is unchanged")
        }
        let status = authorization.status(of: writer)
        guard status == .approved else {
            return DeviceError(code: "unauthorized", message: "FamilyControls authorization is \(status.rawValue): request and get authorization before writing shields")
        }
        if write.store.isEmpty || write.store.count > 64 {
            return DeviceError(code: "bad-store-name", message: "a store name must be 1 to 64 characters")
        }
        let declaredBy = directory.settings.products.first { $0.storeOwners[write.store] != nil }
        if directory.settings.products.count > 1, let product = directory.product(of: writer), !product.owns(store: write.store) {
            return DeviceError(code: "store-of-another-app",
                               message: "\(writer) belongs to \(product.name), which has no store '\(write.store)'"
                                   + (declaredBy.map { " (it is \($0.name)'s)" } ?? "") + ": an app writes only its own stores (its product's `stores:`)")
        }
        let stores = written.stores
        let ownStores = stores.keys.filter { name in directory.product(of: writer).map { $0.owns(store: name) } ?? true }
        if stores[write.store] == nil, !write.shield.isEmpty, ownStores.count >= Self.maximumNamedStores {
            // Apple documents the limit, not what passes it does: refused loudly, as too-many-tokens is.
            return DeviceError(code: "too-many-stores", message: "the app already has \(ownStores.count) ManagedSettings stores holding settings: "
                + "a process may use at most \(Self.maximumNamedStores) named stores; clear one (write an empty shield) or reuse a name; '\(write.store)' is unchanged")
        }
        if let owner = declaredBy?.storeOwners[write.store] ?? directory.settings.managedSettingsOwner, writer != owner,
           !write.shield.covers(stores[write.store] ?? ShieldSettings()) {
            return DeviceError(code: "only-owner-may-remove",
                               message: "\(writer) may add shields but not remove them: only \(owner) (the stores' owner) removes shields; write your intent to the App-Group store instead")
        }
        return nil
    }

    func apply(_ shield: ShieldSettings, to store: String, writer: String) {
        // Writing what is already there (or on its way there) changes nothing, and says nothing.
        guard shield != (written.stores[store] ?? ShieldSettings()) else { return }
        waiting.append(Write(shield: shield, store: store, writer: writer))
        persist()
        enforceSaved()
    }

    /// Puts in force and announces, in order, the waiting writes once `device.sqlite` holds them (saved by this
    /// service's next save or by the device's retry of what it could not save: `UnsavedStateRetry`).
    func enforceSaved() {
        guard !waiting.isEmpty, host.state.isSaved(key: Self.storesKey) else { return }
        let saved = waiting
        (stores, writers) = written
        waiting = []
        for write in saved { announce(write.shield, to: write.store, writer: write.writer) }
        enforced()
    }

    /// `managedsettings.changed`: what `store` holds now, and who wrote it.
    func announce(_ shield: ShieldSettings, to store: String, writer: String) {
        host.emit(DeviceTopic.settingsChanged, ManagedSettingsChanged(store: store, shield: shield, writer: writer), fact: StatedFact.store(store))
    }

    func clearAll(reason: String) {
        for name in written.stores.keys.sorted() { apply(ShieldSettings(), to: name, writer: "system") }
    }

    func migrate(_ migration: TokenMigration) {
        stores = stores.mapValues(migration.migrate)
        for index in waiting.indices { waiting[index].shield = migration.migrate(waiting[index].shield) }
        persist()
    }

    static let storesKey = "managedsettings.stores"

    /// Saves the stores and their writers, waiting writes made, together (one transaction).
    private func persist() {
        let (stores, writers) = written
        host.saving("the ManagedSettings stores") {
            try $0.save(jsonByKey: [Self.storesKey: DeviceAPICoding.encode(stores), "managedsettings.writers": DeviceAPICoding.encode(writers)])
        }
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
