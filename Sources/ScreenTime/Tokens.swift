import Foundation

/// An opaque token that stands for an app, a category or a web domain (ManagedSettings' `Token`).
///
/// Only the OS issues tokens: plugins receive them in selections and callbacks and pass them
/// back unchanged, never learning which app a token stands for. The token is a string chosen
/// by the OS; in JSON it is that plain string.
public struct Token<Activity>: StringIdentifier {
    /// The string the OS issued. Opaque to plugins: compare tokens, never parse them.
    public let rawValue: String

    /// Makes a token from the string the OS issued.
    ///
    /// For the OS (which issues tokens) and for tests. A plugin that invents a token gets one
    /// that matches nothing on the device.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

/// An opaque token for an app.
public typealias ApplicationToken = Token<Application>

/// An opaque token for a category of apps and web domains (games, social networking...).
public typealias ActivityCategoryToken = Token<ActivityCategory>

/// An opaque token for a web domain.
public typealias WebDomainToken = Token<WebDomain>
