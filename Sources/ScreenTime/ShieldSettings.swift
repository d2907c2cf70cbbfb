import Foundation

/// What one ManagedSettings store shields (ManagedSettings' `ShieldSettings`).
///
/// The four settings work in tandem: `applications` and `webDomains` shield specific tokens;
/// the category policies shield by category, and their exceptions exempt tokens from that
/// policy only. `nil` means the store doesn't set that setting.
public struct ShieldSettings: Hashable, Sendable, Codable {
    /// Apps to shield by token.
    public var applications: Set<ApplicationToken>?
    /// Apps to shield by their category. The app that owns the store is exempt from `.all`.
    public var applicationCategories: ActivityCategoryPolicy<Application>?
    /// Web domains to shield by token.
    public var webDomains: Set<WebDomainToken>?
    /// Web domains to shield by their category.
    public var webDomainCategories: ActivityCategoryPolicy<WebDomain>?

    /// Apple's limit on each token set of a store's shield settings: applications, web domains, a category policy's
    /// categories and its exceptions (ManagedSettings' documentation: at most 50 of each).
    public static let maximumTokens = 50

    /// The first token set over `maximumTokens`, named as the setting is, with its size; nil when every set is within it.
    public var tokenSetOverTheLimit: (setting: String, count: Int)? {
        func categorySets<A>(_ name: String, _ policy: ActivityCategoryPolicy<A>?) -> [(String, Int)] {
            switch policy {
            case .specific(let categories, let exceptions)?: return [("\(name) categories", categories.count), ("\(name) exceptions", exceptions.count)]
            case .all(let exceptions)?: return [("\(name) exceptions", exceptions.count)]
            default: return []
            }
        }
        let sets = [("applications", applications?.count ?? 0), ("webDomains", webDomains?.count ?? 0)]
            + categorySets("applicationCategories", applicationCategories) + categorySets("webDomainCategories", webDomainCategories)
        return sets.first { $0.1 > Self.maximumTokens }.map { (setting: $0.0, count: $0.1) }
    }

    /// Settings that shield what is given; by default nothing.
    public init(
        applications: Set<ApplicationToken>? = nil,
        applicationCategories: ActivityCategoryPolicy<Application>? = nil,
        webDomains: Set<WebDomainToken>? = nil,
        webDomainCategories: ActivityCategoryPolicy<WebDomain>? = nil
    ) {
        self.applications = applications
        self.applicationCategories = applicationCategories
        self.webDomains = webDomains
        self.webDomainCategories = webDomainCategories
    }

    /// How to shield activities by category (ManagedSettings' `ShieldSettings.ActivityCategoryPolicy`).
    ///
    /// JSON: `{"policy":"none"}`, `{"policy":"all","except":[...]}` or
    /// `{"policy":"specific","categories":[...],"except":[...]}`, arrays sorted.
    public enum ActivityCategoryPolicy<Activity>: Hashable, Sendable, Codable {
        /// Shields nothing.
        case none
        /// Shields every app (or web domain) except the given ones.
        case all(except: Set<Token<Activity>> = [])
        /// Shields the apps (or web domains) in the given categories, except the given ones.
        case specific(Set<ActivityCategoryToken>, except: Set<Token<Activity>> = [])

        /// Whether the policy shields an activity with this token and category. Exceptions exempt.
        public func shields(_ token: Token<Activity>, category: ActivityCategoryToken?) -> Bool {
            switch self {
            case .none:
                return false
            case .all(let exceptions):
                return !exceptions.contains(token)
            case .specific(let categories, let exceptions):
                guard let category, categories.contains(category) else { return false }
                return !exceptions.contains(token)
            }
        }

        /// Whether the policy can shield nothing at all.
        public var isEmpty: Bool {
            switch self {
            case .none: return true
            case .all: return false
            case .specific(let categories, _): return categories.isEmpty
            }
        }

        /// The policy with these categories shielded too. `.all` already shields them.
        func inserting(_ categories: Set<ActivityCategoryToken>) -> Self {
            switch self {
            case .none: return .specific(categories)
            case .all: return self
            case .specific(let current, let exceptions): return .specific(current.union(categories), except: exceptions)
            }
        }

        /// The policy without these categories. `.all` has no category list to remove from.
        func removing(_ categories: Set<ActivityCategoryToken>) -> Self {
            switch self {
            case .none, .all: return self
            case .specific(let current, let exceptions): return .specific(current.subtracting(categories), except: exceptions)
            }
        }

        /// Decodes the `{"policy": ...}` form; missing arrays are empty.
        public init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CategoryPolicyCodingKeys.self)
            let exceptions = try container.decodeIfPresent(Set<Token<Activity>>.self, forKey: .except) ?? []
            switch try container.decode(Kind.self, forKey: .policy) {
            case .none:
                self = .none
            case .all:
                self = .all(except: exceptions)
            case .specific:
                let categories = try container.decodeIfPresent(Set<ActivityCategoryToken>.self, forKey: .categories) ?? []
                self = .specific(categories, except: exceptions)
            }
        }

        /// Encodes the `{"policy": ...}` form with sorted arrays.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CategoryPolicyCodingKeys.self)
            switch self {
            case .none:
                try container.encode(Kind.none, forKey: .policy)
            case .all(let exceptions):
                try container.encode(Kind.all, forKey: .policy)
                try container.encodeSorted(exceptions, forKey: .except)
            case .specific(let categories, let exceptions):
                try container.encode(Kind.specific, forKey: .policy)
                try container.encodeSorted(categories, forKey: .categories)
                try container.encodeSorted(exceptions, forKey: .except)
            }
        }
    }

    /// Whether these settings shield nothing at all.
    public var isEmpty: Bool {
        (applications?.isEmpty ?? true)
            && (applicationCategories?.isEmpty ?? true)
            && (webDomains?.isEmpty ?? true)
            && (webDomainCategories?.isEmpty ?? true)
    }

    // MARK: Adding and removing

    // Removing the last token sets a setting back to nil, as Apple's sample code does
    // (`applications.isEmpty ? nil : applications`), so an emptied store encodes as `{}`.

    /// Shields these apps by token.
    public mutating func insert(applications tokens: Set<ApplicationToken>) {
        applications = Self.nilIfEmpty((applications ?? []).union(tokens))
    }

    /// Stops shielding these apps by token. Category policies are left as they are.
    public mutating func remove(applications tokens: Set<ApplicationToken>) {
        applications = applications.flatMap { Self.nilIfEmpty($0.subtracting(tokens)) }
    }

    /// Shields these web domains by token.
    public mutating func insert(webDomains tokens: Set<WebDomainToken>) {
        webDomains = Self.nilIfEmpty((webDomains ?? []).union(tokens))
    }

    /// Stops shielding these web domains by token. Category policies are left as they are.
    public mutating func remove(webDomains tokens: Set<WebDomainToken>) {
        webDomains = webDomains.flatMap { Self.nilIfEmpty($0.subtracting(tokens)) }
    }

    /// Shields the apps in these categories (adding them to a `.specific` policy; `.all` already does).
    public mutating func insert(applicationCategories categories: Set<ActivityCategoryToken>) {
        applicationCategories = Self.nilIfEmpty((applicationCategories ?? ActivityCategoryPolicy.none).inserting(categories))
    }

    /// Stops shielding the apps in these categories. A `.all` policy is left as it is: set it to nil to lift it.
    public mutating func remove(applicationCategories categories: Set<ActivityCategoryToken>) {
        applicationCategories = applicationCategories.flatMap { Self.nilIfEmpty($0.removing(categories)) }
    }

    /// Shields the web domains in these categories (adding them to a `.specific` policy; `.all` already does).
    public mutating func insert(webDomainCategories categories: Set<ActivityCategoryToken>) {
        webDomainCategories = Self.nilIfEmpty((webDomainCategories ?? ActivityCategoryPolicy.none).inserting(categories))
    }

    /// Stops shielding the web domains in these categories. A `.all` policy is left as it is: set it to nil to lift it.
    public mutating func remove(webDomainCategories categories: Set<ActivityCategoryToken>) {
        webDomainCategories = webDomainCategories.flatMap { Self.nilIfEmpty($0.removing(categories)) }
    }

    /// Shields everything a person picked: its apps, its categories (for apps and web domains) and its web domains.
    ///
    /// Shielding all three matters: forgetting web domains leaves the app usable in a browser.
    public mutating func insert(_ selection: FamilyActivitySelection) {
        insert(applications: selection.applicationTokens)
        insert(applicationCategories: selection.categoryTokens)
        insert(webDomains: selection.webDomainTokens)
        insert(webDomainCategories: selection.categoryTokens)
    }

    /// Stops shielding everything in a selection, by token and by category.
    public mutating func remove(_ selection: FamilyActivitySelection) {
        remove(applications: selection.applicationTokens)
        remove(applicationCategories: selection.categoryTokens)
        remove(webDomains: selection.webDomainTokens)
        remove(webDomainCategories: selection.categoryTokens)
    }

    private static func nilIfEmpty<T>(_ set: Set<T>) -> Set<T>? {
        set.isEmpty ? nil : set
    }

    private static func nilIfEmpty<A>(_ policy: ActivityCategoryPolicy<A>) -> ActivityCategoryPolicy<A>? {
        policy.isEmpty ? nil : policy
    }

    private enum CodingKeys: String, CodingKey {
        case applications, applicationCategories, webDomains, webDomainCategories
    }

    /// Decodes the settings; missing keys are nil.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            applications: try container.decodeIfPresent(Set<ApplicationToken>.self, forKey: .applications),
            applicationCategories: try container.decodeIfPresent(ActivityCategoryPolicy<Application>.self, forKey: .applicationCategories),
            webDomains: try container.decodeIfPresent(Set<WebDomainToken>.self, forKey: .webDomains),
            webDomainCategories: try container.decodeIfPresent(ActivityCategoryPolicy<WebDomain>.self, forKey: .webDomainCategories)
        )
    }

    /// Encodes the settings that are set, token arrays sorted.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeSortedIfPresent(applications, forKey: .applications)
        try container.encodeIfPresent(applicationCategories, forKey: .applicationCategories)
        try container.encodeSortedIfPresent(webDomains, forKey: .webDomains)
        try container.encodeIfPresent(webDomainCategories, forKey: .webDomainCategories)
    }
}

extension ShieldSettings {
    /// The keyed containers its encoding makes, for a launch template's warm-up to name (ShieldBusSDK's
    /// `LaunchTemplateWarmUp`; its keys are private): the look-up of each checks that its keys conform to `CodingKey`,
    /// a scan of every conformance record of the program, which the template then makes once for all its launches.
    package static var encodingContainerTypes: [Any.Type] {
        [KeyedEncodingContainer<CodingKeys>.self, KeyedEncodingContainer<CategoryPolicyCodingKeys>.self]
    }
}

/// `ShieldSettings.ActivityCategoryPolicy`'s coding keys and kinds, outside the generic type: nested in it, each would
/// be a generic type of its own, its metadata looked up at run time on every encode and decode.
private enum CategoryPolicyCodingKeys: String, CodingKey {
    case policy, categories, except
}

/// Named as when it was nested: a policy that does not decode is answered with an error that names it.
private enum Kind: String, Codable {
    case none, all, specific
}
