import Foundation
import ShieldBusSDK

/// What following the pending deep link did.
public enum DeepLinkOutcome: Equatable {
    /// The route was taken and its URL opened; it is consumed and never opens again.
    case opened(PendingDeepLinkRoute)
    /// The route had expired: it is consumed without opening anything.
    case expired(PendingDeepLinkRoute)
    /// No route is pending: none was written, or the last one is already consumed.
    case none
}

/// Why a pending deep link could not be followed.
public enum DeepLinkInboxError: Error, CustomStringConvertible, Equatable {
    /// The route was consumed but opening its URL failed. It is not retried: a retry could open it twice.
    case openFailed(route: PendingDeepLinkRoute, reason: String)

    public var description: String {
        switch self {
        case let .openFailed(route, reason):
            return "the pending route '\(route.route)' was taken but \(route.url) did not open (\(reason)); it will not be retried"
        }
    }
}

/// The companion app's side of the notifier's pending deep link (the Tether write-up): call
/// `followPendingRoute` first thing in `willEnterForeground()`, synchronously, before anything else is shown.
///
/// Reading and consuming happen in one App-Group transaction, so a route is taken at most once even when the
/// notifier writes a new one meanwhile. The route's key is the notifier's slice, which the app may not write;
/// consuming it records the route's version under `consumedKey` in the app's own slice instead of deleting it
/// (a key's version never repeats, so a newer route is pending again). Declare `consumedKey` in the app's slice.
public struct DeepLinkInbox {
    /// Where the app records the version of the last route it took.
    public static let consumedKey = "DeepLinkInbox.consumedVersion"

    /// The App-Group store shared with the notifier, opened as the app.
    public let defaults: SharedDefaults

    public init(defaults: SharedDefaults) {
        self.defaults = defaults
    }

    /// Takes the pending route, if any; unless it expired by `now`, opens its URL with `open` (exactly once).
    ///
    /// - Throws: `DeepLinkInboxError.openFailed` when `open` throws (the route stays consumed), or the store's
    ///   error when the route cannot be read (it then stays pending).
    public func followPendingRoute(now: Date = BusClock.now, open: (String) throws -> Void) throws -> DeepLinkOutcome {
        let taken = try defaults.transaction { store -> DeepLinkOutcome in
            let consumed = try store.value(Int64.self, forKey: Self.consumedKey) ?? 0
            guard let entry = try store.entry(forKey: PendingDeepLinkRoute.key), entry.version > consumed,
                  let route = try store.value(PendingDeepLinkRoute.self, forKey: PendingDeepLinkRoute.key) else { return .none }
            try store.set(entry.version, forKey: Self.consumedKey)
            return now >= route.expiresAt ? .expired(route) : .opened(route)
        }.value
        if case .opened(let route) = taken {
            do {
                try open(route.url)
            } catch {
                throw DeepLinkInboxError.openFailed(route: route, reason: "\(error)")
            }
        }
        return taken
    }
}

extension App {
    /// Follows the notifier's pending deep link by opening its URL as this app (only an app may open URLs).
    public func followPendingDeepLink(in defaults: SharedDefaults) throws -> DeepLinkOutcome {
        try DeepLinkInbox(defaults: defaults).followPendingRoute { try open($0) }
    }
}
