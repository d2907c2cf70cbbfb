// PersonAction: the person's actions on the phone, named and checked once — the verb `shieldbus do` takes, the input
// request the device answers (`input.<verb>.request` and its body), and the key a scenario step uses.

import BusProtocol
import Foundation

/// What the person can do to the phone, by name.
public enum PersonVerb: String, CaseIterable, Equatable, Sendable {
    case open, close, home, visit
    case closeTab = "close-tab"
    case switchTab = "switch-tab"
    case press, habit
    case appAction = "app-action"
    case restart
    case forceQuit = "force-quit"
    case osUpdate = "os-update"
    case notificationTap = "notification-tap"
    case authorize
    case setClock = "set-clock"
    case timeZone = "time-zone"
    case crashBroker = "crash-broker"

    /// The verbs as `shieldbus do` lists them.
    public static let names = allCases.map(\.rawValue)

    /// The device's request for this action: `input.<verb>.request`.
    public var requestTopic: String { "input.\(rawValue)\(Topic.requestSuffix)" }

    /// The verb of an input request's topic, nil for a topic that names no person's action.
    public init?(requestTopic topic: String) {
        guard topic.hasPrefix("input."), topic.hasSuffix(Topic.requestSuffix) else { return nil }
        self.init(rawValue: String(topic.dropFirst("input.".count).dropLast(Topic.requestSuffix.count)))
    }

    /// The key a scenario step names this action with.
    public var scenarioKey: String {
        switch self {
        case .notificationTap: return "tapNotification"
        default:
            // close-tab → closeTab: scenario keys are the verbs in camel case.
            let words = rawValue.split(separator: "-")
            return words.first.map(String.init)! + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        }
    }
}

/// One of the person's actions, with what it names as the person wrote it (apps by name, the clock setting as text):
/// the device resolves the names against its catalog (`ScenarioAction(_:catalog:)`).
public enum PersonAction: Equatable, Sendable {
    case open(app: String)
    /// nil closes the app in front.
    case close(app: String?)
    case home
    case visit(url: String, tab: Int, isPrivate: Bool)
    case closeTab(Int)
    case switchTab(Int)
    case press(ShieldButton)
    case habit(String)
    /// nil: the device's one product app.
    case appAction(app: String?, action: String)
    case restart
    case forceQuit(app: String)
    case osUpdate
    /// nil taps the latest notification.
    case tapNotification(id: String?)
    case authorize(AuthorizationAnswer)
    /// `+2h`, `-30m` or a local date-time (`ClockSetting`).
    case setClock(String)
    /// An IANA time zone name.
    case setTimeZone(String)
    case crashBroker

    /// An action that cannot be what was asked, and why.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The longest name of a product app's control (`app-action`).
    public static let maxControlNameLength = 64

    public var verb: PersonVerb {
        switch self {
        case .open: return .open
        case .close: return .close
        case .home: return .home
        case .visit: return .visit
        case .closeTab: return .closeTab
        case .switchTab: return .switchTab
        case .press: return .press
        case .habit: return .habit
        case .appAction: return .appAction
        case .restart: return .restart
        case .forceQuit: return .forceQuit
        case .osUpdate: return .osUpdate
        case .tapNotification: return .notificationTap
        case .authorize: return .authorize
        case .setClock: return .setClock
        case .setTimeZone: return .timeZone
        case .crashBroker: return .crashBroker
        }
    }

    // MARK: As the command line and the Studio give it

    /// The action `verb` (one of `PersonVerb.names`) with its `value` — an app, URL, button, habit, control name,
    /// notification id, authorization answer (approve, deny, revoke), clock setting or time zone; `tab` and `isPrivate`
    /// apply to visit, close-tab and switch-tab, `app` to app-action.
    public init(verb name: String, value: String? = nil, tab: Int = 1, isPrivate: Bool = false, app: String? = nil) throws(Invalid) {
        guard let verb = PersonVerb(rawValue: name) else {
            throw Invalid(description: "unknown action '\(name)'; actions: \(PersonVerb.names.joined(separator: ", "))")
        }
        let given = value.flatMap { $0.isEmpty ? nil : $0 }
        switch verb {
        case .open, .forceQuit:
            guard let app = given else { throw Invalid(description: "'\(name)' needs an app name") }
            self = verb == .open ? .open(app: app) : .forceQuit(app: app)
        case .close: self = .close(app: given)
        case .home: self = .home
        case .visit:
            guard let url = given, Self.isVisitable(url) else { throw Invalid(description: "'visit' needs an http(s) URL with a host") }
            guard tab >= 1 else { throw Invalid(description: "'visit' needs a browser tab, 1 or more") }
            self = .visit(url: url, tab: tab, isPrivate: isPrivate)
        case .closeTab, .switchTab:
            guard tab >= 1 else { throw Invalid(description: "'\(name)' needs a browser tab, 1 or more") }
            self = verb == .closeTab ? .closeTab(tab) : .switchTab(tab)
        case .press:
            guard let button = given.flatMap(ShieldButton.init(rawValue:)) else { throw Invalid(description: "'press' needs primary or secondary") }
            self = .press(button)
        case .habit: self = .habit(Self.habitName(given))
        case .appAction:
            guard let control = given, Self.isControlName(control) else {
                throw Invalid(description: "'app-action' needs the control's name: letters, digits, '-', '_' or '.', e.g. skip-tonight")
            }
            self = .appAction(app: app, action: control)
        case .restart: self = .restart
        case .osUpdate: self = .osUpdate
        case .notificationTap: self = .tapNotification(id: given)
        case .authorize:
            // The person says approve, deny or revoke; the request carries the answer (approved, denied, revoked).
            let answers: [String: AuthorizationAnswer] = ["approve": .approved, "deny": .denied, "revoke": .revoked]
            guard let said = given, let answer = answers[said] ?? AuthorizationAnswer(rawValue: said) else {
                throw Invalid(description: "'authorize' needs approve, deny or revoke")
            }
            self = .authorize(answer)
        case .setClock:
            guard let setting = given else { throw Invalid(description: "'set-clock' needs the device clock's setting: +2h, -30m or 2026-11-24T09:00") }
            self = .setClock(setting)
        case .timeZone:
            guard let zone = given else { throw Invalid(description: "'time-zone' needs an IANA time zone name, e.g. America/New_York") }
            self = .setTimeZone(zone)
        case .crashBroker: self = .crashBroker
        }
    }

    // MARK: As the device's input request carries it

    /// The body of `input.<verb>.request`.
    public var requestBody: JSONValue {
        switch self {
        case .open(let app), .forceQuit(let app): return .object(["app": .string(app)])
        case .close(let app): return .object(app.map { ["app": .string($0)] } ?? [:])
        case .visit(let url, let tab, let isPrivate): return .object(["url": .string(url), "tab": .int(Int64(tab)), "private": .bool(isPrivate)])
        case .closeTab(let tab), .switchTab(let tab): return .object(["tab": .int(Int64(tab))])
        case .press(let button): return .object(["button": .string(button.rawValue)])
        case .habit(let habit): return .object(["habit": .string(habit)])
        case .appAction(let app, let action):
            var body: [String: JSONValue] = ["action": .string(action)]
            if let app { body["app"] = .string(app) }
            return .object(body)
        case .tapNotification(let id): return .object(id.map { ["id": .string($0)] } ?? [:])
        case .authorize(let answer): return .object(["answer": .string(answer.rawValue)])
        case .setClock(let setting): return .object(["to": .string(setting)])
        case .setTimeZone(let zone): return .object(["zone": .string(zone)])
        case .home, .restart, .osUpdate, .crashBroker: return .object([:])
        }
    }

    /// The action a request for `verb` with `body` asks for; an error names the field that is missing or wrong.
    public init(verb: PersonVerb, requestBody body: JSONValue) throws(Invalid) {
        func string(_ key: String, _ what: String) throws(Invalid) -> String {
            guard let value = body[key]?.stringValue, !value.isEmpty else { throw Invalid(description: "'\(verb.rawValue)' needs '\(key)': \(what)") }
            return value
        }
        // A field given as null is absent; one given with the wrong type is refused, not taken as absent: `{"app": 3}`
        // is no "close whatever is open".
        let given = { (key: String) -> JSONValue? in
            guard let value = body[key], value != JSONValue.null else { return nil }
            return value
        }
        func optional(_ key: String) throws(Invalid) -> String? {
            guard let value = given(key) else { return nil }
            guard let text = value.stringValue else { throw Invalid(description: "'\(verb.rawValue)' takes '\(key)' as a string, not \(value.jsonText)") }
            return text
        }
        let tab = try given("tab").map { value throws(Invalid) in
            guard let number = value.intValue, number >= 1 else { throw Invalid(description: "'\(verb.rawValue)' needs 'tab': a browser tab, 1 or more") }
            return Int(number)
        } ?? 1
        let isPrivate = try given("private").map { value throws(Invalid) in
            guard let flag = value.boolValue else { throw Invalid(description: "'\(verb.rawValue)' takes 'private' as true or false, not \(value.jsonText)") }
            return flag
        } ?? false
        switch verb {
        case .open: self = .open(app: try string("app", "an app name"))
        case .forceQuit: self = .forceQuit(app: try string("app", "an app name"))
        case .close: self = .close(app: try optional("app"))
        case .home: self = .home
        case .visit:
            let url = try string("url", "an http(s) URL with a host")
            guard Self.isVisitable(url) else { throw Invalid(description: "'visit' needs 'url': an http(s) URL with a host") }
            self = .visit(url: url, tab: tab, isPrivate: isPrivate)
        case .closeTab: self = .closeTab(tab)
        case .switchTab: self = .switchTab(tab)
        case .press:
            guard let button = try optional("button").flatMap(ShieldButton.init(rawValue:)) else {
                throw Invalid(description: "'press' needs 'button': primary or secondary")
            }
            self = .press(button)
        case .habit: self = .habit(Self.habitName(try optional("habit")))
        case .appAction:
            let control = try string("action", "the control's name, e.g. skip-tonight")
            guard Self.isControlName(control) else {
                throw Invalid(description: "'app-action' needs 'action': the control's name (letters, digits, '-', '_' or '.'), e.g. skip-tonight")
            }
            self = .appAction(app: try optional("app"), action: control)
        case .restart: self = .restart
        case .osUpdate: self = .osUpdate
        case .notificationTap: self = .tapNotification(id: try optional("id"))
        case .authorize:
            guard let answer = try optional("answer").flatMap(AuthorizationAnswer.init(rawValue:)) else {
                throw Invalid(description: "'authorize' needs 'answer': approved, denied or revoked")
            }
            self = .authorize(answer)
        case .setClock: self = .setClock(try string("to", "+2h, -30m or a local date-time"))
        case .timeZone: self = .setTimeZone(try string("zone", "an IANA time zone name, e.g. America/New_York"))
        case .crashBroker: self = .crashBroker
        }
    }

    // MARK: As a scenario step writes it

    /// The action as one step of a scenario file (`open: "Instagram"`): what `ScenarioAction` reads back.
    public var scenarioStep: String {
        func quoted(_ text: String) -> String { JSONValue.string(text).jsonText }
        let key = verb.scenarioKey
        switch self {
        case .open(let app), .forceQuit(let app): return "\(key): \(quoted(app))"
        case .close(let app): return "\(key): \(app.map(quoted) ?? "null")"
        case .visit(let url, let tab, let isPrivate): return "\(key): {url: \(quoted(url)), tab: \(tab), private: \(isPrivate)}"
        case .closeTab(let tab), .switchTab(let tab): return "\(key): \(tab)"
        case .press(let button): return "\(key): \(button.rawValue)"
        case .habit(let habit): return "\(key): \(quoted(habit))"
        case .appAction(let app, let control):
            return app.map { "\(key): {app: \(quoted($0)), action: \(quoted(control))}" } ?? "\(key): \(quoted(control))"
        case .tapNotification(let id): return "\(key): \(id.map(quoted) ?? "latest")"
        case .authorize(let answer): return "\(key): \(answer.rawValue)"
        case .setClock(let setting): return "\(key): \(quoted(setting))"
        case .setTimeZone(let zone): return "\(key): \(quoted(zone))"
        case .home, .restart, .osUpdate, .crashBroker: return "\(key): true"
        }
    }

    // MARK: Rules both forms share

    /// A product app's control name: 1–64 letters, digits, '-', '_' or '.'.
    public static func isControlName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= maxControlNameLength && name.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
    }

    /// Whether the person can visit `url`: http or https, with a host (as a scenario's `visit` takes it).
    public static func isVisitable(_ url: String) -> Bool {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased() else { return false }
        return ["http", "https"].contains(scheme) && host(of: url) != nil
    }

    /// A completed habit's name as a scenario keeps it: trimmed, "habit" when none is given.
    static func habitName(_ given: String?) -> String {
        let trimmed = given?.trimmingCharacters(in: .whitespaces) ?? ""
        return trimmed.isEmpty ? "habit" : trimmed
    }

    /// The lowercase host of a URL the person visits, nil when it has none.
    public static func host(of url: String) -> String? {
        URL(string: url)?.host?.lowercased()
    }
}
