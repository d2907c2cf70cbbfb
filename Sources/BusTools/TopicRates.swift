import BusProtocol
import Foundation

/// Bus time as a tool reads it between events, to stamp what it prints by the bus's clock rather than the machine's:
/// the welcome's or the latest event's bus time, run on at the broker's speed since — 1 on the real clock, the speed
/// on a scaled one, 0 on a virtual or paused one (bus time then moves only with events). A `clock.changed` event
/// (pause, resume, speed, jump) sets both.
public struct BusClockReading {
    private var anchor: BusTime
    private var anchoredAt: Int64
    private var rate: Double

    /// From a welcome, received at `monotonicMilliseconds` (any monotonic wall clock, in milliseconds).
    public init(welcome: Welcome, at monotonicMilliseconds: Int64) {
        anchor = welcome.time
        anchoredAt = monotonicMilliseconds
        switch welcome.clock {
        case "virtual": rate = 0
        case "scaled": rate = welcome.settings["clockSpeed"]?.doubleValue ?? 1
        default: rate = 1
        }
    }

    /// Bus time at `monotonicMilliseconds`.
    public func now(at monotonicMilliseconds: Int64) -> BusTime {
        anchor + BusTime((Double(monotonicMilliseconds - anchoredAt) * rate).rounded(.down))
    }

    /// An event received at `monotonicMilliseconds`: bus time was at least its stamp (never read back).
    public mutating func note(_ envelope: Envelope, at monotonicMilliseconds: Int64) {
        let reading = max(now(at: monotonicMilliseconds), envelope.time)
        if envelope.topic == Topic.clockChanged, envelope.source == "broker" {
            let body = envelope.bodyValue
            if body["paused"]?.boolValue == true { rate = 0 } else if let speed = body["speed"]?.doubleValue { rate = speed } else if body["clock"]?.stringValue == "real" { rate = 1 }
            (anchor, anchoredAt) = (body["time"]?.intValue ?? reading, monotonicMilliseconds)
        } else {
            (anchor, anchoredAt) = (reading, monotonicMilliseconds)
        }
    }
}

/// Events per topic over windows of wall time, for `shieldbus tap --rates`: which topics make the traffic.
public struct TopicRates {
    /// One window's tally: how long it lasted and how many events of each topic it saw.
    public struct Window: Equatable {
        public var seconds: Double
        public var counts: [String: Int]

        public var events: Int { counts.values.reduce(0, +) }

        /// The topics, busiest first (ties by name, so the order is stable).
        public var busiest: [(topic: String, count: Int)] {
            counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) }
        }

        public func perSecond(_ count: Int) -> Double { seconds > 0 ? Double(count) / seconds : 0 }

        /// `10:00:01  23 events/s  state.changed 12 · app.note 11`: the window's end (bus time) on the device's wall
        /// clock, then the rates.
        public func line(endingAt end: Date, timeZone: TimeZone) -> String {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            let c = calendar.dateComponents([.hour, .minute, .second], from: end)
            let clock = String(format: "%02d:%02d:%02d", c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
            let topics = busiest.map { "\($0.topic) \(Self.rate(perSecond($0.count)))" }.joined(separator: " · ")
            return "\(clock)  \(Self.rate(perSecond(events))) events/s" + (topics.isEmpty ? "" : "  \(topics)")
        }

        /// `{"end": ISO 8601, "seconds", "events", "perSecond", "topics": {topic: {"events", "perSecond"}}}`.
        public func json(endingAt end: Date) -> JSONValue {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return .object([
                "end": .string(formatter.string(from: end)), "seconds": .double(Self.rounded(seconds)), "events": .int(Int64(events)),
                "perSecond": .double(Self.rounded(perSecond(events))),
                "topics": .object(counts.mapValues { .object(["events": .int(Int64($0)), "perSecond": .double(Self.rounded(perSecond($0)))]) }),
            ])
        }

        static func rate(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
        }

        static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
    }

    private var counts: [String: Int] = [:]

    public init() {}

    public mutating func count(_ envelope: Envelope) { counts[envelope.topic, default: 0] += 1 }

    /// The window just ended, `seconds` long, and a fresh one begun.
    public mutating func close(after seconds: Double) -> Window {
        defer { counts = [:] }
        return Window(seconds: seconds, counts: counts)
    }
}
