import Foundation
import ShieldBusSDK

/// The notifier's options: the configuration's `plugins[].options` for the `notifier` plugin.
///
/// ```yaml
/// options:
///   appGroup: group.dev.shieldbus.speedbump   # its store: the pending route and the last post of each kind
///   rules:
///     - on: deviceactivity.event-did-reach-threshold
///       when: {event: mindful-threshold}       # optional: fields of the event that must match exactly
///       kind: circle-nudge
///       title: Your inner circle is ready
///       body: Want to make a call instead?
///       interruptionLevel: time-sensitive      # passive | active (default) | time-sensitive
///       route: circle_contacts                 # optional: leave this pending deep link with the notification
///   routes: {circle_contacts: "tether://nudge?action=call"}
///   routeLifetimeMinutes: 15                   # default 15
///   quietHours: {start: "22:00", end: "07:00", allowTimeSensitive: true}
///   dedupMinutes: 60                           # at most one notification of a kind per 60 minutes; 0 (default): no limit
///   desktop: true                              # also show them with notify-send under the real clock (default true)
/// ```
///
/// Read from the options' JSON without `Codable` (`JSONReadableOptions`), as the other plugins read theirs: the
/// notifier reads them at every launch.
public struct NotifierOptions: JSONReadableOptions, Equatable, AppGroupOptions {
    /// The App-Group store the notifier writes (the slice `PendingDeepLinkRoute` and `notifier.*`).
    public let appGroup: String
    public let rules: [NotificationRule]
    /// Route name → URL, e.g. `circle_contacts` → `tether://nudge?action=call`.
    public let routes: [String: String]
    /// How long a pending route may be followed.
    public let routeLifetimeMinutes: Int
    public let quietHours: QuietHours?
    /// At most one notification of a kind within this many minutes; 0 means no limit.
    public let dedupMinutes: Int
    /// Whether to show notifications on the desktop too (only with `notify-send` and the real clock).
    public let desktop: Bool

    /// The topics the rules react to, sorted and unique: what the notifier subscribes to.
    public var topics: [String] { Array(Set(rules.map(\.on))).sorted() }

    /// The keys the options may have (the configuration checks the same: `ReferencePluginOptions.notifier`).
    enum Key: String, CaseIterable {
        case appGroup, rules, routes, routeLifetimeMinutes, quietHours, dedupMinutes, desktop
    }

    public init(json: JSONValue) throws {
        let options = try OptionsObject(json, in: "the notifier's options", allowed: Key.allCases.map(\.rawValue))
        guard let appGroup = try options.string(Key.appGroup.rawValue), !appGroup.isEmpty else {
            throw PluginOptionsError.invalid(key: "appGroup", problem: "the notifier needs an app group (like group.dev.shieldbus.speedbump) for its pending routes and de-duplication")
        }
        self.appGroup = appGroup
        rules = try options.objects(Key.rules.rawValue, in: "a notifier rule", allowed: NotificationRule.Key.allCases.map(\.rawValue))?
            .map(NotificationRule.init) ?? []
        routes = try options.strings(Key.routes.rawValue) ?? [:]
        routeLifetimeMinutes = try options.int(Key.routeLifetimeMinutes.rawValue) ?? 15
        quietHours = try options.object(Key.quietHours.rawValue, in: "quietHours", allowed: QuietHours.Key.allCases.map(\.rawValue))
            .map(QuietHours.init)
        dedupMinutes = try options.int(Key.dedupMinutes.rawValue) ?? 0
        desktop = try options.bool(Key.desktop.rawValue) ?? true
        try validate()
    }

    private func validate() throws {
        guard !rules.isEmpty else {
            throw PluginOptionsError.invalid(key: "rules", problem: "no rules: the notifier would never post (add e.g. {on: deviceactivity.event-did-reach-threshold, kind: …, title: …, body: …})")
        }
        for (name, url) in routes where URL(string: url)?.scheme == nil {
            throw PluginOptionsError.invalid(key: "routes.\(name)", problem: "'\(url)' is not a URL with a scheme, like tether://nudge?action=call")
        }
        for (index, rule) in rules.enumerated() {
            if let route = rule.route, routes[route] == nil {
                let known = routes.keys.sorted().joined(separator: ", ")
                throw PluginOptionsError.invalid(key: "rules[\(index)].route", problem: "no route '\(route)' in routes (routes: \(known.isEmpty ? "none" : known))")
            }
        }
        guard routeLifetimeMinutes > 0 else {
            throw PluginOptionsError.invalid(key: "routeLifetimeMinutes", problem: "must be at least 1, got \(routeLifetimeMinutes)")
        }
        guard dedupMinutes >= 0 else {
            throw PluginOptionsError.invalid(key: "dedupMinutes", problem: "must be 0 (no limit) or more, got \(dedupMinutes)")
        }
    }
}

/// One rule: on an event (optionally only when some of its fields have given values), post a notification of a
/// kind, and leave a pending deep link with it.
public struct NotificationRule: Equatable {
    /// The topic that triggers it, e.g. `deviceactivity.event-did-reach-threshold` or `shield.shown`.
    public let on: String
    /// Fields of the event that must have exactly these values (e.g. `{event: mindful-threshold}`).
    public let when: [String: String]
    /// What kind of notification: de-duplication counts per kind.
    public let kind: String
    /// Title and body; `{name}` is replaced by the event's field `name` (e.g. `{target}` on `shield.shown`).
    public let title: String
    public let body: String
    public let interruptionLevel: NotificationRequest.InterruptionLevel
    /// The route (a key of the routes table) to leave pending with the notification.
    public let route: String?

    enum Key: String, CaseIterable {
        case on, when, kind, title, body, interruptionLevel, route
    }

    /// One rule of the notifier's options (`rules:`).
    init(_ rule: OptionsObject) throws {
        on = try rule.required(Key.on.rawValue, rule.string)
        when = try rule.strings(Key.when.rawValue) ?? [:]
        kind = try rule.required(Key.kind.rawValue, rule.string)
        title = try rule.required(Key.title.rawValue, rule.string)
        body = try rule.required(Key.body.rawValue, rule.string)
        interruptionLevel = try rule.choice(Key.interruptionLevel.rawValue, of: NotificationRequest.InterruptionLevel.self) ?? .active
        route = try rule.string(Key.route.rawValue)
        guard !kind.isEmpty, !title.isEmpty else {
            throw PluginOptionsError.invalid(key: "rules", problem: "a rule needs a non-empty kind and title (rule on \(on))")
        }
    }

    /// Whether an event on `topic` with these fields triggers the rule.
    public func matches(topic: String, fields: [String: String]) -> Bool {
        topic == on && when.allSatisfy { fields[$0.key] == $0.value }
    }

    /// `text` with every `{name}` replaced by the field `name`; unknown names are left as written.
    public static func fill(_ text: String, with fields: [String: String]) -> String {
        fields.keys.sorted().reduce(text) { filled, name in filled.replacingOccurrences(of: "{\(name)}", with: fields[name]!) }
    }
}
