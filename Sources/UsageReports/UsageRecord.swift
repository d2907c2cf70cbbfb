import Foundation

/// One observation handed to the report builder. Apps are identified by their display
/// name and category name (the caller maps Screen Time tokens to names); all times are
/// passed in, never read from a clock.
///
/// Encoded with Swift's synthesized enum coding, e.g.
/// `{"appUsage":{"app":"Notes","category":"Productivity","start":…,"end":…}}`.
public enum UsageRecord: Codable, Hashable, Sendable {
    /// The app `app` (in category `category`) was in the foreground from `start` to `end`.
    case appUsage(app: String, category: String, start: Date, end: Date)
    /// The web domain `domain` was shown from `start` to `end`. Private browsing is never
    /// recorded: ingesting a record with `isPrivate == true` changes nothing.
    case webUsage(domain: String, start: Date, end: Date, isPrivate: Bool)
    /// The device was picked up and `app` was the first app opened.
    case pickup(app: String, at: Date)
    /// A notification from `source` (an app or another sender) arrived.
    case notification(source: String, at: Date)
    /// The user met a shield on `target` (an app name or a web domain).
    case shieldEncounter(target: String, at: Date)
    /// The user took a grace pass ("open for 5 minutes") on a shield.
    case gracePassUsed(at: Date)
    /// The user accepted a nudge (a gentle reminder instead of a hard block).
    case nudgeUsed(at: Date)
}
