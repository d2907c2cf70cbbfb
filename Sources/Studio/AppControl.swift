import Configuration

/// A control in a product's own app the person may tap (`shieldbus do app-action`): one its promise names — an
/// override, a session's start or stop, an unlock earned in the app — so the Studio offers what the product reacts to.
public struct AppControl: Sendable, Equatable {
    /// The product's app (its companion app), nil when the configuration names none.
    public var app: String?
    public var action: String

    public init(app: String?, action: String) {
        self.app = app
        self.action = action
    }

    /// Every product's controls, in the order its promise names them.
    public static func all(in configuration: ShieldBusConfiguration) -> [AppControl] {
        configuration.resolvedProducts.flatMap { product in
            (product.promise?.appActions ?? []).map { AppControl(app: product.companionApp, action: $0) }
        }
    }
}

extension AppControl {
    /// The habits the products' apps offer, in the order they list them (`habits:`).
    public static func habits(in configuration: ShieldBusConfiguration) -> [String] {
        configuration.resolvedProducts.flatMap { $0.habits ?? [] }
    }
}
