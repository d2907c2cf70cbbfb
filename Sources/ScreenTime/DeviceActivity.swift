import Foundation

/// A calendar schedule for monitoring an activity (DeviceActivity's `DeviceActivitySchedule`).
///
/// Start and end are matched in the device's time zone in force (see `ScheduleCalendar`), or in the zone their
/// components name (`DateComponents.timeZone`), which a change of the device's zone leaves alone. An end that
/// comes earlier than the start falls on the next day (or the next matching weekday, month...).
///
/// JSON: `{"intervalStart":{"hour":22,"minute":0},"intervalEnd":{"hour":6,"minute":0},"repeats":true,"warningTime":{"minute":5}}`
/// (DateComponents in the compact form: only the fields that are set, a zone as its IANA name, `"timeZone":"Asia/Tokyo"`;
/// `warningTime` left out when nil).
public struct DeviceActivitySchedule: Hashable, Sendable, Codable {
    /// When each interval starts.
    public let intervalStart: DateComponents
    /// When each interval ends.
    public let intervalEnd: DateComponents
    /// Whether the schedule recurs. If false, monitoring stops after the first interval ends.
    public let repeats: Bool
    /// How long before an interval starts or ends, or before an event reaches its threshold,
    /// the extension is warned (`intervalWillStartWarning`, `intervalWillEndWarning`,
    /// `eventWillReachThresholdWarning`).
    public let warningTime: DateComponents?

    /// A schedule, as Apple's initializer.
    public init(intervalStart: DateComponents, intervalEnd: DateComponents, repeats: Bool, warningTime: DateComponents? = nil) {
        self.intervalStart = intervalStart
        self.intervalEnd = intervalEnd
        self.repeats = repeats
        self.warningTime = warningTime
    }

    /// The zone the schedule's wall times are read in when its components name one (the start's, else the end's); nil:
    /// the device's zone in force.
    public var timeZone: TimeZone? {
        intervalStart.timeZone ?? intervalEnd.timeZone
    }

    /// The warning time in seconds; 0 when there is none.
    var warningSeconds: TimeInterval {
        max(warningTime?.durationInSeconds ?? 0, 0)
    }

    /// Whether one end of the schedule names a date (year, month or day) and the other only a time of day: the
    /// schedules whose `intervalDidStart` developers report never comes (`mixed-components-never-start`).
    public var mixesTimeOnlyAndDateComponents: Bool {
        func namesADate(_ components: DateComponents) -> Bool { components.year != nil || components.month != nil || components.day != nil }
        return namesADate(intervalStart) != namesADate(intervalEnd)
    }

    /// When `intervalWillStartWarning` is due for an interval of this schedule: its start
    /// minus the warning time. Nil without a (positive) warning time.
    public func intervalWillStartWarning(for interval: DateInterval) -> Date? {
        warningSeconds > 0 ? interval.start.addingTimeInterval(-warningSeconds) : nil
    }

    /// When `intervalWillEndWarning` is due for an interval of this schedule: its end minus
    /// the warning time, but never before the interval starts (a warning longer than the
    /// interval can't warn of the end before there is an interval). Nil without a warning time.
    public func intervalWillEndWarning(for interval: DateInterval) -> Date? {
        warningSeconds > 0 ? max(interval.end.addingTimeInterval(-warningSeconds), interval.start) : nil
    }

    private enum CodingKeys: String, CodingKey {
        case intervalStart, intervalEnd, repeats, warningTime
    }

    /// Decodes the compact form.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            intervalStart: try container.decodeCompact(forKey: .intervalStart),
            intervalEnd: try container.decodeCompact(forKey: .intervalEnd),
            repeats: try container.decode(Bool.self, forKey: .repeats),
            warningTime: try container.decodeCompactIfPresent(forKey: .warningTime)
        )
    }

    /// Encodes the compact form.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeCompact(intervalStart, forKey: .intervalStart)
        try container.encodeCompact(intervalEnd, forKey: .intervalEnd)
        try container.encode(repeats, forKey: .repeats)
        if let warningTime { try container.encodeCompact(warningTime, forKey: .warningTime) }
    }
}

/// Usage to watch during an activity's intervals (DeviceActivity's `DeviceActivityEvent`).
///
/// The event reaches its threshold when the time its apps, categories and web domains were
/// frontmost, added up within one interval, reaches `threshold`.
///
/// JSON: `{"applications":[...],"categories":[...],"webDomains":[...],"threshold":{"minute":30},"includesPastActivity":false}`.
public struct DeviceActivityEvent: Hashable, Sendable, Codable {
    /// Apps whose use counts.
    public let applications: Set<ApplicationToken>
    /// Categories whose apps' and web domains' use counts.
    public let categories: Set<ActivityCategoryToken>
    /// Web domains whose use counts.
    public let webDomains: Set<WebDomainToken>
    /// How much use (a length of time: day, hour, minute, second) reaches the event.
    public let threshold: DateComponents
    /// Whether use earlier in the interval, before monitoring started, counts too.
    ///
    /// Apple: when true and the interval doesn't start on a round hour, use from the start
    /// of that hour counts as well.
    public let includesPastActivity: Bool

    /// An event, as Apple's initializer.
    public init(
        applications: Set<ApplicationToken> = [],
        categories: Set<ActivityCategoryToken> = [],
        webDomains: Set<WebDomainToken> = [],
        threshold: DateComponents,
        includesPastActivity: Bool = false
    ) {
        self.applications = applications
        self.categories = categories
        self.webDomains = webDomains
        self.threshold = threshold
        self.includesPastActivity = includesPastActivity
    }

    /// Whether the event counts all use: true when it names no app, category or web domain.
    public var includesAllActivity: Bool {
        applications.isEmpty && categories.isEmpty && webDomains.isEmpty
    }

    /// Whether use of this app or web domain counts toward the event.
    public func includes(_ subject: UsageSpan.Subject) -> Bool {
        if includesAllActivity { return true }
        switch subject {
        case .application(let token, let category):
            return applications.contains(token) || category.map(categories.contains) == true
        case .webDomain(let token, let category):
            return webDomains.contains(token) || category.map(categories.contains) == true
        }
    }

    private enum CodingKeys: String, CodingKey {
        case applications, categories, webDomains, threshold, includesPastActivity
    }

    /// Decodes the event; missing sets are empty, a missing `includesPastActivity` is false.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            applications: try container.decodeIfPresent(Set<ApplicationToken>.self, forKey: .applications) ?? [],
            categories: try container.decodeIfPresent(Set<ActivityCategoryToken>.self, forKey: .categories) ?? [],
            webDomains: try container.decodeIfPresent(Set<WebDomainToken>.self, forKey: .webDomains) ?? [],
            threshold: try container.decodeCompact(forKey: .threshold),
            includesPastActivity: try container.decodeIfPresent(Bool.self, forKey: .includesPastActivity) ?? false
        )
    }

    /// Encodes every field, sets sorted, the threshold in the compact form.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeSorted(applications, forKey: .applications)
        try container.encodeSorted(categories, forKey: .categories)
        try container.encodeSorted(webDomains, forKey: .webDomains)
        try container.encodeCompact(threshold, forKey: .threshold)
        try container.encode(includesPastActivity, forKey: .includesPastActivity)
    }
}
