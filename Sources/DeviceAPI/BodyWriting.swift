import BusProtocol
import ScreenTime

// The bodies the OS emits at every shield, every app or page coming and going and every DeviceActivity callback, the
// renderer's answer to each shield, and the device's answers to each input and to a monitor's questions, written byte
// by byte with BusProtocol's JSON writer: they are on the shield decision's path or the broker's loop many times a
// day, where `Codable`'s generic containers (`DeviceAPICoding.encode`) cost more than the work around them. Each writes
// the very bytes `DeviceAPICoding.encode` writes for the same value — keys sorted, absent optionals left out — which
// `BodyWritingTests` checks over many values.

extension ShieldShown {
    /// `DeviceAPICoding.encode(self)`'s bytes.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        out.append(contentsOf: #"{"configuration":"#.utf8)
        configuration.writeJSON(into: &out)
        out.append(contentsOf: #","entryPoint":"#.utf8)
        JSONWriter.writeString(entryPoint.rawValue, into: &out)
        if let fallbackReason {
            out.append(contentsOf: #","fallbackReason":"#.utf8)
            JSONWriter.writeString(fallbackReason, into: &out)
        }
        if let isPrivate { out.append(contentsOf: (isPrivate ? #","isPrivate":true"# : #","isPrivate":false"#).utf8) }
        out.append(contentsOf: #","renderedBy":"#.utf8)
        JSONWriter.writeString(renderedBy, into: &out)
        out.append(contentsOf: #","stores":["#.utf8)
        for (index, store) in stores.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(store, into: &out)
        }
        out.append(UInt8(ascii: "]"))
        if let tab {
            out.append(contentsOf: #","tab":"#.utf8)
            JSONWriter.writeInteger(Int64(tab), into: &out)
        }
        out.append(contentsOf: #","target":"#.utf8)
        target.writeJSON(into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension ShieldConfigurationReply {
    /// `DeviceAPICoding.encode(self)`'s bytes: the renderer's answer, on the shield decision's path.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(384)
        out.append(contentsOf: #"{"configuration":"#.utf8)
        configuration.writeJSON(into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension ShieldConfigurationRequest {
    /// `DeviceAPICoding.encode(self)`'s bytes.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        out.append(contentsOf: #"{"entryPoint":"#.utf8)
        JSONWriter.writeString(entryPoint.rawValue, into: &out)
        out.append(contentsOf: #","target":"#.utf8)
        target.writeJSON(into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension ShieldTarget {
    func writeJSON(into out: inout [UInt8]) {
        var object = JSONObject(into: &out)
        if let application {
            object.key("application", into: &out)
            application.writeJSON(into: &out)
        }
        if let category {
            object.key("category", into: &out)
            category.writeJSON(into: &out)
        }
        if let webDomain {
            object.key("webDomain", into: &out)
            webDomain.writeJSON(into: &out)
        }
        object.end(into: &out)
    }
}

extension AppActivity {
    /// `DeviceAPICoding.encode(self)`'s bytes.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        out.append(contentsOf: #"{"application":"#.utf8)
        application.writeJSON(into: &out)
        if let category {
            out.append(contentsOf: #","category":"#.utf8)
            category.writeJSON(into: &out)
        }
        out.append(contentsOf: #","reason":"#.utf8)
        JSONWriter.writeString(reason, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension WebActivity {
    /// `DeviceAPICoding.encode(self)`'s bytes.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(192)
        out.append(UInt8(ascii: "{"))
        if let category {
            out.append(contentsOf: #""category":"#.utf8)
            category.writeJSON(into: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: (isPrivate ? #""isPrivate":true,"reason":"# : #""isPrivate":false,"reason":"#).utf8)
        JSONWriter.writeString(reason, into: &out)
        out.append(contentsOf: #","tab":"#.utf8)
        JSONWriter.writeInteger(Int64(tab), into: &out)
        out.append(contentsOf: #","url":"#.utf8)
        JSONWriter.writeString(url, into: &out)
        out.append(contentsOf: #","webDomain":"#.utf8)
        webDomain.writeJSON(into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension InputOutcome {
    /// `DeviceAPICoding.encode(DeviceReply.success(self))`'s bytes: the device's answer to each of the person's inputs.
    public var successReplyJSON: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(768)
        out.append(contentsOf: (handled ? #"{"ok":true,"value":{"handled":true"# : #"{"ok":true,"value":{"handled":false"#).utf8)
        if let screen {
            out.append(contentsOf: #","screen":"#.utf8)
            screen.writeJSON(into: &out)
        }
        out.append(contentsOf: "}}".utf8)
        return out
    }
}

extension DeviceActivityCallback {
    /// `DeviceAPICoding.encode(self)`'s bytes: the body of every interval's start and end and every threshold reached,
    /// which a monitor that restarts its schedule at each callback hears many times a day.
    public var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96)
        out.append(contentsOf: #"{"activity":"#.utf8)
        JSONWriter.writeString(activity.rawValue, into: &out)
        if let event {
            out.append(contentsOf: #","event":"#.utf8)
            JSONWriter.writeString(event.rawValue, into: &out)
        }
        out.append(contentsOf: #","scheduledFor":"#.utf8)
        JSONWriter.writeInteger(busTime(scheduledFor), into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension MonitoredActivities {
    /// `DeviceAPICoding.encode(DeviceReply.success(self))`'s bytes: the answer to `deviceactivity.activities.request`,
    /// which a monitor asks at each callback.
    public var successReplyJSON: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(48 + 32 * activities.count)
        out.append(contentsOf: #"{"ok":true,"value":{"activities":["#.utf8)
        for (index, activity) in activities.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(activity.rawValue, into: &out)
        }
        out.append(contentsOf: "]}}".utf8)
        return out
    }
}

extension MonitoredEvents {
    /// `DeviceAPICoding.encode(DeviceReply.success(self))`'s bytes: the answer to `deviceactivity.events.request`,
    /// which a monitor asks at most callbacks and the OS writes anew at each change of the activity's registration;
    /// nil when an event has a field the compact form refuses (the encoder then writes it).
    public var successReplyJSON: [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(128 + 160 * events.count)
        out.append(contentsOf: #"{"ok":true,"value":{"activity":"#.utf8)
        JSONWriter.writeString(activity.rawValue, into: &out)
        out.append(contentsOf: #","events":"#.utf8)
        guard DeviceActivityEvent.writeJSON(events, into: &out) else { return nil }
        out.append(contentsOf: "}}".utf8)
        return out
    }
}

extension NoValue {
    /// `DeviceAPICoding.encode(DeviceReply.success(NoValue()))`'s bytes: the answer to every request that returns
    /// nothing (a schedule started, a setting written, a notification posted).
    public static let successReplyJSON: [UInt8] = Array(#"{"ok":true,"value":{}}"#.utf8)
}

extension DeviceLook {
    /// The app or page and the shield on screen written byte by byte; the notifications and monitored schedules, which
    /// change far less often than the screen, through `DeviceAPICoding.encode`.
    func writeJSON(into out: inout [UInt8]) {
        out.append(contentsOf: #"{"activities":"#.utf8)
        if activities.isEmpty { out.append(contentsOf: "[]".utf8) } else { out.append(contentsOf: DeviceAPICoding.encode(activities)) }
        if let app {
            out.append(contentsOf: #","app":"#.utf8)
            out.append(contentsOf: app.json)
        }
        out.append(contentsOf: #","notifications":"#.utf8)
        if notifications.isEmpty { out.append(contentsOf: "[]".utf8) } else { out.append(contentsOf: DeviceAPICoding.encode(notifications)) }
        if let shield {
            out.append(contentsOf: #","shield":"#.utf8)
            out.append(contentsOf: shield.json)
        }
        if let web {
            out.append(contentsOf: #","web":"#.utf8)
            out.append(contentsOf: web.json)
        }
        out.append(UInt8(ascii: "}"))
    }
}

extension Application {
    func writeJSON(into out: inout [UInt8]) {
        var object = JSONObject(into: &out)
        object.string("bundleIdentifier", bundleIdentifier, into: &out)
        object.string("localizedDisplayName", localizedDisplayName, into: &out)
        object.string("token", token?.rawValue, into: &out)
        object.end(into: &out)
    }
}

extension ActivityCategory {
    func writeJSON(into out: inout [UInt8]) {
        var object = JSONObject(into: &out)
        object.string("localizedDisplayName", localizedDisplayName, into: &out)
        object.string("token", token?.rawValue, into: &out)
        object.end(into: &out)
    }
}

extension WebDomain {
    func writeJSON(into out: inout [UInt8]) {
        var object = JSONObject(into: &out)
        object.string("domain", domain, into: &out)
        object.string("token", token?.rawValue, into: &out)
        object.end(into: &out)
    }
}

extension ShieldConfiguration {
    func writeJSON(into out: inout [UInt8]) {
        var object = JSONObject(into: &out)
        object.string("backgroundBlurStyle", backgroundBlurStyle?.rawValue, into: &out)
        object.color("backgroundColor", backgroundColor, into: &out)
        object.string("icon", icon?.name, into: &out)
        object.color("primaryButtonBackgroundColor", primaryButtonBackgroundColor, into: &out)
        object.label("primaryButtonLabel", primaryButtonLabel, into: &out)
        object.label("secondaryButtonLabel", secondaryButtonLabel, into: &out)
        object.label("subtitle", subtitle, into: &out)
        object.label("title", title, into: &out)
        object.end(into: &out)
    }
}

/// An object's members, written in the order given (the caller gives them sorted), absent ones left out.
private struct JSONObject {
    private var isEmpty = true

    init(into out: inout [UInt8]) { out.append(UInt8(ascii: "{")) }

    /// A member's key: its value follows.
    mutating func key(_ key: String, into out: inout [UInt8]) {
        if !isEmpty { out.append(UInt8(ascii: ",")) }
        isEmpty = false
        JSONWriter.writeString(key, into: &out)
        out.append(UInt8(ascii: ":"))
    }

    mutating func string(_ key: String, _ value: String?, into out: inout [UInt8]) {
        guard let value else { return }
        self.key(key, into: &out)
        JSONWriter.writeString(value, into: &out)
    }

    /// A color as `ShieldColor` encodes itself: its `hex`, `#RRGGBBAA` in upper case.
    mutating func color(_ key: String, _ color: ShieldColor?, into out: inout [UInt8]) {
        guard let color else { return }
        self.key(key, into: &out)
        Self.writeHex(color, into: &out)
    }

    mutating func label(_ key: String, _ label: ShieldConfiguration.Label?, into out: inout [UInt8]) {
        guard let label else { return }
        self.key(key, into: &out)
        out.append(contentsOf: #"{"color":"#.utf8)
        Self.writeHex(label.color, into: &out)
        out.append(contentsOf: #","text":"#.utf8)
        JSONWriter.writeString(label.text, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    func end(into out: inout [UInt8]) { out.append(UInt8(ascii: "}")) }

    private static func writeHex(_ color: ShieldColor, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        color.appendHex(into: &out)
        out.append(UInt8(ascii: "\""))
    }
}
