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
        match(plain: .application, inCategory: .applicationInCategory, byToken: { $0.applications?.contains(application) == true }) { settings in
            guard let policy = settings.applicationCategories else { return false }
            if application == owner, case .all = policy { return false }
            return policy.shields(application, category: category)
        }
    }

    /// Whether a web domain is shielded, and how; nil when it is not.
    ///
    /// - Parameters:
    ///   - webDomain: the domain's token.
    ///   - category: the domain's category, if it has one.
    public func match(webDomain: WebDomainToken, category: ActivityCategoryToken?) -> ShieldMatch? {
        match(plain: .webDomain, inCategory: .webDomainInCategory, byToken: { $0.webDomains?.contains(webDomain) == true }) {
            $0.webDomainCategories?.shields(webDomain, category: category) == true
        }
    }

    /// Every store that shields by token or by category, in one look at each store (the OS asks at every open), sorted;
    /// the token entry point when any store shields the token itself.
    private func match(plain: ShieldEntryPoint, inCategory: ShieldEntryPoint, byToken: (ShieldSettings) -> Bool,
                       byCategory: (ShieldSettings) -> Bool) -> ShieldMatch? {
        var names: [String] = []
        var anyByToken = false
        for (name, settings) in stores {
            if byToken(settings) {
                anyByToken = true
                names.append(name)
            } else if byCategory(settings) {
                names.append(name)
            }
        }
        guard !names.isEmpty else { return nil }
        return ShieldMatch(entryPoint: anyByToken ? plain : inCategory, stores: names.count > 1 ? names.sorted() : names)
    }
}
