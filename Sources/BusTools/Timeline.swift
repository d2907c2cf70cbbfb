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

    public init(timeZone: TimeZone, json: Bool, quiet: Bool) {
        formatter = EventFormatter(settings: ["timeZone": .string(timeZone.identifier)])
        self.json = json
        self.quiet = quiet
    }

    public func record(_ envelope: Envelope) {
        events += 1
        if firstTime == nil { firstTime = envelope.time }
        lastTime = envelope.time
        guard let line = Self.describe(envelope) else { return }
        counts[line.kind, default: 0] += 1
        guard !quiet else { return }
        if json {
            output.write(Data((TerminalText.escapedJSON(String(decoding: WireCodec.encodeEnvelope(envelope), as: UTF8.self)) + "\n").utf8))
            return
        }
        let (day, time) = formatter.dayAndTime(envelope.time)
        if day != currentDay {
            currentDay = day
            write("── \(day) ─────────────────────────────────────────")
        }
        write("\(time.prefix(8))  \(line.kind.padding(toLength: 10, withPad: " ", startingAt: 0)) \(line.text)")
    }

    private var currentDay: String?

    private func write(_ line: String) {
        output.write(Data((TerminalText.escaped(line) + "\n").utf8))
    }

    /// The kind (a short tag) and the words of an event worth showing; nil for the rest.
    public static func describe(_ envelope: Envelope) -> (kind: String, text: String)? {
        let body = envelope.bodyValue
        func string(_ key: String) -> String { body[key]?.stringValue ?? "?" }
        switch envelope.topic {
        case DeviceTopic.scenarioStep:
            return ("person", string("action"))
        case DeviceTopic.shieldShown:
            let target = body["target"]?["application"]?["localizedDisplayName"]?.stringValue ?? body["target"]?["webDomain"]?["domain"]?.stringValue ?? "?"
            let title = body["configuration"]?["title"]?["text"]?.stringValue ?? ""
            let by = string("renderedBy")
            let fallback = body["fallbackReason"]?.stringValue.map { ", fallback: \($0)" } ?? ""
            return ("SHIELD", "\(target) — \"\(title)\" (\(body["entryPoint"]?.stringValue ?? "?"), drawn by \(by)\(fallback))")
        case DeviceTopic.actionHandled:
            return ("button", "\(string("action")) on \(string("target")) → .\(string("response")) (decided by \(string("decidedBy")))")
        case DeviceTopic.shieldDismissed:
            return ("dismissed", "shield over \(string("target")) (\(string("reason")))")
        case DeviceTopic.appOpened:
            return ("open", "\(body["application"]?["localizedDisplayName"]?.stringValue ?? "?") (\(string("reason")))")
        case DeviceTopic.appClosed:
            return ("close", "\(body["application"]?["localizedDisplayName"]?.stringValue ?? "?") (\(string("reason")))")
        case DeviceTopic.webVisited:
            return ("web", "\(body["webDomain"]?["domain"]?.stringValue ?? "?") in \(body["isPrivate"]?.boolValue == true ? "private " : "")tab \(body["tab"]?.intValue ?? 0)")
        case DeviceTopic.settingsChanged:
            let shield = body["shield"]
            let apps = shield?["applications"]?.arrayValue?.count ?? 0
            let domains = shield?["webDomains"]?.arrayValue?.count ?? 0
            let categories = shield?["applicationCategories"]?["categories"]?.arrayValue?.count ?? (shield?["applicationCategories"]?["policy"]?.stringValue == "all" ? -1 : 0)
            let empty = apps == 0 && domains == 0 && categories == 0
            let what = empty ? "no shields (unblocked)" : "\(apps) app(s), \(categories < 0 ? "all" : String(categories)) categor\(categories == 1 ? "y" : "ies"), \(domains) domain(s) shielded"
            return (empty ? "UNBLOCK" : "BLOCK", "store \(string("store")): \(what) — by \(string("writer"))")
        case _ where envelope.topic.hasPrefix("deviceactivity.") && !envelope.topic.hasSuffix(".request") && !envelope.topic.hasSuffix(".reply"):
            let callback = String(envelope.topic.dropFirst("deviceactivity.".count))
            let event = body["event"]?.stringValue.map { " event \($0)" } ?? ""
            return ("monitor", "\(callback): \(string("activity"))\(event)")
        case DeviceTopic.notificationPosted:
            return ("notify", "\"\(string("title"))\" — \(string("body")) [\(string("interruptionLevel"))]")
        case DeviceTopic.notificationTapped:
            return ("tap", "notification \(string("id"))")
        case DeviceTopic.urlOpened:
            return ("url", string("url"))
        case DeviceTopic.authorizationChanged:
            return ("auth", "FamilyControls \(string("status"))")
        case DeviceTopic.habitCompleted:
            return ("habit", string("habit"))
        case DeviceTopic.osUpdated:
            return ("device", "iOS updated: every token regenerated")
        case DeviceTopic.restarted:
            return ("device", "restarted")
        case "device.quirk":
            return ("quirk", "\(string("callback")) for \(string("activity")): \(string("fate"))")
        case "bus.error":
            return ("ERROR", "\(string("code")): \(string("message"))")
        case "plugin.failed", "plugin.exited":
            return ("plugin", "\(string("name")) \(envelope.topic.dropFirst("plugin.".count)): \(body["how"]?.stringValue ?? body["reason"]?.stringValue ?? "")")
        case "report.insight", "app.unlock.started", "app.unlock.ended":
            return ("app", "\(envelope.topic): \(body.jsonText)")
        default:
            return nil
        }
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
