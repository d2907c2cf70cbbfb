// BusTools: what the shieldbus tools and the Studio share — connecting to a running broker, the person's input
// requests, and the renderings of events for people (tap lines, the day's timeline).
import BusClient
import BusProtocol
import Foundation
import DeviceAPI

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
        let (day, clock) = dayAndClock(date(busTime: time))
        return (day, clock + "." + Self.padded(Int(((time % 1000) + 1000) % 1000), to: 3))
    }

    /// `dayAndTime(time)`, for times that come in order (a run's events): the day and the clock to the second are
    /// kept from the last call and reused while the times stay in that second, where a run's events mostly fall.
    public mutating func dayAndTime(ofNext time: BusTime) -> (day: String, time: String) {
        // A time before 1970 is read as `dayAndTime` reads it: its second is not the floor of its milliseconds.
        guard time >= 0 else { return dayAndTime(time) }
        let second = time / 1000
        if lastSecond?.second != second {
            let (day, clock) = dayAndClock(Date(timeIntervalSince1970: Double(second)))
            lastSecond = (second, day, clock)
        }
        return (lastSecond!.day, lastSecond!.clock + "." + Self.padded(Int(time % 1000), to: 3))
    }

    /// The second `dayAndTime(ofNext:)` last read, with its day and its clock ("07:00:00").
    private var lastSecond: (second: BusTime, day: String, clock: String)?

    /// "2026-11-23" and "07:00:00" (to the second) for `date`, as `String(format:)` writes them with `%04d` and `%02d`.
    private func dayAndClock(_ date: Date) -> (day: String, clock: String) {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return (Self.padded(c.year!, to: 4) + "-" + Self.padded(c.month!, to: 2) + "-" + Self.padded(c.day!, to: 2),
                Self.padded(c.hour!, to: 2) + ":" + Self.padded(c.minute!, to: 2) + ":" + Self.padded(c.second!, to: 2))
    }

    /// `value` as `String(format: "%0<width>d")` writes it (a minus sign counts in the width), without reading a format
    /// and casting to `CVarArg` at run time for every line of a run's timeline.
    static func padded(_ value: Int, to width: Int) -> String {
        let digits = String(value.magnitude)
        let sign = value < 0 ? "-" : ""
        let zeros = width - sign.count - digits.count
        return zeros > 0 ? sign + String(repeating: "0", count: zeros) + digits : sign + digits
    }

    /// One line per event; a day header line first whenever the day changes.
    public mutating func lines(for envelope: Envelope) -> [String] {
        let (day, time) = dayAndTime(ofNext: envelope.time)
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
