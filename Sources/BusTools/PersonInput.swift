import BusProtocol

/// One of the person's actions as the device's input request (`input.<verb>.request` and its body): what
/// `shieldbus do`, `os-update`, `notification tap` and the Studio's buttons send.
public struct PersonInput: Equatable {
    public let verb: String
    public let body: JSONValue

    /// An action that cannot become a request, and why.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// The actions, as `shieldbus do` names them.
    public static let actions = ["open", "close", "home", "visit", "close-tab", "switch-tab", "press", "habit", "app-action", "restart",
                                 "force-quit", "os-update", "notification-tap", "authorize", "set-clock", "time-zone", "crash-broker"]

    /// The request for `action` with its `value` (an app, URL, button, habit, app action, notification id, authorization
    /// answer, device clock setting or time zone); `tab` and `isPrivate` apply to visit, close-tab and switch-tab, `app`
    /// to app-action.
    public init(action: String, value: String? = nil, tab: Int = 1, isPrivate: Bool = false, app: String? = nil) throws {
        var body: [String: JSONValue] = [:]
        switch action {
        case "open", "force-quit":
            guard let value else { throw Invalid(description: "'\(action)' needs an app name") }
            body["app"] = .string(value)
        case "close": if let value { body["app"] = .string(value) }
        case "visit":
            guard let value else { throw Invalid(description: "'visit' needs a URL") }
            body = ["url": .string(value), "tab": .int(Int64(tab)), "private": .bool(isPrivate)]
        case "close-tab", "switch-tab": body["tab"] = .int(Int64(tab))
        case "authorize":
            let answers = ["approve": "approved", "deny": "denied", "revoke": "revoked"]
            guard let value, let answer = answers[value] ?? (answers.values.contains(value) ? value : nil) else {
                throw Invalid(description: "'authorize' needs approve, deny or revoke")
            }
            body["answer"] = .string(answer)
        case "set-clock":
            guard let value, !value.isEmpty else { throw Invalid(description: "'set-clock' needs the device clock's setting: +2h, -30m or 2026-11-24T09:00") }
            body["to"] = .string(value)
        case "time-zone":
            guard let value, !value.isEmpty else { throw Invalid(description: "'time-zone' needs an IANA time zone name, e.g. America/New_York") }
            body["zone"] = .string(value)
        case "press":
            guard let value, ["primary", "secondary"].contains(value) else { throw Invalid(description: "'press' needs primary or secondary") }
            body["button"] = .string(value)
        case "habit": body["habit"] = .string(value ?? "habit")
        case "app-action":
            guard let value, !value.isEmpty, value.count <= 64, value.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw Invalid(description: "'app-action' needs the control's name: letters, digits, '-', '_' or '.', e.g. skip-tonight")
            }
            body["action"] = .string(value)
            if let app { body["app"] = .string(app) }
        case "notification-tap": if let value { body["id"] = .string(value) }
        case "home", "restart", "os-update", "crash-broker": break
        default: throw Invalid(description: "unknown action '\(action)'; see `shieldbus do --help`")
        }
        verb = action
        self.body = .object(body)
    }
}
