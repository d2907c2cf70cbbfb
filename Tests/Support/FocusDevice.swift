import Configuration
import DeviceOS
import Foundation

/// A small device for tests that drive the device OS in-process: two apps — Instagram (social) and the product's
/// own app Focus — one product, `focus`, whose app is Focus; UTC, the faithful profile, no clock ticks.
public enum FocusDevice {
    public static func catalog() throws -> AppCatalog {
        try AppCatalog.parse(YAMLValue.parse("""
            categories: [{id: social, name: Social}, {id: productivity, name: Productivity}]
            apps:
              - {bundle: com.burbn.instagram, name: Instagram, category: social, domains: [instagram.com]}
              - {bundle: com.example.focus, name: Focus, category: productivity, domains: []}
            """, file: "catalog.yml"))
    }

    /// The device's settings; `companionPlugin`: the plugin that runs as Focus's process, if any.
    public static func settings(catalog: AppCatalog, companionPlugin: String? = nil) -> DeviceSettings {
        var settings = DeviceSettings(timeZone: TimeZone(identifier: "UTC")!, fidelity: Fidelity(profile: .faithful))
        var product = DeviceProduct(name: "focus")
        product.companionApp = catalog.app(named: "Focus")
        product.companionPluginName = companionPlugin
        settings.products = [product]
        settings.clockTicks = false
        return settings
    }
}
