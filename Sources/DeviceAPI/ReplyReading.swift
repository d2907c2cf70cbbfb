import BusProtocol
import Foundation
import ScreenTime

// The OS's replies that a short-lived extension reads at most launches (the monitored activities and events, the
// shield settings, an authorization, an empty value) and the companion app at each of its launches (the picker's
// selection), read with BusProtocol's JSON reader, and the requests it sends
// most written with its writer: each launch is a fresh process, and `JSONDecoder`'s and `SortedJSONEncoder`'s generic
// containers and casts make it pay the Swift runtime's metadata and conformance look-ups again every time
// (docs/benchmarks.md, "Explore and launches"). As in `BodyReading`, a value is read as
// `JSONDecoder` would decode it (unknown members ignored, `null` as absent) and nil is read from anything else, which
// then goes to `JSONDecoder` for its error.

/// A reply value read from the bus's `JSONValue` (`PluginRuntime.call` reads its `DeviceReply` so).
public protocol JSONReadableReply: Codable, Hashable {
    /// The value `JSONDecoder` decodes from `json`; nil when it would refuse it (or read a form this reader leaves to it).
    init?(json: JSONValue)
}

/// A request body written without `Codable`: the very bytes `DeviceAPICoding.encode` writes for it.
public protocol JSONWritableRequest: Encodable {
    var requestBody: [UInt8] { get }
}

extension DeviceReply where Value: JSONReadableReply {
    /// The reply `JSONDecoder` decodes from `body`, or nil (see `JSONReadableReply`).
    public init?(body: JSONValue) {
        guard case .bool(let ok)? = body["ok"], let value = ReplyReading.optional(body["value"], Value.init(json:)),
              let error = ReplyReading.optional(body["error"], DeviceError.init(json:)) else { return nil }
        self.init(ok: ok, value: value, error: error)
    }
}

extension DeviceError {
    init?(json: JSONValue) {
        guard case .string(let code)? = json["code"], case .string(let message)? = json["message"],
              let plugins = ReplyReading.optional(json["plugins"], { ReplyReading.array($0, PluginOutOfAction.init(json:)) }) else { return nil }
        self.init(code: code, message: message, plugins: plugins)
    }
}

extension PluginOutOfAction {
    init?(json: JSONValue) {
        guard case .string(let name)? = json["name"], case .string(let why)? = json["why"] else { return nil }
        self.init(name: name, why: why)
    }
}

extension NoValue: JSONReadableReply, JSONWritableRequest {
    /// Any value: `JSONDecoder` reads an empty value from whatever is there.
    public init?(json: JSONValue) {
        self.init()
    }

    public var requestBody: [UInt8] { [UInt8(ascii: "{"), UInt8(ascii: "}")] }
}

extension MonitoredActivities: JSONReadableReply {
    public init?(json: JSONValue) {
        guard let activities = ReplyReading.strings(json["activities"], DeviceActivityName.init(rawValue:)) else { return nil }
        self.init(activities: activities)
    }
}

extension MonitoredEvents: JSONReadableReply, JSONWritableRequest {
    public init?(json: JSONValue) {
        guard case .string(let activity)? = json["activity"], case .object(let members)? = json["events"] else { return nil }
        var events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:]
        for (name, value) in members {
            guard let event = DeviceActivityEvent(json: value) else { return nil }
            events[DeviceActivityEvent.Name(rawValue: name)] = event
        }
        self.init(activity: DeviceActivityName(rawValue: activity), events: events)
    }

    /// The request asks for an activity's events with none given: its body is the activity's name and `{}`.
    public var requestBody: [UInt8] {
        guard events.isEmpty else { return DeviceAPICoding.encode(self) }
        var out = Array(#"{"activity":"#.utf8)
        JSONWriter.writeString(activity.rawValue, into: &out)
        out.append(contentsOf: #","events":{}}"#.utf8)
        return out
    }
}

extension AuthorizationState: JSONReadableReply {
    public init?(json: JSONValue) {
        guard case .string(let status)? = json["status"], let known = AuthorizationStatus(rawValue: status) else { return nil }
        self.init(status: known)
    }
}

/// The picker's selection: the companion app asks for it at every launch (each force-quit makes one).
extension PickerResult: JSONReadableReply {
    public init?(json: JSONValue) {
        guard let selection = json["selection"], case .object = selection,
              let applications = ReplyReading.optional(selection["applicationTokens"], { ReplyReading.strings($0, ApplicationToken.init(rawValue:)) }),
              let categories = ReplyReading.optional(selection["categoryTokens"], { ReplyReading.strings($0, ActivityCategoryToken.init(rawValue:)) }),
              let webDomains = ReplyReading.optional(selection["webDomainTokens"], { ReplyReading.strings($0, WebDomainToken.init(rawValue:)) }),
              let includeEntireCategory = ReplyReading.optional(selection["includeEntireCategory"], { $0.boolValue }) else { return nil }
        self.init(selection: FamilyActivitySelection(applicationTokens: Set(applications ?? []), categoryTokens: Set(categories ?? []),
                                                     webDomainTokens: Set(webDomains ?? []), includeEntireCategory: includeEntireCategory ?? false))
    }
}

extension ManagedSettingsSnapshot: JSONReadableReply {
    public init?(json: JSONValue) {
        guard case .object(let members)? = json["stores"] else { return nil }
        var stores: [String: ShieldSettings] = [:]
        for (store, value) in members {
            guard let settings = ShieldSettings(json: value) else { return nil }
            stores[store] = settings
        }
        self.init(stores: stores)
    }
}

extension DeviceActivityEvent {
    /// The event as `JSONDecoder` decodes it, or nil.
    public init?(json: JSONValue) {
        guard case .object = json,
              let applications = ReplyReading.optional(json["applications"], { ReplyReading.strings($0, ApplicationToken.init(rawValue:)) }),
              let categories = ReplyReading.optional(json["categories"], { ReplyReading.strings($0, ActivityCategoryToken.init(rawValue:)) }),
              let webDomains = ReplyReading.optional(json["webDomains"], { ReplyReading.strings($0, WebDomainToken.init(rawValue:)) }),
              let threshold = json["threshold"].flatMap(DateComponents.init(compactJSON:)),
              let includesPastActivity = ReplyReading.optional(json["includesPastActivity"], { $0.boolValue }) else { return nil }
        self.init(applications: Set(applications ?? []), categories: Set(categories ?? []), webDomains: Set(webDomains ?? []),
                  threshold: threshold, includesPastActivity: includesPastActivity ?? false)
    }
}

extension ShieldSettings {
    init?(json: JSONValue) {
        guard case .object = json,
              let applications = ReplyReading.optional(json["applications"], { ReplyReading.strings($0, ApplicationToken.init(rawValue:)) }),
              let applicationCategories = ReplyReading.optional(json["applicationCategories"], ActivityCategoryPolicy<Application>.init(json:)),
              let webDomains = ReplyReading.optional(json["webDomains"], { ReplyReading.strings($0, WebDomainToken.init(rawValue:)) }),
              let webDomainCategories = ReplyReading.optional(json["webDomainCategories"], ActivityCategoryPolicy<WebDomain>.init(json:)) else { return nil }
        self.init(applications: applications.map { Set($0) }, applicationCategories: applicationCategories,
                  webDomains: webDomains.map { Set($0) }, webDomainCategories: webDomainCategories)
    }
}

extension ShieldSettings.ActivityCategoryPolicy {
    init?(json: JSONValue) {
        guard case .object = json,
              let exceptions = ReplyReading.optional(json["except"], { ReplyReading.strings($0, Token<Activity>.init(rawValue:)) }),
              case .string(let policy)? = json["policy"] else { return nil }
        switch policy {
        case "none": self = .none
        case "all": self = .all(except: Set(exceptions ?? []))
        case "specific":
            // Only a specific policy reads its categories, as the decoder does.
            guard let categories = ReplyReading.optional(json["categories"], { ReplyReading.strings($0, ActivityCategoryToken.init(rawValue:)) }) else { return nil }
            self = .specific(Set(categories ?? []), except: Set(exceptions ?? []))
        default: return nil
        }
    }
}

enum ReplyReading {
    /// A member read when present: `.some(nil)` when absent or `null`, `.some(value)` when read, nil when not readable.
    static func optional<T>(_ value: JSONValue?, _ read: (JSONValue) -> T?) -> T?? {
        switch value {
        case nil, .null?: return .some(nil)
        case let present?: return read(present).map { .some($0) }
        }
    }

    /// An array of strings, each made into a `T`.
    static func strings<T>(_ value: JSONValue?, _ make: (String) -> T) -> [T]? {
        array(value) { element in
            guard case .string(let text) = element else { return nil }
            return make(text)
        }
    }

    static func array<T>(_ value: JSONValue?, _ read: (JSONValue) -> T?) -> [T]? {
        guard case .array(let elements)? = value else { return nil }
        var values: [T] = []
        values.reserveCapacity(elements.count)
        for element in elements {
            guard let read = read(element) else { return nil }
            values.append(read)
        }
        return values
    }
}
