import BusProtocol
import Configuration
import Foundation
import ScreenTime

/// What one product promises, from its configuration: which targets it selected, which stores are its own, and
/// its `promise:` — when each target must be locked, derived from what the person and the OS did (never from the
/// plugins). The promise's rules are read here; each lock source has its own file (windows, daily use, exceptions).
public struct ProductRules {
    /// The product's name in the configuration.
    public var name: String
    public var promise: Promise
    public var selectedApps: Set<String> = []
    public var selectedCategories: Set<String> = []
    public var selectedDomains: Set<String> = []
    /// The product's ManagedSettings stores; with one product on the device, every store but the OS's own is its.
    public var stores: Set<String> = []
    public var ownsEveryStore = false
    /// The product's plugins (whose authorization requests the OS answers for the product's app).
    public var plugins: Set<String> = []
    /// The product's own app, where the person's app actions happen (nil: any app's actions count).
    public var companionApp: String?
    /// A model outside the checker that says when targets are locked (the promise's `model`), once resolved.
    public var model: PromiseModel?

    /// How long after a lock (or a permission) begins the other state may still show (the promise's grace).
    public var grace: TimeInterval { promise.grace }

    public init(name: String, promise: Promise) {
        self.name = name
        self.promise = promise
    }

    /// The rules of every product of a configuration that declares a promise (`products:` entries, or the one
    /// product of `device:`); `models` resolves the escape hatch's names.
    public static func all(in configuration: ShieldBusConfiguration, catalog: AppCatalog, models: PromiseModels = .none) throws -> [ProductRules] {
        let products = configuration.resolvedProducts
        return try products.compactMap { product -> ProductRules? in
            guard let promise = product.promise else { return nil }
            var rules = ProductRules(name: product.name, promise: promise)
            if let name = promise.model {
                guard let model = models.model(named: name, configuration: configuration) else {
                    throw ConfigurationError(file: configuration.file, line: promise.line, column: 0, key: "promise.model",
                                             message: "no promise model named '\(name)' (\(models.describe))")
                }
                rules.model = model
            }
            rules.selectedApps = Set(product.selectionApps.compactMap { catalog.app(named: $0)?.name })
            rules.selectedCategories = Set(product.selectionCategories.compactMap { catalog.category(id: $0)?.name })
            rules.selectedDomains = Set(product.selectionDomains)
            rules.stores = Set(product.stores.map(\.name))
            rules.plugins = Set(product.plugins)
            rules.companionApp = product.companionApp
            rules.ownsEveryStore = products.count == 1
            return rules
        }
    }

    /// The products of a configuration that declare no promise (the checker cannot judge them).
    public static func undeclared(in configuration: ShieldBusConfiguration) -> [String] {
        configuration.resolvedProducts.filter { $0.promise == nil }.map(\.name)
    }

    /// Whether a target (an app or a domain, with its category) is part of the selection.
    func isSelected(_ target: Target) -> Bool {
        if let category = target.category, selectedCategories.contains(category) { return true }
        switch target {
        case .app(let name, _): return selectedApps.contains(name)
        case .domain(let host, _): return selectedDomains.contains { host == $0 || host.hasSuffix("." + $0) }
        }
    }

    /// Whether a shield shown with these stores is this product's (an OS view is nobody's).
    func owns(shieldFrom shieldStores: Set<String>) -> Bool {
        if ownsEveryStore { return !shieldStores.subtracting(Self.osViews).isEmpty }
        return !shieldStores.isDisjoint(with: stores)
    }

    /// What the OS's own views report as their store: Content & Privacy Restrictions and Screen Time's web limits.
    static let osViews: Set<String> = ["content-restrictions", "screen-time-limits"]

    /// When a selected target must be locked, within the journal's range: while any lock source holds and no
    /// exception lets it through; a strict window or session admits no exception.
    func locks(for target: Target, facts: JournalFacts, model modelLocks: [String: Periods]? = nil) -> Locks {
        if let modelLocks { return Locks(periods: modelLocks[target.name] ?? Periods()) }
        let locked = promise.locked
        var lenient = Periods()
        var locks = Locks()
        if locked.always { lenient = Periods([facts.range]) }
        lenient = lenient.union(lenientWindowLock(facts))
        lenient = lenient.union(sessionPeriods(facts, strict: false))
        if locked.dailyUse != nil {
            locks = dailyUseLocks(for: target, facts: facts)
            lenient = lenient.union(locks.periods)
        }
        let strict = windowPeriods(facts, strict: true).union(sessionPeriods(facts, strict: true))
        locks.periods = lenient.subtracting(exceptions(for: target, facts: facts)).union(strict)
        return locks
    }
}

extension ShieldButton {
    /// The shield action the OS journals for a press of this button.
    var shieldAction: ShieldAction {
        switch self {
        case .primary: return .primaryButtonPressed
        case .secondary: return .secondaryButtonPressed
        }
    }
}
