// BusTools: what the shieldbus tools and the Studio share — connecting to a running broker, the person's input
// requests, and the renderings of events for people (tap lines, the day's timeline).
import BusClient
import BusProtocol
import Foundation

/// A short-lived client of a running broker, for the tools (tap, send, replay, status, the Studio).
public enum BusTool {
    /// Connects to the broker on `runtimeDir` with a hello, or explains why not.
    public static func connect(runtimeDir: String?, name: String, role: Role, subscriptions: [String]) throws -> BusConnection {
        let runtime = RuntimeDirectory.resolve(runtimeDir)
        try runtime.checkBroker()
        let connection = try BusConnection(endpoint: runtime.brokerEndpoint(),
                                           hello: Hello(name: name, role: role, subscriptions: subscriptions, pid: Int64(getpid())),
                                           runtime: runtime)
        try connection.connect(timeoutMilliseconds: 3000)
        return connection
    }

    /// A client name no other session has: the tool, the process and a count of this process's names — a
    /// long-running process (the Studio) opens a session per action, and the broker may read a new session's hello
    /// before the last one's bye, so a name per process would be refused as taken.
    public static func name(_ tool: String) -> String {
        namesLock.lock()
        defer { namesLock.unlock() }
        namesGiven += 1
        return "\(tool)-\(getpid())-\(namesGiven)"
    }

    private static let namesLock = NSLock()
    nonisolated(unsafe) private static var namesGiven = 0
}

/// Renders events for people: bus time, sequence number, topic, source and a compact body.
public struct EventFormatter {
    public let timeZone: TimeZone
    public let timeZoneName: String
    public var maximumBodyCharacters = 160
    private var lastDay: String?

    /// Made once: a calendar costs more to make than to use, and a journal has many events.
    private let calendar: Calendar

    public init(settings: JSONValue?) {
        timeZoneName = settings?["timeZone"]?.stringValue ?? "UTC"
        timeZone = TimeZone(identifier: timeZoneName) ?? TimeZone(identifier: "UTC")!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// "2026-11-23" and "07:00:00.250" for a bus time.
    public func dayAndTime(_ time: BusTime) -> (day: String, time: String) {
        let date = Date(timeIntervalSince1970: Double(time) / 1000)
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let millis = Int(((time % 1000) + 1000) % 1000)
        let day = String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
        return (day, String(format: "%02d:%02d:%02d.%03d", c.hour!, c.minute!, c.second!, millis))
    }

    /// One line per event; a day header line first whenever the day changes.
    public mutating func lines(for envelope: Envelope) -> [String] {
        let (day, time) = dayAndTime(envelope.time)
        var lines: [String] = []
        if day != lastDay {
            lines.append("── \(day) (\(timeZoneName)) ──")
            lastDay = day
        }
        let seq = "#\(envelope.seq)".padding(toLength: 7, withPad: " ", startingAt: 0)
        let topic = envelope.topic.padding(toLength: max(30, envelope.topic.count), withPad: " ", startingAt: 0)
        let source = envelope.source.padding(toLength: max(12, envelope.source.count), withPad: " ", startingAt: 0)
        var line = "\(time)  \(seq) \(topic) \(source) \(body(of: envelope))"
        if let corr = envelope.corr { line += "  corr=\(corr)" }
        lines.append(line)
        return lines
    }

    /// The body as compact JSON, cut at `maximumBodyCharacters`.
    public func body(of envelope: Envelope) -> String {
        let body = envelope.bodyValue.jsonText
        return body.count > maximumBodyCharacters ? String(body.prefix(maximumBodyCharacters - 1)) + "…" : body
    }

    /// One line from a template: `{day}`, `{time}`, `{seq}`, `{topic}`, `{source}`, `{corr}`, `{body}` are replaced.
    public func line(for envelope: Envelope, template: String) -> String {
        let (day, time) = dayAndTime(envelope.time)
        let fields = ["day": day, "time": time, "seq": String(envelope.seq), "topic": envelope.topic, "source": envelope.source,
                      "corr": envelope.corr ?? "", "body": body(of: envelope)]
        var line = template
        for (name, value) in fields { line = line.replacingOccurrences(of: "{\(name)}", with: value) }
        return line
    }

    /// The fields a template may use.
    public static let templateFields = ["day", "time", "seq", "topic", "source", "corr", "body"]

    /// An ANSI color per namespace: errors red, shields magenta, DeviceActivity cyan, the person's actions green.
    public static func color(of topic: String) -> String? {
        if topic == "bus.error" || topic.hasSuffix(".failed") { return "31" }
        if topic.hasPrefix("shield.") { return "35" }
        if topic.hasPrefix("deviceactivity.") { return "36" }
        if topic.hasPrefix("activity.") || topic.hasPrefix("input.") { return "32" }
        if topic.hasPrefix("managedsettings.") { return "33" }
        return nil
    }
}
