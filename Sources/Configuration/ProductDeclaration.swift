import Foundation

/// A product on the device — its companion app, selection, app group, ManagedSettings stores (each with its one
/// owner) and the plugins that make it up. Several products may share one device; a configuration with one
/// product may leave it implicit in `device:`.
public struct ProductDeclaration: Equatable {
    /// A ManagedSettings store of the product and the one plugin that may remove its shields.
    public struct Store: Equatable {
        public var name: String
        public var owner: String?

        public init(name: String, owner: String?) {
            self.name = name
            self.owner = owner
        }
    }

    public var name: String
    public var companionApp: String?
    public var companionPlugin: String?
    public var appGroup: String?
    public var stores: [Store] = []
    public var selectionApps: [String] = []
    public var selectionCategories: [String] = []
    public var selectionDomains: [String] = []
    /// The habits the product's app offers (`habits:`; nil: any name). See `DeviceSection.habits`.
    public var habits: [String]?
    public var plugins: [String] = []
    /// What the product promises about its locks (`promise:`); nil: nothing the checker can judge.
    public var promise: Promise?
    public var line: Int

    /// The store a reference plugin writes when its options name none.
    public static let defaultStore = "lock"
}

extension ShieldBusConfiguration {
    /// The products on the device: those under `products:`, or the one a single-product configuration describes
    /// with `device:` (its companion, selection and owner) and every plugin — named after the plugins' `product`
    /// option, else after the configuration.
    public var resolvedProducts: [ProductDeclaration] {
        if !products.isEmpty { return products }
        let plugin = plugins.first { $0.options["product"] != nil }
        var product = ProductDeclaration(name: plugin?.options["product"]?.stringValue ?? name, line: 0)
        product.companionApp = device.companionApp
        product.companionPlugin = device.companionPlugin
        product.appGroup = plugin?.appGroup ?? plugin?.options["appGroup"]?.stringValue
        product.stores = [.init(name: plugin?.options["store"]?.stringValue ?? ProductDeclaration.defaultStore, owner: device.managedSettingsOwner)]
        product.selectionApps = device.selectionApps
        product.selectionCategories = device.selectionCategories
        product.selectionDomains = device.selectionDomains
        product.habits = device.habits
        product.plugins = plugins.map(\.name)
        product.promise = promise
        return [product]
    }

    /// Reads `products:` once the plugins and app groups are known.
    mutating func parseProducts(_ value: YAMLValue, device deviceValue: YAMLValue?, promise promiseValue: YAMLValue?) throws {
        if let promiseValue { throw promiseValue.error("with `products:`, each product declares its own promise (move it into its product)") }
        if let deviceFields = try deviceValue?.uniqueMapping() {
            for key in ["companionApp", "companionPlugin", "managedSettingsOwner", "selection", "habits"] {
                if let field = deviceFields[key] { throw field.error("with `products:`, each product names its own \(key) (move it into its product)") }
            }
        }
        let pluginNames = Set(plugins.map(\.name))
        var owners: [String: String] = [:]
        var storeProducts: [String: String] = [:]
        for entry in try value.list() {
            let fields = try entry.uniqueMapping(allowed: ["name", "companionApp", "companionPlugin", "appGroup", "stores", "selection", "habits", "plugins", "promise"])
            guard let nameValue = fields["name"] else { throw entry.error("a product needs a 'name'") }
            var product = ProductDeclaration(name: try nameValue.string(), line: entry.line)
            guard !products.contains(where: { $0.name == product.name }) else { throw nameValue.error("the product name '\(product.name)' is used twice") }
            guard let pluginList = fields["plugins"] else { throw entry.error("product '\(product.name)' needs its 'plugins' (names from plugins:)") }
            product.plugins = try pluginList.stringList()
            for plugin in product.plugins {
                guard pluginNames.contains(plugin) else { throw pluginList.error("no plugin named '\(plugin)' in plugins") }
                if let other = owners[plugin] { throw pluginList.error("the plugin '\(plugin)' is already part of the product '\(other)'") }
                owners[plugin] = product.name
            }
            func member(_ key: String) throws -> String? {
                guard let field = fields[key] else { return nil }
                let plugin = try field.string()
                guard product.plugins.contains(plugin) else { throw field.error("'\(plugin)' is not one of this product's plugins (\(product.plugins.joined(separator: ", ")))") }
                return plugin
            }
            product.companionApp = try fields["companionApp"]?.string()
            product.companionPlugin = try member("companionPlugin")
            if let group = fields["appGroup"] {
                product.appGroup = try group.string()
                guard appGroups.contains(where: { $0.name == product.appGroup }) else { throw group.error("the app group '\(product.appGroup!)' is not declared under appGroups:") }
            }
            guard let stores = fields["stores"] else { throw entry.error("product '\(product.name)' needs its ManagedSettings 'stores', each with its owner: {lock: monitor}") }
            for (store, owner) in try stores.uniqueMapping().sorted(by: { $0.key < $1.key }) {
                if let other = storeProducts[store] { throw owner.error("the store '\(store)' already belongs to the product '\(other)'") }
                storeProducts[store] = product.name
                let plugin = try owner.string()
                guard product.plugins.contains(plugin) else { throw owner.error("the owner '\(plugin)' is not one of this product's plugins") }
                product.stores.append(.init(name: store, owner: plugin))
            }
            product.stores.sort { $0.name < $1.name }
            if let selection = fields["selection"] {
                let picked = try selection.uniqueMapping(allowed: ["apps", "categories", "domains"])
                product.selectionApps = try picked["apps"]?.stringList() ?? []
                product.selectionCategories = try picked["categories"]?.stringList() ?? []
                product.selectionDomains = try picked["domains"]?.stringList() ?? []
                lines["products.\(product.name).selection"] = selection.line
            }
            product.habits = try fields["habits"].map(ShieldBusConfiguration.habitList)
            product.promise = try fields["promise"].map(Promise.parse)
            lines["products.\(product.name)"] = entry.line
            products.append(product)
        }
    }
}
