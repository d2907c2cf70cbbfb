import Configuration
import Foundation
import ScreenTime

/// Issues the opaque tokens that stand for apps, categories and web domains, and knows what each means.
///
/// Tokens are derived from the seed and an epoch, so a run is reproducible; an OS update or restore bumps
/// the epoch and every token changes, as iOS does (the Tether write-up, FB14237883).
final class TokenIssuer {
    private(set) var epoch: Int
    private let seed: UInt64
    private var applications: [ApplicationToken: String] = [:]
    private var categories: [ActivityCategoryToken: String] = [:]
    private var domains: [WebDomainToken: String] = [:]
    /// Each token issued in this epoch, by kind and name: the OS asks for the same few on every event, and finding
    /// one costs less than deriving it again.
    private var issued: [Issued: String] = [:]

    private struct Issued: Hashable {
        let kind: String
        let name: String
    }

    /// The hash of the key's first part, `<seed>|<epoch>|`, the same for every token of the epoch: each token's hash
    /// goes on from it over `<kind>|<name>` (FNV-1a reads its bytes in order, so this is the whole key's hash).
    private var epochHash: UInt64

    init(seed: UInt64, epoch: Int) {
        self.seed = seed
        self.epoch = epoch
        epochHash = Self.epochHash(seed: seed, epoch: epoch)
    }

    func application(_ bundleIdentifier: String) -> ApplicationToken {
        let token = ApplicationToken(rawValue: opaque("app", bundleIdentifier))
        applications[token] = bundleIdentifier
        return token
    }

    func category(_ id: String) -> ActivityCategoryToken {
        let token = ActivityCategoryToken(rawValue: opaque("cat", id))
        categories[token] = id
        return token
    }

    func webDomain(_ domain: String) -> WebDomainToken {
        let token = WebDomainToken(rawValue: opaque("web", domain))
        domains[token] = domain
        return token
    }

    /// The bundle identifier a token of the current epoch stands for; nil for stale or foreign tokens.
    func bundleIdentifier(of token: ApplicationToken) -> String? { applications[token] }
    func categoryID(of token: ActivityCategoryToken) -> String? { categories[token] }
    func domain(of token: WebDomainToken) -> String? { domains[token] }

    /// Issues tokens for everything in the catalog, so reverse lookups work for every token in use.
    func issueAll(for catalog: AppCatalog) {
        // Sized once (read by key only, so their layout matters to nothing): grown insert by insert, each rehashes its
        // tokens at every doubling.
        applications.reserveCapacity(catalog.apps.count)
        categories.reserveCapacity(catalog.categories.count)
        domains.reserveCapacity(catalog.webDomains.count)
        issued.reserveCapacity(catalog.apps.count + catalog.categories.count + catalog.webDomains.count)
        for app in catalog.apps { _ = application(app.bundleIdentifier) }
        for each in catalog.categories { _ = category(each.id) }
        for domain in catalog.webDomains { _ = webDomain(domain.domain) }
    }

    /// Starts a new epoch: every token changes. Returns the old-to-new mapping for the OS's own settings.
    func regenerate(for catalog: AppCatalog) -> TokenMigration {
        let oldApplications = applications, oldCategories = categories, oldDomains = domains
        epoch += 1
        epochHash = Self.epochHash(seed: seed, epoch: epoch)
        issued = [:]
        applications = [:]
        categories = [:]
        domains = [:]
        issueAll(for: catalog)
        return TokenMigration(
            applications: Dictionary(uniqueKeysWithValues: oldApplications.map { ($0.key, application($0.value)) }),
            categories: Dictionary(uniqueKeysWithValues: oldCategories.map { ($0.key, category($0.value)) }),
            domains: Dictionary(uniqueKeysWithValues: oldDomains.map { ($0.key, webDomain($0.value)) })
        )
    }

    /// From every earlier epoch's tokens to this epoch's (what the OS's own settings went through, update by update).
    func migrationFromEarlierEpochs(for catalog: AppCatalog) -> TokenMigration {
        var applications: [ApplicationToken: ApplicationToken] = [:]
        var categories: [ActivityCategoryToken: ActivityCategoryToken] = [:]
        var domains: [WebDomainToken: WebDomainToken] = [:]
        for earlier in 0..<epoch {
            let old = TokenIssuer(seed: seed, epoch: earlier)
            old.issueAll(for: catalog)
            for (token, id) in old.applications { applications[token] = application(id) }
            for (token, id) in old.categories { categories[token] = category(id) }
            for (token, domain) in old.domains { domains[token] = webDomain(domain) }
        }
        return TokenMigration(applications: applications, categories: categories, domains: domains)
    }

    /// An opaque, stable string: a 64-bit FNV-1a hash of the seed, epoch, kind and name (`<seed>|<epoch>|<kind>|<name>`),
    /// as `<kind>.` and sixteen hex digits.
    private func opaque(_ kind: String, _ name: String) -> String {
        let key = Issued(kind: kind, name: name)
        if let token = issued[key] { return token }
        var hash = Self.hash(kind.utf8, from: epochHash)
        hash = Self.hash(CollectionOfOne(UInt8(ascii: "|")), from: hash)
        hash = Self.hash(name.utf8, from: hash)
        let token = kind + "." + Self.hexDigits(of: hash)
        issued[key] = token
        return token
    }

    private static let fnvOffsetBasis: UInt64 = 0xCBF2_9CE4_8422_2325

    private static func epochHash(seed: UInt64, epoch: Int) -> UInt64 {
        hash("\(seed)|\(epoch)|".utf8, from: fnvOffsetBasis)
    }

    private static func hash(_ bytes: some Sequence<UInt8>, from start: UInt64) -> UInt64 {
        var hash = start
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// `value` in sixteen lowercase hex digits, zeros first.
    private static func hexDigits(of value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            for index in 0..<16 {
                let digit = UInt8((value >> UInt64(60 - 4 * index)) & 0xF)
                buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            }
            return 16
        }
    }
}

/// How tokens changed in an OS update: the OS carries its own settings over; apps' saved tokens go stale.
struct TokenMigration {
    let applications: [ApplicationToken: ApplicationToken]
    let categories: [ActivityCategoryToken: ActivityCategoryToken]
    let domains: [WebDomainToken: WebDomainToken]

    func migrate(_ settings: ShieldSettings) -> ShieldSettings {
        var result = settings
        result.applications = settings.applications.map { Set($0.map { applications[$0] ?? $0 }) }
        result.webDomains = settings.webDomains.map { Set($0.map { domains[$0] ?? $0 }) }
        result.applicationCategories = settings.applicationCategories.map { migrate($0, tokens: applications) }
        result.webDomainCategories = settings.webDomainCategories.map { migrate($0, tokens: domains) }
        return result
    }

    private func migrate<A>(_ policy: ShieldSettings.ActivityCategoryPolicy<A>, tokens: [Token<A>: Token<A>]) -> ShieldSettings.ActivityCategoryPolicy<A> {
        switch policy {
        case .none: return .none
        case .all(let except): return .all(except: Set(except.map { tokens[$0] ?? $0 }))
        case .specific(let categoryTokens, let except):
            return .specific(Set(categoryTokens.map { categories[$0] ?? $0 }), except: Set(except.map { tokens[$0] ?? $0 }))
        }
    }

    func migrate(_ event: DeviceActivityEvent) -> DeviceActivityEvent {
        DeviceActivityEvent(applications: Set(event.applications.map { applications[$0] ?? $0 }),
                            categories: Set(event.categories.map { categories[$0] ?? $0 }),
                            webDomains: Set(event.webDomains.map { domains[$0] ?? $0 }),
                            threshold: event.threshold, includesPastActivity: event.includesPastActivity)
    }
}
