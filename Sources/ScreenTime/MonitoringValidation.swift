import Foundation

/// Why `startMonitoring` refuses a request: Apple's `DeviceActivityCenter.MonitoringError`
/// cases, each with the detail needed to say what is wrong and how to fix it.
///
/// The SDK can expose it under Apple's name (`typealias MonitoringError = DeviceActivityMonitoringError`
/// inside its `DeviceActivityCenter`); `catch MonitoringError.intervalTooShort` matches any detail.
/// JSON: Swift's enum form, e.g. `{"intervalTooShort":{"length":600}}`.
public enum DeviceActivityMonitoringError: Error, Hashable, Sendable, Codable, CustomStringConvertible, LocalizedError {
    /// The app and its extensions would monitor more than `maximumActivities` activities at once.
    case excessiveActivities(count: Int)
    /// The schedule's interval is longer than `maximumIntervalLength` (one week).
    case intervalTooLong(length: TimeInterval)
    /// The schedule's interval is shorter than `minimumIntervalLength` (fifteen minutes).
    case intervalTooShort(length: TimeInterval)
    /// The schedule's or an event's date components are invalid, or match no future date.
    case invalidDateComponents(problem: DateComponentsProblem)
    /// The app isn't authorized (FamilyControls) to monitor device activity.
    case unauthorized

    /// Apple: at most twenty activities per app and its extensions.
    public static let maximumActivities = 20
    /// Apple: intervals last at least fifteen minutes.
    public static let minimumIntervalLength: TimeInterval = 15 * 60
    /// Apple: intervals last at most one week.
    public static let maximumIntervalLength: TimeInterval = 7 * 86_400

    /// What is wrong with date components, for `invalidDateComponents`.
    ///
    /// `field` names the offending value: `"intervalStart"`, `"intervalEnd"`, `"warningTime"`
    /// or `"threshold of event 'NAME'"`.
    public enum DateComponentsProblem: Hashable, Sendable, Codable, CustomStringConvertible {
        /// A field is set to a value outside its range (hour 0-23, minute and second 0-59,
        /// weekday 1-7, day 1-31, month 1-12, year 1-9999).
        case outOfRange(field: String, component: String, value: Int, range: ClosedRange<Int>)
        /// A field sets something other than year, month, day, weekday, hour, minute, second.
        case unsupportedComponent(field: String, component: String)
        /// A schedule boundary sets no component at all.
        case noComponents(field: String)
        /// Start and end set different components, so they can't describe one repeating interval.
        case mismatchedComponents(start: [String], end: [String])
        /// Start and end name different time zones: ShieldBus reads a schedule in one zone.
        case mismatchedTimeZones(start: String, end: String)
        /// Start and end match no date from now on.
        case noMatchingDate
        /// A threshold or warning time sets a calendar field (year, month, weekday) instead of a length of time.
        case notADuration(field: String, component: String)
        /// An event's threshold is zero or negative.
        case nonPositiveThreshold(event: DeviceActivityEvent.Name, seconds: TimeInterval)
        /// The warning time is negative.
        case negativeWarningTime(seconds: TimeInterval)

        /// What is wrong and how to fix it.
        public var description: String {
            switch self {
            case let .outOfRange(field, component, value, range):
                return "\(field).\(component) is \(value), outside \(range.lowerBound)-\(range.upperBound); use a value in that range."
            case let .unsupportedComponent(field, component):
                return "\(field) sets \(component), which schedules don't support; use only year, month, day, weekday, hour, minute, second and timeZone (without one, the device's zone in force applies)."
            case let .noComponents(field):
                return "\(field) sets no component; set at least an hour and a minute."
            case let .mismatchedComponents(start, end):
                return "intervalStart sets [\(start.joined(separator: ", "))] but intervalEnd sets [\(end.joined(separator: ", "))]; set the same components on both."
            case let .mismatchedTimeZones(start, end):
                return "intervalStart is in \(start) but intervalEnd in \(end); ShieldBus reads a schedule in one time zone: name the same zone on both, or one of them (the other takes it)."
            case .noMatchingDate:
                return "intervalStart and intervalEnd match no future date; check the year, month, day and weekday."
            case let .notADuration(field, component):
                return "\(field) sets \(component), but it is a length of time; use only day, hour, minute and second."
            case let .nonPositiveThreshold(event, seconds):
                return "the threshold of event '\(event)' is \(describeDuration(seconds)); it must be positive."
            case let .negativeWarningTime(seconds):
                return "warningTime is \(describeDuration(seconds)); it must not be negative."
            }
        }
    }

    /// What is wrong and how to fix it.
    public var description: String {
        switch self {
        case .excessiveActivities(let count):
            return "Monitoring \(count) activities exceeds the limit of \(Self.maximumActivities) for an app and its extensions; stop monitoring an activity (or reuse its name) before starting another."
        case .intervalTooLong(let length):
            return "The schedule's interval lasts \(describeDuration(length)), longer than the maximum of one week; shorten it or split it into several activities."
        case .intervalTooShort(let length):
            return "The schedule's interval lasts \(describeDuration(length)), shorter than the minimum of 15 minutes; lengthen it, or use warningTime to be called earlier."
        case .invalidDateComponents(let problem):
            return "The schedule's date components are invalid: \(problem)"
        case .unauthorized:
            return "The app isn't authorized to monitor device activity; request authorization with FamilyControls' AuthorizationCenter first."
        }
    }

    /// The same text as `description`.
    public var errorDescription: String? { description }
}

extension ScheduleCalendar {
    /// Checks a monitoring request as `DeviceActivityCenter.startMonitoring` does, throwing the
    /// first `DeviceActivityMonitoringError` found.
    ///
    /// Checked in this order: authorization, the number of activities, the date components of
    /// the schedule, its warning time and each event's threshold, that the schedule matches a
    /// date, then the length of its next interval (the one containing `now`, or the next one),
    /// measured in wall-clock time so that a schedule doesn't become invalid on a daylight
    /// saving day.
    ///
    /// - Parameters:
    ///   - schedule: the schedule to monitor.
    ///   - events: the events to watch during it.
    ///   - monitoredActivityCount: how many activities the app would monitor if this request
    ///     succeeded, this one included (replacing a monitored name doesn't add one).
    ///   - authorizationStatus: the app's FamilyControls authorization.
    ///   - now: the instant of the request.
    public func validateMonitoring(
        _ schedule: DeviceActivitySchedule,
        events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:],
        monitoredActivityCount: Int,
        authorizationStatus: AuthorizationStatus,
        now: Date,
        acceptingTimeOnlyWithFullDate: Bool = false
    ) throws {
        typealias Failure = DeviceActivityMonitoringError
        guard authorizationStatus == .approved else { throw Failure.unauthorized }
        guard monitoredActivityCount <= Failure.maximumActivities else {
            throw Failure.excessiveActivities(count: monitoredActivityCount)
        }
        if let problem = Self.componentsProblem(of: schedule, events: events, acceptingTimeOnlyWithFullDate: acceptingTimeOnlyWithFullDate) {
            throw Failure.invalidDateComponents(problem: problem)
        }
        guard let interval = nextInterval(for: schedule, at: now) else {
            throw Failure.invalidDateComponents(problem: .noMatchingDate)
        }
        let length = wallClockLength(of: interval, of: schedule)
        guard length >= Failure.minimumIntervalLength else { throw Failure.intervalTooShort(length: length) }
        guard length <= Failure.maximumIntervalLength else { throw Failure.intervalTooLong(length: length) }
    }

    private static func componentsProblem(
        of schedule: DeviceActivitySchedule,
        events: [DeviceActivityEvent.Name: DeviceActivityEvent],
        acceptingTimeOnlyWithFullDate: Bool
    ) -> DeviceActivityMonitoringError.DateComponentsProblem? {
        for (field, components) in [("intervalStart", schedule.intervalStart), ("intervalEnd", schedule.intervalEnd)] {
            if let component = components.unsupportedComponentNames.first {
                return .unsupportedComponent(field: field, component: component)
            }
            if components.scheduleComponentsSet.isEmpty {
                return .noComponents(field: field)
            }
            for component in components.scheduleComponentsSet {
                let value = component.value(in: components)!
                if !component.validRange.contains(value) {
                    return .outOfRange(field: field, component: component.rawValue, value: value, range: component.validRange)
                }
            }
        }
        if let start = schedule.intervalStart.timeZone, let end = schedule.intervalEnd.timeZone, start.identifier != end.identifier {
            return .mismatchedTimeZones(start: start.identifier, end: end.identifier)
        }
        let start = schedule.intervalStart.scheduleComponentsSet, end = schedule.intervalEnd.scheduleComponentsSet
        // Devices take a time of day with a full date without a word (`mixed-components-never-start`).
        if start != end, !(acceptingTimeOnlyWithFullDate && schedule.mixesTimeOnlyAndDateComponents) {
            return .mismatchedComponents(start: start.map(\.rawValue), end: end.map(\.rawValue))
        }
        if let warningTime = schedule.warningTime {
            if let component = warningTime.nonDurationComponentNames.first {
                return .notADuration(field: "warningTime", component: component)
            }
            if warningTime.durationInSeconds < 0 {
                return .negativeWarningTime(seconds: warningTime.durationInSeconds)
            }
        }
        for (name, event) in events.sorted(by: { $0.key < $1.key }) {
            if let component = event.threshold.nonDurationComponentNames.first {
                return .notADuration(field: "threshold of event '\(name)'", component: component)
            }
            if event.threshold.durationInSeconds <= 0 {
                return .nonPositiveThreshold(event: name, seconds: event.threshold.durationInSeconds)
            }
        }
        return nil
    }
}
