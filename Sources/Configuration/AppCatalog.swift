// AppCatalog: the apps, categories and web domains of the simulated phone (Config/catalog.yml), validated, with lookups.

import Foundation

/// A Screen Time category, e.g. `social` "Social".
public struct CatalogCategory: Equatable, Hashable, Sendable {
    /// A short lowercase identifier used in files (`productivity-finance`).
    public let id: String
    /// Apple's display name ("Productivity & Finance").
    public let name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// An app installed on the simulated phone.
public struct CatalogApp: Equatable, Hashable, Sendable {
    /// `com.burbn.instagram`.
    public let bundleIdentifier: String
    /// The display name, "Instagram"; unique in the catalog regardless of case.
    public let name: String
    public let categoryID: String
    /// The web domains the app owns (`instagram.com`): shielding the app's category also covers them.
    public let webDomains: [String]

    public init(bundleIdentifier: String, name: String, categoryID: String, webDomains: [String]) {
        self.bundleIdentifier = bundleIdentifier
        self.name = name
        self.categoryID = categoryID
        self.webDomains = webDomains
    }
}

/// A web domain the catalog knows: owned by an app, or standalone (a news site).
public struct CatalogWebDomain: Equatable, Hashable, Sendable {
    /// A lowercase hostname, `instagram.com`; it also covers its subdomains.
    public let domain: String
    public let categoryID: String
    /// The app that owns the domain, if any; an owned domain has its app's category.
    public let ownerBundleIdentifier: String?

    public init(domain: String, categoryID: String, ownerBundleIdentifier: String?) {
        self.domain = domain
        self.categoryID = categoryID
        self.ownerBundleIdentifier = ownerBundleIdentifier
    }
}

/// An app name that is not in the catalog, with the closest one when it looks like a typo.
public struct CatalogLookupError: Error, Equatable, CustomStringConvertible {
    /// What was asked for.
    public let name: String
    /// The closest display name (or bundle identifier, when a bundle identifier was asked for).
    public let suggestion: String?

    public init(name: String, suggestion: String?) {
        self.name = name
        self.suggestion = suggestion
    }

    public var description: String {
        "no app named '\(name)' in the catalog" + (suggestion.map { " — did you mean '\($0)'?" } ?? "")
    }
}

/// The apps of the simulated phone, their categories, and the web domains the catalog knows.
///
/// File format (`Config/catalog.yml`):
/// ```yaml
/// categories:
///   - {id: social, name: Social}
/// apps:
///   - {bundle: com.burbn.instagram, name: Instagram, category: social, domains: [instagram.com]}
/// webDomains:
///   - {domain: nytimes.com, category: information-reading}
/// ```
public struct AppCatalog: Sendable {
    /// The file the catalog was read from.
    public let file: String
    /// In file order.
    public let categories: [CatalogCategory]
    /// In file order.
    public let apps: [CatalogApp]
    /// Every domain, owned by an app (in app order) or standalone (in file order), with its category.
    public let webDomains: [CatalogWebDomain]

    private let appsByKey: [String: CatalogApp]
    private let categoriesByID: [String: CatalogCategory]
    private let domainsByName: [String: CatalogWebDomain]

    /// Reads and validates a catalog file; with a `base` (the shipped catalog), the file adds to it (`parse`).
    public static func load(path: String, extending base: AppCatalog? = nil) throws -> AppCatalog {
        try parse(YAMLValue.load(path: path), extending: base)
    }

    /// Validates a parsed catalog document: categories exist and are unique, bundle identifiers and names
    /// (ignoring case) are unique, domains are lowercase hostnames listed at most once in the whole catalog.
    ///
    /// With a `base`, the document adds categories, apps and web domains to it (each list optional), and may not list
    /// again what the base has; `standalone: true` at its top makes it the whole catalog instead.
    public static func parse(_ document: YAMLValue, extending base: AppCatalog? = nil) throws -> AppCatalog {
        let top = try document.uniqueMapping(allowed: ["categories", "apps", "webDomains", "standalone"])
        let base = try top["standalone"]?.bool() == true ? nil : base
        let categoryList = top["categories"], appList = top["apps"]
        if base == nil {
            guard categoryList != nil else { throw document.error("a catalog needs 'categories' (a list of {id, name})") }
            guard appList != nil else { throw document.error("a catalog needs 'apps' (a list of {bundle, name, category, domains})") }
        }
        // A file meant as a whole catalog (a copy of the shipped one with additions) reads as additions without it.
        let standaloneHint = " (this file adds to it; `standalone: true` at its top makes it the whole catalog instead)"
        // Where a name the document lists again was listed first.
        func listedIn(_ line: Int?) -> String { line.map { "on line \($0)" } ?? "in \(base?.file ?? "the base catalog")\(standaloneHint)" }

        var categories = base?.categories ?? []
        var categoriesByID = base?.categoriesByID ?? [:]
        var categoryNames = Set(categories.map { $0.name.lowercased() })
        for entry in try categoryList?.list() ?? [] {
            let fields = try entry.uniqueMapping(allowed: ["id", "name"])
            let idValue = try required("id", in: fields, of: entry, "a category needs an 'id' (e.g. social)")
            let id = try idValue.string()
            guard !id.isEmpty, id.allSatisfy({ $0.isASCIIDigit || ("a"..."z").contains($0) || $0 == "-" }) else {
                throw idValue.error("a category id is lowercase letters, digits and '-', got '\(id)'")
            }
            guard categoriesByID[id] == nil else {
                throw idValue.error(base?.categoriesByID[id] != nil ? "the category id '\(id)' is already in \(base!.file)\(standaloneHint)" : "the category id '\(id)' is used twice")
            }
            let nameValue = try required("name", in: fields, of: entry, "category '\(id)' needs a 'name' (e.g. Social)")
            let name = try nonEmpty(nameValue)
            guard categoryNames.insert(name.lowercased()).inserted else { throw nameValue.error("the category name '\(name)' is used twice") }
            let category = CatalogCategory(id: id, name: name)
            categories.append(category)
            categoriesByID[id] = category
        }
        guard !categories.isEmpty else { throw (categoryList ?? document).error("a catalog needs at least one category") }

        func categoryID(_ value: YAMLValue) throws -> String {
            let id = try value.string()
            if categoriesByID[id] != nil { return id }
            let suggestion = closest(to: id, in: categories.map(\.id)).map { " — did you mean '\($0)'?" } ?? ""
            throw value.error("no category '\(id)' in the catalog\(suggestion)")
        }

        // The line a domain was listed on in this document; nil for the base's.
        var domainLines: [String: Int?] = Dictionary(uniqueKeysWithValues: (base?.webDomains ?? []).map { ($0.domain, nil) })
        func domain(_ value: YAMLValue) throws -> String {
            let domain = try value.string()
            if let problem = hostnameProblem(domain) { throw value.error(problem) }
            if let line = domainLines[domain] { throw value.error("the domain '\(domain)' is already listed \(listedIn(line)); a domain belongs to at most one app") }
            domainLines[domain] = value.line
            return domain
        }

        var apps = base?.apps ?? []
        var appsByKey = base?.appsByKey ?? [:]
        var webDomains = base?.webDomains ?? []
        for entry in try appList?.list() ?? [] {
            let fields = try entry.uniqueMapping(allowed: ["bundle", "name", "category", "domains"])
            let bundleValue = try required("bundle", in: fields, of: entry, "an app needs a 'bundle' identifier (e.g. com.burbn.instagram)")
            let bundle = try bundleValue.string()
            guard isBundleIdentifier(bundle) else {
                throw bundleValue.error("a bundle identifier is reverse-DNS: two or more dot-separated parts of letters, digits and '-', got '\(bundle)'")
            }
            guard appsByKey[bundle.lowercased()] == nil else {
                throw bundleValue.error(base?.app(named: bundle) != nil ? "the bundle identifier '\(bundle)' is already in \(base!.file)\(standaloneHint)" : "the bundle identifier '\(bundle)' is used twice")
            }
            let nameValue = try required("name", in: fields, of: entry, "app '\(bundle)' needs a display 'name'")
            let name = try nonEmpty(nameValue)
            guard appsByKey[name.lowercased()] == nil else {
                throw nameValue.error(base?.app(named: name) != nil ? "the app name '\(name)' is already in \(base!.file) (names are compared ignoring case)\(standaloneHint)"
                                                                     : "the app name '\(name)' is used twice (names are compared ignoring case)")
            }
            let category = try categoryID(try required("category", in: fields, of: entry, "app '\(name)' needs a 'category' (one of \(categories.map(\.id).joined(separator: ", ")))"))
            let domains = try (fields["domains"]?.list() ?? []).map(domain)
            let app = CatalogApp(bundleIdentifier: bundle, name: name, categoryID: category, webDomains: domains)
            apps.append(app)
            appsByKey[bundle.lowercased()] = app
            appsByKey[name.lowercased()] = app
            webDomains += domains.map { CatalogWebDomain(domain: $0, categoryID: category, ownerBundleIdentifier: bundle) }
        }

        for entry in try top["webDomains"]?.list() ?? [] {
            let fields = try entry.uniqueMapping(allowed: ["domain", "category"])
            let name = try domain(try required("domain", in: fields, of: entry, "a web domain needs a 'domain' (e.g. nytimes.com)"))
            let category = try categoryID(try required("category", in: fields, of: entry, "web domain '\(name)' needs a 'category'"))
            webDomains.append(CatalogWebDomain(domain: name, categoryID: category, ownerBundleIdentifier: nil))
        }

        return AppCatalog(file: document.file, categories: categories, apps: apps, webDomains: webDomains, appsByKey: appsByKey,
                          categoriesByID: categoriesByID, domainsByName: Dictionary(uniqueKeysWithValues: webDomains.map { ($0.domain, $0) }))
    }

    // MARK: Lookups

    /// The app with this display name or bundle identifier, ignoring case.
    public func app(named nameOrBundleIdentifier: String) -> CatalogApp? {
        appsByKey[nameOrBundleIdentifier.lowercased()]
    }

    /// The app with this display name or bundle identifier, ignoring case; otherwise an error suggesting the closest name.
    public func requireApp(named nameOrBundleIdentifier: String) throws -> CatalogApp {
        if let app = app(named: nameOrBundleIdentifier) { return app }
        // Suggest bundle identifiers only to someone who wrote one.
        let candidates = nameOrBundleIdentifier.contains(".") ? apps.map(\.bundleIdentifier) : apps.map(\.name)
        throw CatalogLookupError(name: nameOrBundleIdentifier, suggestion: closest(to: nameOrBundleIdentifier, in: candidates))
    }

    public func category(id: String) -> CatalogCategory? {
        categoriesByID[id]
    }

    /// The catalog domain covering `host`: the domain itself or its closest parent (`www.instagram.com` → `instagram.com`).
    /// Case and a trailing dot are ignored. nil for a host the catalog does not know.
    public func domain(_ host: String) -> CatalogWebDomain? {
        var name = Substring(host.lowercased())
        if name.hasSuffix(".") { name = name.dropLast() }
        // The longest match wins, so `maps.google.com` may belong to one app and `google.com` to another.
        while true {
            if let known = domainsByName[String(name)] { return known }
            guard let dot = name.firstIndex(of: ".") else { return nil }
            name = name[name.index(after: dot)...]
        }
    }

    // MARK: Validation helpers

    private static func required(_ key: String, in fields: [String: YAMLValue], of entry: YAMLValue, _ message: String) throws -> YAMLValue {
        guard let value = fields[key] else { throw entry.error(message) }
        return value
    }

    private static func nonEmpty(_ value: YAMLValue) throws -> String {
        let text = try value.string()
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw value.error("must not be empty") }
        return text
    }

    /// Dot-separated parts of ASCII letters, digits and `-`. Read by bytes: a `Character`'s properties look up Unicode's
    /// tables, for each of the catalog's identifiers at every run's start.
    private static func isBundleIdentifier(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count >= 2 && parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            }
        }
    }
}

/// What is wrong with a catalog domain name, or nil when it is a lowercase hostname with at least two labels.
func hostnameProblem(_ name: String) -> String? {
    if name != name.lowercased() { return "a domain is written in lowercase: '\(name.lowercased())', not '\(name)'" }
    if name.contains("/") || name.contains(":") { return "expected a bare hostname like instagram.com (no scheme, port or path), got '\(name)'" }
    let labels = name.split(separator: ".", omittingEmptySubsequences: false)
    guard labels.count >= 2, isHostname(name) else {
        return "expected a hostname like instagram.com (dot-separated labels of a-z, 0-9 and '-'), got '\(name)'"
    }
    return nil
}

/// Whether `name` is a valid lowercase DNS hostname: labels of 1 to 63 characters of a-z, 0-9 and '-', not starting or
/// ending with '-', 253 characters at most.
func isHostname(_ name: String) -> Bool {
    guard !name.isEmpty, name.utf8.count <= 253 else { return false }
    // By bytes: any byte outside a-z, 0-9 and `-` (every byte of a character beyond ASCII) refuses the name.
    return name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy { label in
        (1...63).contains(label.count) && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
            && label.allSatisfy { ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || $0 == UInt8(ascii: "-") }
    }
}
