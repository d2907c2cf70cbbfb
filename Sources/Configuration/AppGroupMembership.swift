import Foundation

extension ShieldBusConfiguration {
    /// The App Groups each plugin is in, by plugin name: what its sandbox shows it and what its SDK lets it open, as
    /// an iOS extension's App Group entitlements. A plugin is in a group when its entry names it (`appGroup:`, or
    /// `appGroup` in its options), when its product's group is it, or when the group's slices name the plugin; in a
    /// configuration without `products:` and with one declared group, every plugin is in that group.
    public var pluginAppGroups: [String: [String]] {
        let declared = Set(appGroups.map(\.name))
        let products = resolvedProducts
        let onlyGroup = self.products.isEmpty && appGroups.count == 1 ? appGroups.first?.name : nil
        var membership: [String: [String]] = [:]
        for plugin in plugins {
            var groups: Set<String> = []
            // `appGroup:` (an entry's `environment` may also give SHIELDBUS_APP_GROUP, protocol.md § 12.1).
            if let group = plugin.appGroup ?? plugin.environment["SHIELDBUS_APP_GROUP"] { groups.insert(group) }
            if let group = plugin.options["appGroup"]?.stringValue { groups.insert(group) }
            for product in products where product.plugins.contains(plugin.name) {
                if let group = product.appGroup { groups.insert(group) }
            }
            for group in appGroups where group.slices[plugin.name] != nil { groups.insert(group.name) }
            if let onlyGroup { groups.insert(onlyGroup) }
            membership[plugin.name] = groups.intersection(declared).sorted()
        }
        return membership
    }
}
