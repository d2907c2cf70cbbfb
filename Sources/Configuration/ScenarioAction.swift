// ScenarioAction: what the simulated user (or the OS) does in one scenario step, read from its one action key.

import BusProtocol
import DeviceAPI
import Foundation
import Yams

/// A shield button.
public enum ShieldButton: String, CaseIterable, Equatable, Sendable {
    case primary, secondary
}

/// The user's answer to the authorization request, or a revocation in Settings.
public enum AuthorizationAnswer: String, CaseIterable, Equatable, Sendable {
    case approved, denied, revoked
}

/// One thing that happens in a scenario step.
public enum ScenarioAction: Equatable, Sendable {
    /// The user opens an app (it comes to the foreground, unless a shield covers it).
    case open(app: CatalogApp)
    /// The user closes an app; nil closes the foreground app.
    case close(app: CatalogApp?)
    /// The user goes to the home screen; the foreground app goes to the background.
    case home
    /// The user loads a web page in a browser tab. `host` is the URL's lowercase host.
    case visit(url: String, host: String, tab: Int, isPrivate: Bool)
    case closeTab(Int)
    /// The user brings an open browser tab back to the front.
    case switchTab(Int)
    /// The user presses a button on the shield in front of them.
    case press(button: ShieldButton)
    /// The user taps a posted notification; nil taps the latest.
    case tapNotification(id: String?)
    /// The user completes a habit: one the products' apps offer (`habits:`), or free text when none lists any.
    case habit(String)
    /// The user taps one of a product app's own controls ("skip tonight"); nil: the device's one product app.
    case appAction(app: CatalogApp?, action: String)
    case authorize(AuthorizationAnswer)
    /// An iOS update: the OS regenerates every token.
    case osUpdate
    /// The device restarts: the broker and the plugins restart.
    case restart
    /// The user force-quits an app: its process is killed.
    case forceQuit(app: CatalogApp)
    /// The person sets the device's wall clock (Settings › General › Date & Time): the clock plugins see moves,
    /// true time (the bus clock) runs on.
    case setClock(ClockSetting)
    /// The device's time zone changes (travel, or the person picks another one): wall-clock schedules follow it.
    case setTimeZone(String)
    /// The broker — the OS — is killed (as by SIGKILL) and starts again on the same state folder.
    case crashBroker
    /// The app's other monitored activities (another feature, an older version's leftovers) take every free place of
    /// DeviceActivity's limit of 20: until some of the product's own activities end, a new one is refused.
    case fillActivityLimit
    /// A raw bus event for custom plugins; the body is compact JSON with sorted keys.
    case publish(topic: String, bodyJSON: String)

    /// The keys that name an action in a step, in the order the documentation lists them.
    public static let keys = ["open", "close", "home", "visit", "closeTab", "switchTab", "press", "tapNotification", "habit",
                              "appAction", "authorize", "osUpdate", "restart", "forceQuit", "setClock", "timeZone", "crashBroker", "fillActivityLimit", "publish"]

    /// The key that names this action in a file.
    public var key: String {
        switch self {
        case .open: return "open"
        case .close: return "close"
        case .home: return "home"
        case .visit: return "visit"
        case .closeTab: return "closeTab"
        case .switchTab: return "switchTab"
        case .press: return "press"
        case .tapNotification: return "tapNotification"
        case .habit: return "habit"
        case .appAction: return "appAction"
        case .authorize: return "authorize"
        case .osUpdate: return "osUpdate"
        case .restart: return "restart"
        case .forceQuit: return "forceQuit"
        case .setClock: return "setClock"
        case .setTimeZone: return "timeZone"
        case .crashBroker: return "crashBroker"
        case .fillActivityLimit: return "fillActivityLimit"
        case .publish: return "publish"
        }
    }

    /// Reads the action under `key` (one of `keys`); apps are looked up in `catalog`, habits in `habits`.
    static func parse(key: String, value: YAMLValue, catalog: AppCatalog, habits: OfferedHabits) throws -> ScenarioAction {
        switch key {
        case "open": return .open(app: try app(value, catalog))
        case "close": return .close(app: value.isNull ? nil : try app(value, catalog))
        case "home": try flag(value); return .home
        case "visit": return try visit(value, catalog)
        case "closeTab": return .closeTab(try tab(value))
        case "switchTab": return .switchTab(try tab(value))
        case "press": return .press(button: try value.oneOf(ShieldButton.self))
        case "tapNotification":
            // No value and `latest` both mean the most recent notification.
            if value.isNull { return .tapNotification(id: nil) }
            let id = try value.string()
            return .tapNotification(id: id == "latest" ? nil : id)
        case "habit":
            let habit = try value.string().trimmingCharacters(in: .whitespaces)
            guard !habit.isEmpty else { throw value.error("expected the habit completed, e.g. \"Read 10 pages\"") }
            // A habit the app does not offer would be played as no person could do it (`do habit` refuses it too).
            switch habits.choice(habit) {
            case .offered(let offered): return .habit(offered)
            case .unknown(let why): throw value.error(why)
            }
        case "appAction":
            if case .scalar = value.node { return .appAction(app: nil, action: try actionName(value)) }
            let fields = try value.uniqueMapping(allowed: ["app", "action"])
            guard let action = fields["action"] else { throw value.error("an app action needs its 'action', e.g. {app: Bedtime, action: skip-tonight}") }
            return .appAction(app: try fields["app"].map { try app($0, catalog) }, action: try actionName(action))
        case "authorize": return .authorize(try value.oneOf(AuthorizationAnswer.self))
        case "osUpdate": try flag(value); return .osUpdate
        case "restart": try flag(value); return .restart
        case "forceQuit": return .forceQuit(app: try app(value, catalog))
        case "setClock": return .setClock(try ClockSetting.parse(value))
        case "timeZone": return .setTimeZone(try Scenario.timeZone(named: try value.string(), value).identifier)
        case "crashBroker": try flag(value); return .crashBroker
        case "fillActivityLimit": try flag(value); return .fillActivityLimit
        case "publish": return try publish(value)
        default: throw value.error("unknown action") // unreachable: the step's keys were checked against `keys`
        }
    }

    /// The person's `action` on a device with `catalog`: its apps looked up, its clock setting and time zone read.
    /// Throws `CatalogLookupError` for an unknown app, `ClockSetting.Problem` and `Scenario.UnknownTimeZone`.
    public init(_ action: PersonAction, catalog: AppCatalog) throws {
        switch action {
        case .open(let app): self = .open(app: try catalog.requireApp(named: app))
        case .close(let app): self = .close(app: try app.map { try catalog.requireApp(named: $0) })
        case .home: self = .home
        case .visit(let url, let tab, let isPrivate):
            // Checked when the action was read (`PersonAction(verb:requestBody:)`).
            self = .visit(url: url, host: PersonAction.host(of: url) ?? "", tab: tab, isPrivate: isPrivate)
        case .closeTab(let tab): self = .closeTab(tab)
        case .switchTab(let tab): self = .switchTab(tab)
        case .press(let button): self = .press(button: button)
        case .habit(let habit): self = .habit(habit)
        case .appAction(let app, let control): self = .appAction(app: try app.map { try catalog.requireApp(named: $0) }, action: control)
        case .restart: self = .restart
        case .forceQuit(let app): self = .forceQuit(app: try catalog.requireApp(named: app))
        case .osUpdate: self = .osUpdate
        case .tapNotification(let id): self = .tapNotification(id: id)
        case .authorize(let answer): self = .authorize(answer)
        case .setClock(let setting): self = .setClock(try ClockSetting(parsing: setting))
        case .setTimeZone(let zone): self = .setTimeZone(try Scenario.timeZone(named: zone).identifier)
        case .crashBroker: self = .crashBroker
        }
    }

    private static func app(_ value: YAMLValue, _ catalog: AppCatalog) throws -> CatalogApp {
        do {
            return try catalog.requireApp(named: try value.string())
        } catch let error as CatalogLookupError {
            throw value.error(error.description)
        }
    }

    /// An app action's name: short, of letters, digits, '-', '_' and '.' (what a promise names).
    private static func actionName(_ value: YAMLValue) throws -> String {
        let name = try value.string()
        guard PersonAction.isControlName(name) else {
            throw value.error("an app action is a short name of letters, digits, '-', '_' or '.', e.g. skip-tonight; got '\(name)'")
        }
        return name
    }

    /// `home: true` and the like: the key alone carries the meaning, so only `true` (or nothing) is accepted.
    private static func flag(_ value: YAMLValue) throws {
        if value.isNull { return }
        guard try value.bool() else { throw value.error("write 'true' (or leave it empty); to not do this, leave the step out") }
    }

    private static func tab(_ value: YAMLValue) throws -> Int {
        let tab = try value.int()
        guard tab >= 1 else { throw value.error("tabs are numbered from 1, got \(tab)") }
        return tab
    }

    /// `visit: https://…` or `visit: {url: …, tab: 1, private: false}`.
    private static func visit(_ value: YAMLValue, _ catalog: AppCatalog) throws -> ScenarioAction {
        var urlValue = value, tab = 1, isPrivate = false
        if case .mapping = value.node {
            let fields = try value.uniqueMapping(allowed: ["url", "tab", "private"])
            guard let url = fields["url"] else { throw value.error("a visit needs a 'url' (e.g. https://www.instagram.com/)") }
            urlValue = url
            if let value = fields["tab"] { tab = try self.tab(value) }
            isPrivate = try fields["private"]?.bool() ?? false
        }
        let url = try urlValue.string()
        guard let components = URLComponents(string: url) else { throw urlValue.error("'\(url)' is not a valid URL") }
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            let hint = components.scheme == nil ? " (e.g. https://\(url))" : ""
            throw urlValue.error("a visit URL starts with http:// or https://, got '\(url)'\(hint)")
        }
        var host = (components.host ?? "").lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        guard !host.isEmpty else { throw urlValue.error("the URL '\(url)' has no host") }
        // Any hostname may be visited (the web is bigger than the catalog); only catalog domains have a category.
        guard catalog.domain(host) != nil || isHostname(host) else {
            throw urlValue.error("the URL's host '\(host)' is not a valid hostname")
        }
        return .visit(url: url, host: host, tab: tab, isPrivate: isPrivate)
    }

    /// `publish: {topic: app.custom.thing, body: {k: v}}`; the body may be left out (an empty object).
    private static func publish(_ value: YAMLValue) throws -> ScenarioAction {
        let fields = try value.uniqueMapping(allowed: ["topic", "body"])
        guard let topicValue = fields["topic"] else { throw value.error("a publish needs a 'topic' (e.g. app.custom.thing)") }
        let topic = try topicValue.string()
        if let problem = BusTable.screenTime.topicProblem(with: topic) { throw topicValue.error("\(problem)") }
        // Clock, bus and plugin events are the broker's own; a scenario forging them would break its bookkeeping.
        if DeviceTopic.systemNamespaces.contains(String(Topic.namespace(of: topic))) {
            throw topicValue.error("topic '\(topic)' is reserved for the broker (\(DeviceTopic.systemNamespaces.sorted().map { $0 + "." }.joined(separator: ", "))); a scenario cannot publish it")
        }
        var body = JSONValue.object([:])
        if let bodyValue = fields["body"] {
            guard case .mapping = bodyValue.node else { throw bodyValue.error("the body is a mapping (a JSON object), e.g. {k: v}") }
            body = try bodyValue.jsonValue()
        }
        return .publish(topic: topic, bodyJSON: body.jsonText)
    }
}


/// What a `setClock` step sets the device's wall clock to.
public enum ClockSetting: Equatable, Sendable {
    /// Moves the device clock by this many seconds (`"+2h"`, `"-30m"`).
    case shift(seconds: TimeInterval)
    /// Sets it to a local date-time, read in the time zone in force when the step plays.
    case absolute(LocalDateTime)

    /// `+2h`, `-1h30m`, or a local date-time `YYYY-MM-DDTHH:MM[:SS]`.
    static func parse(_ value: YAMLValue) throws -> ClockSetting {
        do {
            return try ClockSetting(parsing: try value.string())
        } catch let problem as Problem {
            throw value.error(problem.description)
        }
    }

    /// What is wrong with a clock setting as written.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads `+2h`, `-1h30m`, or a local date-time `YYYY-MM-DDTHH:MM[:SS]` (a scenario's `setClock`, a tool's input).
    public init(parsing written: String) throws {
        let text = written.trimmingCharacters(in: .whitespaces)
        if let sign = text.first, sign == "+" || sign == "-" {
            guard let seconds = Scenario.duration(String(text.dropFirst())) else {
                throw Problem(description: "expected a signed duration like +2h or -30m, got '\(text)'")
            }
            self = .shift(seconds: sign == "-" ? -seconds : seconds)
            return
        }
        guard let time = LocalDateTime(parsing: text) else {
            throw Problem(description: "expected a signed duration (+2h, -30m) or a local date-time like 2026-11-24T09:00, got '\(text)'")
        }
        self = .absolute(time)
    }
}
