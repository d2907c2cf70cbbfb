import Foundation

/// The apps, categories and web domains a person picked (FamilyControls' `FamilyActivitySelection`).
///
/// Holds only opaque tokens. Plugins pass them to shield settings and device activity events.
public struct FamilyActivitySelection: Hashable, Sendable, Codable {
    /// Tokens of the picked apps.
    public var applicationTokens: Set<ApplicationToken>
    /// Tokens of the picked categories.
    public var categoryTokens: Set<ActivityCategoryToken>
    /// Tokens of the picked web domains.
    public var webDomainTokens: Set<WebDomainToken>
    /// Whether picking a category also selects the apps and web domains in it (the picker fills them in).
    public let includeEntireCategory: Bool

    /// An empty selection, as Apple's `init()`.
    public init() {
        self.init(includeEntireCategory: false)
    }

    /// An empty selection that will include whole categories, as Apple's `init(includeEntireCategory:)`.
    public init(includeEntireCategory: Bool) {
        self.init(applicationTokens: [], categoryTokens: [], webDomainTokens: [], includeEntireCategory: includeEntireCategory)
    }

    /// A selection with the given tokens. For the OS's picker and for tests.
    public init(
        applicationTokens: Set<ApplicationToken>,
        categoryTokens: Set<ActivityCategoryToken> = [],
        webDomainTokens: Set<WebDomainToken> = [],
        includeEntireCategory: Bool = false
    ) {
        self.applicationTokens = applicationTokens
        self.categoryTokens = categoryTokens
        self.webDomainTokens = webDomainTokens
        self.includeEntireCategory = includeEntireCategory
    }

    /// Whether nothing is selected.
    public var isEmpty: Bool {
        applicationTokens.isEmpty && categoryTokens.isEmpty && webDomainTokens.isEmpty
    }

    private enum CodingKeys: String, CodingKey {
        case applicationTokens, categoryTokens, webDomainTokens, includeEntireCategory
    }

    /// Decodes `{"applicationTokens":[...],"categoryTokens":[...],"webDomainTokens":[...],"includeEntireCategory":false}`;
    /// missing sets are empty and a missing flag is false.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            applicationTokens: try container.decodeIfPresent(Set<ApplicationToken>.self, forKey: .applicationTokens) ?? [],
            categoryTokens: try container.decodeIfPresent(Set<ActivityCategoryToken>.self, forKey: .categoryTokens) ?? [],
            webDomainTokens: try container.decodeIfPresent(Set<WebDomainToken>.self, forKey: .webDomainTokens) ?? [],
            includeEntireCategory: try container.decodeIfPresent(Bool.self, forKey: .includeEntireCategory) ?? false
        )
    }

    /// Encodes every field, with the token sets sorted.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeSorted(applicationTokens, forKey: .applicationTokens)
        try container.encodeSorted(categoryTokens, forKey: .categoryTokens)
        try container.encodeSorted(webDomainTokens, forKey: .webDomainTokens)
        try container.encode(includeEntireCategory, forKey: .includeEntireCategory)
    }
}
