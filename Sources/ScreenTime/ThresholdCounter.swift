import Foundation

/// A stretch of time during which one app or web domain was frontmost.
///
/// JSON: `{"subject":{"application":"TOKEN","category":"TOKEN"},"start":DATE,"end":DATE}` or with
/// `{"webDomain":"TOKEN","category":"TOKEN"}`; dates follow the encoder's date strategy.
public struct UsageSpan: Hashable, Sendable, Codable {
    /// What was used: an app or a web domain, with its category so that category events count it.
    public enum Subject: Hashable, Sendable, Codable {
        /// An app and its category, if it has one.
        case application(ApplicationToken, category: ActivityCategoryToken?)
        /// A web domain and its category, if it has one.
        case webDomain(WebDomainToken, category: ActivityCategoryToken?)

        private enum CodingKeys: String, CodingKey {
            case application, webDomain, category
        }

        /// Decodes `{"application":...}` or `{"webDomain":...}`, each with an optional `"category"`.
        public init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let category = try container.decodeIfPresent(ActivityCategoryToken.self, forKey: .category)
            if let application = try container.decodeIfPresent(ApplicationToken.self, forKey: .application) {
                self = .application(application, category: category)
            } else if let webDomain = try container.decodeIfPresent(WebDomainToken.self, forKey: .webDomain) {
                self = .webDomain(webDomain, category: category)
            } else {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "A usage subject needs an \"application\" or a \"webDomain\" token."
                ))
            }
        }

        /// Encodes the token under its kind, and the category when there is one.
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case let .application(token, category):
                try container.encode(token, forKey: .application)
                try container.encodeIfPresent(category, forKey: .category)
            case let .webDomain(token, category):
                try container.encode(token, forKey: .webDomain)
                try container.encodeIfPresent(category, forKey: .category)
            }
        }
    }

    /// What was used.
    public let subject: Subject
    /// When it came to the front.
    public let start: Date
    /// When it left the front.
    public let end: Date

    /// A span of use.
    public init(subject: Subject, start: Date, end: Date) {
        self.subject = subject
        self.start = start
        self.end = end
    }
}

/// A threshold callback that became due. JSON: `{"event":"NAME","callback":"eventDidReachThreshold","date":DATE}`.
public struct ThresholdCrossing: Hashable, Sendable, Codable {
    /// Which `DeviceActivityMonitor` method to call.
    public enum Callback: String, Hashable, Sendable, Codable, CaseIterable {
        /// Use came within the schedule's warning time of the threshold.
        case eventWillReachThresholdWarning
        /// Use reached the threshold.
        case eventDidReachThreshold
    }

    /// The event.
    public let event: DeviceActivityEvent.Name
    /// The callback.
    public let callback: Callback
    /// When the callback is due: the instant use reached the level, or the instant monitoring
    /// started if that was later (use counted from before monitoring can't call back in the past).
    public let date: Date

    /// A crossing. Made by `ThresholdCounter`; public for tests and decoding.
    public init(event: DeviceActivityEvent.Name, callback: Callback, date: Date) {
        self.event = event
        self.callback = callback
        self.date = date
    }
}

/// Adds up use toward the events of one monitored activity and says when each event's
/// threshold warning and threshold are due.
///
/// Call `startInterval` when each interval of the schedule starts (that resets every count),
/// then `record` each span of use, in order of start. Each callback fires at most once per
/// interval. Use is clipped to the interval; overlapping spans count once for an event.
/// Before monitoring started, use counts only for events with `includesPastActivity`, and
/// for those from the start of the hour in which the interval starts (as Apple does).
public struct ThresholdCounter: Sendable {
    /// The events, by name.
    public let events: [DeviceActivityEvent.Name: DeviceActivityEvent]
    /// The schedule's warning time; nil or zero for no warnings.
    public let warningTime: DateComponents?
    /// The calendar, for the start of the hour that `includesPastActivity` reaches back to.
    public let calendar: ScheduleCalendar
    /// The interval being counted; nil before the first `startInterval`.
    public private(set) var interval: DateInterval?
    private var monitoringStart = Date.distantPast
    private var progress: [DeviceActivityEvent.Name: Progress] = [:]

    private struct Progress {
        var windowStart: Date
        var countedUntil: Date
        var usage: TimeInterval = 0
        var warned = false
        var reached = false
    }

    /// A counter for these events of one activity.
    public init(events: [DeviceActivityEvent.Name: DeviceActivityEvent], warningTime: DateComponents?, calendar: ScheduleCalendar) {
        self.events = events
        self.warningTime = warningTime
        self.calendar = calendar
    }

    /// Starts counting a new interval from zero.
    ///
    /// - Parameters:
    ///   - interval: the schedule's interval.
    ///   - monitoringStart: when monitoring of the activity started (for later intervals, any
    ///     instant up to the interval's start).
    ///   - pastUsage: use before `monitoringStart`, in order, for events with `includesPastActivity`.
    /// - Returns: the callbacks already due, in order: warnings clamped to the interval's start
    ///   (warning time at least the threshold), and crossings within `pastUsage`.
    public mutating func startInterval(_ interval: DateInterval, monitoringStart: Date, pastUsage: [UsageSpan] = []) -> [ThresholdCrossing] {
        self.interval = interval
        self.monitoringStart = monitoringStart
        let pastActivityStart = calendar.startOfHour(containing: interval.start)
        progress = events.mapValues { event in
            let windowStart = event.includesPastActivity ? pastActivityStart : max(interval.start, monitoringStart)
            return Progress(windowStart: windowStart, countedUntil: windowStart)
        }
        var crossings: [ThresholdCrossing] = []
        for name in progress.keys where warningLevel(of: name) <= 0 {
            // Apple clamps a warning longer than the threshold to the interval's start.
            progress[name]!.warned = true
            crossings.append(ThresholdCrossing(event: name, callback: .eventWillReachThresholdWarning, date: max(interval.start, monitoringStart)))
        }
        return Self.ordered(crossings + pastUsage.flatMap { record($0) })
    }

    /// Moves the end of the interval being counted, its count kept: after the device's zone changes, the OS reads the
    /// running interval's end in the new zone and counts on (Apple: the zone at the interval's start serves "for the
    /// entirety of the interval").
    public mutating func moveEnd(to end: Date) {
        guard let interval, end >= interval.start else { return }
        self.interval = DateInterval(start: interval.start, end: end)
    }

    /// Counts a span of use and returns the callbacks it makes due, in order.
    ///
    /// Spans outside the interval (or before any interval) count nothing.
    public mutating func record(_ span: UsageSpan) -> [ThresholdCrossing] {
        guard let interval else { return [] }
        var crossings: [ThresholdCrossing] = []
        for (name, event) in events where event.includes(span.subject) {
            var state = progress[name]!
            let start = max(span.start, state.countedUntil)
            let end = min(span.end, interval.end)
            guard end > start else { continue }
            let before = state.usage
            state.usage += end.timeIntervalSince(start)
            state.countedUntil = end
            let warningLevel = warningLevel(of: name)
            if !state.warned, state.usage >= warningLevel {
                state.warned = true
                crossings.append(crossing(name, .eventWillReachThresholdWarning, at: start.addingTimeInterval(warningLevel - before)))
            }
            let threshold = event.threshold.durationInSeconds
            if !state.reached, state.usage >= threshold {
                state.reached = true
                crossings.append(crossing(name, .eventDidReachThreshold, at: start.addingTimeInterval(threshold - before)))
            }
            progress[name] = state
        }
        return Self.ordered(crossings)
    }

    /// The use counted so far in this interval toward an event, in seconds.
    public func usage(of event: DeviceActivityEvent.Name) -> TimeInterval {
        progress[event]?.usage ?? 0
    }

    /// The use at which an event's warning is due; infinite when there is no warning time.
    private func warningLevel(of name: DeviceActivityEvent.Name) -> TimeInterval {
        let warning = warningTime?.durationInSeconds ?? 0
        guard warning > 0, let event = events[name] else { return .infinity }
        return event.threshold.durationInSeconds - warning
    }

    private func crossing(_ event: DeviceActivityEvent.Name, _ callback: ThresholdCrossing.Callback, at date: Date) -> ThresholdCrossing {
        ThresholdCrossing(event: event, callback: callback, date: max(date, monitoringStart))
    }

    /// By date, a warning before its threshold, then by event name: a deterministic order.
    private static func ordered(_ crossings: [ThresholdCrossing]) -> [ThresholdCrossing] {
        crossings.sorted {
            ($0.date, $0.callback == .eventDidReachThreshold ? 1 : 0, $0.event.rawValue)
                < ($1.date, $1.callback == .eventDidReachThreshold ? 1 : 0, $1.event.rawValue)
        }
    }
}
