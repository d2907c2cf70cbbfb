import Configuration

/// One product on the device — an app with its own companion process, picker selection, ManagedSettings stores,
/// DeviceActivity activities and extensions. iOS keeps each app's to that app: its extensions answer only for its
/// stores and activities, its timers and lifecycle reach only its own process.
public struct DeviceProduct {
    public var name: String
    /// The app that owns the product's stores and requests authorization: the product's main app.
    public var companionApp: CatalogApp?
    /// The plugin that runs as the companion app's process.
    public var companionPluginName: String?
    /// Per store, the only plugin allowed to remove its shields (the product's `stores:`).
    public var storeOwners: [String: String] = [:]
    /// What the person picks in this app's FamilyActivityPicker.
    public var selection = DeviceSettings.PickerChoice()
    /// The habits its app offers; nil: any name the person gives (`habits:` in the configuration).
    public var habits: [String]?
    /// The product's plugins; nil on a device with one product, where every plugin is the product's.
    public var plugins: Set<String>?

    public init(name: String, plugins: Set<String>? = nil) {
        self.name = name
        self.plugins = plugins
    }

    /// Whether `plugin` is one of the product's.
    func includes(_ plugin: String) -> Bool { plugins?.contains(plugin) ?? true }

    /// Whether the product's store `name` is one of its own (on a device with one product, every store is).
    func owns(store name: String) -> Bool { plugins == nil || storeOwners[name] != nil }
}

extension OfferedHabits {
    /// The habits the device's products' apps offer (each under its app's name).
    init(products: [DeviceProduct]) {
        self.init(listings: products.compactMap { product in
            product.habits.map { Listing(app: product.companionApp?.name ?? product.name, habits: $0) }
        })
    }
}
