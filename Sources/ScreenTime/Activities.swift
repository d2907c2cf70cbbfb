import Foundation

/// An app, as the OS describes it to a shield or a report (ManagedSettings' `Application`).
///
/// As on iOS, plugins see the token and the display name but never the bundle identifier:
/// the OS passes `nil` for it outside itself.
public struct Application: Hashable, Sendable, Codable {
    /// The app's token. The OS always sets it; it is optional only because Apple's is.
    public let token: ApplicationToken?
    /// The app's name as shown to the person, if the OS shares it.
    public let localizedDisplayName: String?
    /// The app's bundle identifier. Known to the OS only: plugins always get `nil`.
    public let bundleIdentifier: String?

    /// Describes an app. For the OS and tests; plugins receive these values.
    public init(token: ApplicationToken?, localizedDisplayName: String? = nil, bundleIdentifier: String? = nil) {
        self.token = token
        self.localizedDisplayName = localizedDisplayName
        self.bundleIdentifier = bundleIdentifier
    }
}

/// A category of apps and web domains (ManagedSettings' `ActivityCategory`).
public struct ActivityCategory: Hashable, Sendable, Codable {
    /// The category's token. The OS always sets it; it is optional only because Apple's is.
    public let token: ActivityCategoryToken?
    /// The category's name as shown to the person ("Social", "Games").
    public let localizedDisplayName: String?

    /// Describes a category. For the OS and tests; plugins receive these values.
    public init(token: ActivityCategoryToken?, localizedDisplayName: String? = nil) {
        self.token = token
        self.localizedDisplayName = localizedDisplayName
    }
}

/// A web domain (ManagedSettings' `WebDomain`).
public struct WebDomain: Hashable, Sendable, Codable {
    /// The domain's token. The OS always sets it; it is optional only because Apple's is.
    public let token: WebDomainToken?
    /// The domain name ("instagram.com"), if the OS shares it.
    public let domain: String?

    /// Describes a web domain. For the OS and tests; plugins receive these values.
    public init(token: WebDomainToken?, domain: String? = nil) {
        self.token = token
        self.domain = domain
    }

    /// A web domain by its name, with no token (`WebDomain(domain:)`), as a web content filter takes it.
    public init(domain: String) {
        self.init(token: nil, domain: domain)
    }
}
