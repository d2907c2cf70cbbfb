import Configuration
import BusProtocol
import DeviceAPI
import Foundation

/// The readable story of a run: what the person did and what the device and plugins did about it, with
/// bus times — and a summary at the end.
public final class Timeline {
    private var formatter: EventFormatter
    private let json: Bool
    private let quiet: Bool
    private var counts: [String: Int] = [:]
    private var events = 0
    private var firstTime: BusTime?
    private var lastTime: BusTime?
    private let output = FileHandle.standardOutput
    /// The bodies lately told, parsed: the OS says the same again and again (the same shield over the same app), and
    /// a shield's body is the longest it tells.
    private var recentBodies = RecentlyRead<JSONValue>(limit: 8)

    public init(timeZone: TimeZone, json: Bool, quiet: Bool) {
        formatter = EventFormatter(settings: ["timeZone": .string(timeZone.identifier)])
        self.json = json
        self.quiet = quiet
    }

    public func record(_ envelope: Envelope) {
        events += 1
        if firstTime == nil { firstTime = envelope.time }
        lastTime = envelope.time
        guard let kind = Self.kind(of: envelope) else { return }
        counts[kind, default: 0] += 1
        // Quiet (explore's days): only the summary's counts, without decoding each body for words no one reads.
        guard !quiet else { return }
        if json {
            output.write(Data((TerminalText.escapedJSON(String(decoding: WireCodec.encodeEnvelope(envelope), as: UTF8.self)) + "\n").utf8))
            return
        }
        let (day, time) = formatter.dayAndTime(ofNext: envelope.time)
        if day != currentDay {
            currentDay = day
            write("── \(day) ─────────────────────────────────────────")
        }
        let body = recentBodies.value(of: envelope.body) { _ in envelope.bodyValue }
        write("\(time.prefix(8))  \(Self.column(kind)) \(Self.text(of: envelope, kind: kind, body: body))")
    }

    private var currentDay: String?

    /// A kind in its column, ten UTF-16 units wide, as `padding(toLength: 10, withPad: " ", startingAt: 0)` writes it
    /// (`kind(of:)`'s kinds are at most ten long), without Foundation's bridging for every line.
    static func column(_ kind: String) -> String {
        let width = kind.utf16.count
        guard width < 10 else { return String(kind.utf16.prefix(10)) ?? kind.padding(toLength: 10, withPad: " ", startingAt: 0) }
        return kind + String(repeating: " ", count: 10 - width)
    }

    private func write(_ line: String) {
        // As bytes, as `write(_: Data)` writes them: a `Data` made from a string's view is a cast and a copy per line.
        try! output.write(contentsOf: Array((TerminalText.escaped(line) + "\n").utf8))
    }

    /// The kind (a short tag) and the words of an event worth showing; nil for the rest.
    public static func describe(_ envelope: Envelope) -> (kind: String, text: String)? {
        guard let kind = kind(of: envelope) else { return nil }
        return (kind, text(of: envelope, kind: kind, body: envelope.bodyValue))
    }

    /// The kind of an event worth showing, nil for the rest: by its topic alone, except a store change (whether it
    /// lifts every shield), so that counting kinds decodes almost no body.
    static func kind(of envelope: Envelope) -> String? {
        let topic = envelope.topic
        if topic == DeviceTopic.settingsChanged { return ShieldedCount(envelope.bodyValue["shield"]).isEmpty ? "UNBLOCK" : "BLOCK" }
        if let kind = kindsByTopic[topic] { return kind }
        if topic.hasPrefix("deviceactivity.") && !topic.hasSuffix(".request") && !topic.hasSuffix(".reply") { return "monitor" }
        return nil
    }

    /// The kinds told by the topic alone: one look-up for every event of a run, where comparing it with each topic in
    /// turn would be a string comparison per known topic. None of them is a `deviceactivity.` topic, whose kind is "monitor".
    private static let kindsByTopic: [String: String] = [
        DeviceTopic.scenarioStep: "person",
        DeviceTopic.shieldShown: "SHIELD",
        DeviceTopic.actionHandled: "button",
        DeviceTopic.shieldDismissed: "dismissed",
        DeviceTopic.appOpened: "open",
        DeviceTopic.appClosed: "close",
        DeviceTopic.webVisited: "web",
        DeviceTopic.notificationPosted: "notify",
        DeviceTopic.notificationTapped: "tap",
        DeviceTopic.urlOpened: "url",
        DeviceTopic.authorizationChanged: "auth",
        DeviceTopic.habitCompleted: "habit",
        DeviceTopic.appAction: "in-app",
        DeviceTopic.osUpdated: "device",
        DeviceTopic.restarted: "device",
        "device.quirk": "quirk",
        Topic.clockChanged: "clock",
        "bus.error": "ERROR",
        "plugin.failed": "plugin",
        "plugin.exited": "plugin",
        "report.insight": "app",
        "app.unlock.started": "app",
        "app.unlock.ended": "app",
    ]

    /// The words for an event of `kind` (`kind(of:)`'s), whose body reads `body`.
    private static func text(of envelope: Envelope, kind: String, body: JSONValue) -> String {
        func string(_ key: String) -> String { body[key]?.stringValue ?? "?" }
        switch kind {
        case "person":
            return string("action")
        case "SHIELD":
            let target = body["target"]?["application"]?["localizedDisplayName"]?.stringValue ?? body["target"]?["webDomain"]?["domain"]?.stringValue ?? "?"
            let title = body["configuration"]?["title"]?["text"]?.stringValue ?? ""
            let by = string("renderedBy")
            let fallback = body["fallbackReason"]?.stringValue.map { ", fallback: \($0)" } ?? ""
            return "\(target) — \"\(title)\" (\(body["entryPoint"]?.stringValue ?? "?"), drawn by \(by)\(fallback))"
        case "button":
            return "\(string("action")) on \(string("target")) → .\(string("response")) (decided by \(string("decidedBy")))"
        case "dismissed":
            return "shield over \(string("target")) (\(string("reason")))"
        case "open", "close":
            return "\(body["application"]?["localizedDisplayName"]?.stringValue ?? "?") (\(string("reason")))"
        case "web":
            return "\(body["webDomain"]?["domain"]?.stringValue ?? "?") in \(body["isPrivate"]?.boolValue == true ? "private " : "")tab \(body["tab"]?.intValue ?? 0)"
        case "BLOCK", "UNBLOCK":
            let count = ShieldedCount(body["shield"])
            let what = count.isEmpty ? "no shields (unblocked)"
                : "\(count.apps) app(s), \(count.categories < 0 ? "all" : String(count.categories)) categor\(count.categories == 1 ? "y" : "ies"), \(count.domains) domain(s) shielded"
            return "store \(string("store")): \(what) — by \(string("writer"))"
        case "monitor":
            let callback = String(envelope.topic.dropFirst("deviceactivity.".count))
            let event = body["event"]?.stringValue.map { " event \($0)" } ?? ""
            return "\(callback): \(string("activity"))\(event)"
        case "notify":
            return "\"\(string("title"))\" — \(string("body")) [\(string("interruptionLevel"))]"
        case "tap":
            return "notification \(string("id"))"
        case "url":
            return string("url")
        case "auth":
            return "FamilyControls \(string("status"))"
        case "habit":
            return string("habit")
        case "in-app":
            return "\(string("action")) in \(string("app"))"
        case "device":
            return envelope.topic == DeviceTopic.osUpdated ? "iOS updated: every token regenerated" : "restarted"
        case "quirk":
            // A callback's fate, or (tokens-change-under-shields) a whole-device change.
            guard body["callback"] != nil else { return "\(string("quirk")): the stores keep the tokens of before (token epoch \(body["tokenEpoch"]?.intValue ?? 0))" }
            return "\(string("callback")) for \(string("activity")): \(string("fate"))"
        case "clock":
            let speed = body["speed"]?.doubleValue.map { " ×\($0 == $0.rounded() ? String(Int($0)) : String($0))" } ?? ""
            let state = "\(string("clock"))\(speed), \(body["paused"]?.boolValue == true ? "paused" : "running")"
            let moved = body["from"]?.intValue.map { " \(Self.span(envelope.time - $0)) forward" } ?? ""
            return "\(string("action"))\(moved) by \(string("by")): \(state)"
        case "ERROR":
            return "\(string("code")): \(string("message"))"
        case "plugin":
            return "\(string("name")) \(envelope.topic.dropFirst("plugin.".count)): \(body["how"]?.stringValue ?? body["reason"]?.stringValue ?? "")"
        default:  // "app"
            return "\(envelope.topic): \(body.jsonText)"
        }
    }

    /// "1h30m", "45s": a span of bus time as a person writes it.
    static func span(_ milliseconds: Int64) -> String {
        let seconds = milliseconds / 1000
        let parts = [(seconds / 86_400, "d"), (seconds % 86_400 / 3600, "h"), (seconds % 3600 / 60, "m"), (seconds % 60, "s")].filter { $0.0 > 0 }
        return parts.isEmpty ? "\(milliseconds)ms" : parts.map { "\($0.0)\($0.1)" }.joined()
    }

    /// What a ManagedSettings store change shields: apps, categories (-1: all) and web domains.
    private struct ShieldedCount {
        let apps: Int
        let categories: Int
        let domains: Int

        init(_ shield: JSONValue?) {
            apps = shield?["applications"]?.arrayValue?.count ?? 0
            domains = shield?["webDomains"]?.arrayValue?.count ?? 0
            categories = shield?["applicationCategories"]?["categories"]?.arrayValue?.count ?? (shield?["applicationCategories"]?["policy"]?.stringValue == "all" ? -1 : 0)
        }

        var isEmpty: Bool { apps == 0 && domains == 0 && categories == 0 }
    }

    public func printSummary(wallMilliseconds: Int64, scenario: Scenario?) {
        var lines: [String] = ["", "Summary"]
        if let scenario { lines.append("  scenario      \(scenario.name) (\(scenario.file))") }
        if let firstTime, let lastTime {
            let (startDay, startTime) = formatter.dayAndTime(firstTime)
            let (endDay, endTime) = formatter.dayAndTime(lastTime)
            lines.append("  bus time      \(startDay) \(startTime.prefix(8)) → \(endDay) \(endTime.prefix(8))")
        }
        lines.append("  wall time     \(String(format: "%.2f", Double(wallMilliseconds) / 1000)) s, \(events) events")
        let order = ["person", "SHIELD", "button", "open", "BLOCK", "UNBLOCK", "monitor", "notify", "web", "ERROR"]
        let names = ["person": "person's steps", "SHIELD": "shields shown", "button": "buttons pressed", "open": "app opens",
                     "BLOCK": "blocks", "UNBLOCK": "unblocks", "monitor": "monitor callbacks", "notify": "notifications",
                     "web": "web visits", "ERROR": "errors"]
        for kind in order where counts[kind] != nil {
            lines.append("  \(names[kind]!.padding(toLength: 18, withPad: " ", startingAt: 0))\(counts[kind]!)")
        }
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
