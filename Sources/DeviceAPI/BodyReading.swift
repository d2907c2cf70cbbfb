import BusProtocol
import ScreenTime

// The bodies on the person's way to a shield, the events every open and web visit makes, the posted notifications,
// and the monitored events' request the plugins make around them, read with BusProtocol's JSON reader:
// `JSONDecoder` spends most of a renderer's answer, and much of the report builder's record, in its generic
// containers. Each reads a body as `JSONDecoder` would decode it (unknown members ignored, a `null` member taken as
// absent) and reads nil from anything else; a body read nil goes to `JSONDecoder`, which says what is wrong with it.

extension ShieldConfigurationRequest {
    public init?(body: JSONValue) {
        guard case .string(let entry)? = body["entryPoint"], let entryPoint = ShieldEntryPoint(rawValue: entry),
              case .object(let target)? = body["target"], let shielded = ShieldTarget(members: target) else { return nil }
        self.init(entryPoint: entryPoint, target: shielded)
    }
}

extension ShieldConfigurationReply {
    public init?(body: JSONValue) {
        guard case .object(let members)? = body["configuration"], let configuration = ShieldConfiguration(members: members) else { return nil }
        self.init(configuration: configuration)
    }
}

extension ShieldShown {
    public init?(body: JSONValue) {
        guard case .object(let target)? = body["target"], let shielded = ShieldTarget(members: target),
              case .string(let entry)? = body["entryPoint"], let entryPoint = ShieldEntryPoint(rawValue: entry),
              case .array(let storeValues)? = body["stores"],
              case .object(let configurationMembers)? = body["configuration"],
              let configuration = ShieldConfiguration(members: configurationMembers),
              case .string(let renderedBy)? = body["renderedBy"],
              let fallbackReason = BodyReading.string(body["fallbackReason"]),
              let tab = BodyReading.int(body["tab"]), let isPrivate = BodyReading.bool(body["isPrivate"]) else { return nil }
        var stores: [String] = []
        for value in storeValues {
            guard case .string(let store) = value else { return nil }
            stores.append(store)
        }
        self.init(target: shielded, entryPoint: entryPoint, stores: stores, configuration: configuration, renderedBy: renderedBy,
                  fallbackReason: fallbackReason, tab: tab, isPrivate: isPrivate)
    }
}

extension AppActivity {
    public init?(body: JSONValue) {
        guard case .object(let app)? = body["application"], let application = Application(members: app),
              let category = BodyReading.object(body["category"], ActivityCategory.init(members:)),
              case .string(let reason)? = body["reason"] else { return nil }
        self.init(application: application, category: category, reason: reason)
    }
}

extension WebActivity {
    public init?(body: JSONValue) {
        guard case .object(let domain)? = body["webDomain"], let webDomain = WebDomain(members: domain),
              let category = BodyReading.object(body["category"], ActivityCategory.init(members:)),
              case .string(let url)? = body["url"], case .int(let tab)? = body["tab"],
              case .bool(let isPrivate)? = body["isPrivate"], case .string(let reason)? = body["reason"] else { return nil }
        self.init(webDomain: webDomain, category: category, url: url, tab: Int(tab), isPrivate: isPrivate, reason: reason)
    }
}

extension NotificationRequest {
    public init?(body: JSONValue) {
        guard case .string(let id)? = body["id"], case .string(let title)? = body["title"], case .string(let text)? = body["body"],
              case .string(let level)? = body["interruptionLevel"], let interruptionLevel = InterruptionLevel(rawValue: level),
              let kind = BodyReading.string(body["kind"]) else { return nil }
        self.init(id: id, title: title, body: text, interruptionLevel: interruptionLevel, kind: kind)
    }
}

extension MonitoredEvents {
    /// `deviceactivity.events.request` as plugins send it: an activity and no events (`{}`), the events being what
    /// the reply tells. A body with events is read nil, and left to `JSONDecoder`.
    public init?(body: JSONValue) {
        guard case .string(let activity)? = body["activity"], case .object(let events)? = body["events"], events.isEmpty else { return nil }
        self.init(activity: DeviceActivityName(rawValue: activity))
    }
}

extension ShieldTarget {
    init?(members: [String: JSONValue]) {
        guard let application = BodyReading.object(members["application"], Application.init(members:)),
              let webDomain = BodyReading.object(members["webDomain"], WebDomain.init(members:)),
              let category = BodyReading.object(members["category"], ActivityCategory.init(members:)) else { return nil }
        self.init(application: application, webDomain: webDomain, category: category)
    }
}

extension Application {
    init?(members: [String: JSONValue]) {
        guard let token = BodyReading.string(members["token"]), let name = BodyReading.string(members["localizedDisplayName"]),
              let bundle = BodyReading.string(members["bundleIdentifier"]) else { return nil }
        self.init(token: token.map(ApplicationToken.init(rawValue:)), localizedDisplayName: name, bundleIdentifier: bundle)
    }
}

extension WebDomain {
    init?(members: [String: JSONValue]) {
        guard let token = BodyReading.string(members["token"]), let domain = BodyReading.string(members["domain"]) else { return nil }
        self.init(token: token.map(WebDomainToken.init(rawValue:)), domain: domain)
    }
}

extension ActivityCategory {
    init?(members: [String: JSONValue]) {
        guard let token = BodyReading.string(members["token"]), let name = BodyReading.string(members["localizedDisplayName"]) else { return nil }
        self.init(token: token.map(ActivityCategoryToken.init(rawValue:)), localizedDisplayName: name)
    }
}

extension ShieldConfiguration {
    init?(members: [String: JSONValue]) {
        guard let blur = BodyReading.optional(members["backgroundBlurStyle"], { ShieldBlurStyle(rawValue: $0) }),
              let background = BodyReading.optional(members["backgroundColor"], ShieldColor.init(hex:)),
              let icon = BodyReading.optional(members["icon"], { ShieldIcon($0) }),
              let title = BodyReading.label(members["title"]),
              let subtitle = BodyReading.label(members["subtitle"]),
              let primary = BodyReading.label(members["primaryButtonLabel"]),
              let primaryColor = BodyReading.optional(members["primaryButtonBackgroundColor"], ShieldColor.init(hex:)),
              let secondary = BodyReading.label(members["secondaryButtonLabel"]) else { return nil }
        self.init(backgroundBlurStyle: blur, backgroundColor: background, icon: icon, title: title, subtitle: subtitle,
                  primaryButtonLabel: primary, primaryButtonBackgroundColor: primaryColor, secondaryButtonLabel: secondary)
    }
}

/// Optional members: `.some(nil)` when absent or `null`, `.some(value)` when read, nil when present and not readable.
enum BodyReading {
    static func optional<T>(_ value: JSONValue?, _ read: (String) -> T?) -> T?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .string(let text)?: return read(text).map { .some($0) }
        default: return nil
        }
    }

    static func object<T>(_ value: JSONValue?, _ read: ([String: JSONValue]) -> T?) -> T?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .object(let members)?: return read(members).map { .some($0) }
        default: return nil
        }
    }

    static func string(_ value: JSONValue?) -> String?? { optional(value) { $0 } }

    /// Only a number written as an integer: anything else is left to `JSONDecoder`.
    static func int(_ value: JSONValue?) -> Int?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .int(let number)?: return .some(Int(number))
        default: return nil
        }
    }

    static func bool(_ value: JSONValue?) -> Bool?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .bool(let flag)?: return .some(flag)
        default: return nil
        }
    }

    /// A `ShieldConfiguration.Label`: its text and color both required.
    static func label(_ value: JSONValue?) -> ShieldConfiguration.Label?? {
        object(value) { members in
            guard case .string(let text)? = members["text"], case .string(let hex)? = members["color"],
                  let color = ShieldColor(hex: hex) else { return nil }
            return ShieldConfiguration.Label(text: text, color: color)
        }
    }
}
