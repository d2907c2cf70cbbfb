import Foundation

/// Which `ShieldConfigurationDataSource` / `ShieldActionDelegate` method a shield goes to.
/// JSON: the case name.
public enum ShieldEntryPoint: String, Hashable, Sendable, Codable, CaseIterable {
    /// An app shielded by its own token: `configuration(shielding:)`.
    case application
    /// An app shielded because of its category: `configuration(shielding:in:)`.
    case applicationInCategory
    /// A web domain shielded by its own token: `configuration(shielding:)`.
    case webDomain
    /// A web domain shielded because of its category: `configuration(shielding:in:)`.
    case webDomainInCategory
}

/// Why something is shielded: the entry point that applies and the stores that shield it.
public struct ShieldMatch: Hashable, Sendable, Codable {
    /// The entry point: the token one when any store shields the token itself, else the category one.
    public let entryPoint: ShieldEntryPoint
    /// The names of every store that shields it, by token or by category, sorted.
    public let stores: [String]

    /// Describes a match. Made by `ShieldMatcher`; public for tests and decoding.
    public init(entryPoint: ShieldEntryPoint, stores: [String]) {
        self.entryPoint = entryPoint
        self.stores = stores
    }
}

/// Decides whether an app or a web domain is shielded by a set of named ManagedSettings stores.
///
/// Every store's settings apply at once (the union of the stores). Within a store, a token
/// shield (`applications`, `webDomains`) and a category policy work in tandem; a category
/// policy's exceptions exempt only from that policy, so they never lift a token shield, nor
/// a shield set by another store.
public struct ShieldMatcher: Hashable, Sendable {
    /// Each store's settings, by store name.
    public let stores: [String: ShieldSettings]

    /// A matcher over these stores' settings.
    public init(stores: [String: ShieldSettings]) {
        self.stores = stores
    }

    /// Whether an app is shielded, and how; nil when it is not.
    ///
    /// - Parameters:
    ///   - application: the app's token.
    ///   - category: the app's category, if it has one.
    ///   - owner: the token of the app that owns the stores: Apple exempts it from `.all`,
    ///     so a blocking app can't lock itself out.
    public func match(application: ApplicationToken, category: ActivityCategoryToken?, owner: ApplicationToken? = nil) -> ShieldMatch? {
        let byToken = storeNames { $0.applications?.contains(application) == true }
        let byCategory = storeNames { settings in
            guard let policy = settings.applicationCategories else { return false }
            if application == owner, case .all = policy { return false }
            return policy.shields(application, category: category)
        }
        return Self.match(byToken: byToken, byCategory: byCategory, plain: .application, inCategory: .applicationInCategory)
    }

    /// Whether a web domain is shielded, and how; nil when it is not.
    ///
    /// - Parameters:
    ///   - webDomain: the domain's token.
    ///   - category: the domain's category, if it has one.
    public func match(webDomain: WebDomainToken, category: ActivityCategoryToken?) -> ShieldMatch? {
        let byToken = storeNames { $0.webDomains?.contains(webDomain) == true }
        let byCategory = storeNames { $0.webDomainCategories?.shields(webDomain, category: category) == true }
        return Self.match(byToken: byToken, byCategory: byCategory, plain: .webDomain, inCategory: .webDomainInCategory)
    }

    private func storeNames(where shields: (ShieldSettings) -> Bool) -> Set<String> {
        Set(stores.filter { shields($0.value) }.keys)
    }

    private static func match(byToken: Set<String>, byCategory: Set<String>, plain: ShieldEntryPoint, inCategory: ShieldEntryPoint) -> ShieldMatch? {
        let all = byToken.union(byCategory)
        guard !all.isEmpty else { return nil }
        return ShieldMatch(entryPoint: byToken.isEmpty ? inCategory : plain, stores: all.sorted())
    }
}
