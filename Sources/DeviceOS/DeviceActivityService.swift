import Broker
import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import ScreenTime

/// DeviceActivity: the monitored activities, their schedules and events, and the monitor's callbacks.
///
/// Schedules persist across restarts. Callbacks go out as `deviceactivity.*` events at their instants —
/// unless the ios-realistic quirks make them late, early, rounded to the minute, or lost. On a device with several
/// products, each app's activities are its own: its plugins list, stop and hear only those, 20 at most.
///
/// Why one file past 500 lines: registration, planning, the quirks' fates, threshold counting and persistence all
/// act on the same private `Monitor` records and their timers, which no other part of the device may touch.
final class DeviceActivityService {
    /// A monitored activity as persisted.
    struct Registration: Codable {
        var activity: DeviceActivityName
        var schedule: DeviceActivitySchedule
        var events: [DeviceActivityEvent.Name: DeviceActivityEvent]
        var registeredAt: Date
        /// The start of the interval whose `intervalDidStart` was delivered and whose end is still ahead.
        var startedInterval: Date?
        /// The start of an interval whose `intervalDidStart` waits for its whole minute (`whole-minute-callbacks`): a
        /// broker stopped meanwhile announces it after the reload (else the reserve's re-check would be lost).
        var pendingStart: Date?
        /// The product whose app registered it (nil on a device with one product).
        var product: String?
        /// The threshold callbacks delivered in that interval (nil in state saved before they were kept): when a
        /// reload replays the interval's use, these are not delivered again — iOS calls each once per interval.
        var deliveredCrossings: [ThresholdCrossing]?

        func hasDelivered(_ crossing: ThresholdCrossing) -> Bool {
            deliveredCrossings?.contains { $0.event == crossing.event && $0.callback == crossing.callback } ?? false
        }
    }

    private final class Monitor {
        var registration: Registration {
            didSet {
                savedForm = nil
                // The reply names only the activity and its events: most changes (an interval started, a crossing
                // delivered) leave it as it was, and the monitor asks for it right after such a callback.
                if registration.activity != oldValue.activity || registration.events != oldValue.events { eventsReplyForm = nil }
            }
        }
        /// The registration as `persist` writes it, kept until it changes: a save rewrites every registration, and
        /// most saves change one of them, and encoding them all again at every save shows in the broker's CPU.
        private var savedForm: [UInt8]?
        var persistedJSON: [UInt8] {
            if let savedForm { return savedForm }
            let encoded = registration.json
            savedForm = encoded
            return encoded
        }
        /// The `deviceactivity.events.reply` its product's plugins get, kept until the registration changes: they ask
        /// at every callback.
        private var eventsReplyForm: [UInt8]?
        var eventsReplyJSON: [UInt8] {
            if let eventsReplyForm { return eventsReplyForm }
            let reply = MonitoredEvents(activity: registration.activity, events: registration.events)
            let encoded = reply.successReplyJSON ?? DeviceAPICoding.encode(DeviceReply.success(reply))
            eventsReplyForm = encoded
            return encoded
        }
        var counter: ThresholdCounter
        var interval: DateInterval?
        var timers: [UInt64] = []
        /// Callbacks already due, waiting for their whole minute, each with the start of the interval it was due in: a
        /// clock or zone change replans what is ahead, not these.
        var deliveries: [UInt64: Date?] = [:]
        /// The next interval start is announced by a quirk-moved timer (or never), not when counting starts.
        var suppressStart = false
        /// Its schedule has no further interval: it is no longer monitored, but a callback of its last interval that
        /// waits for its whole minute still goes out.
        var isFinished = false
        /// The thresholds reached in its last ended interval, for `thresholds-redelivered-after-midnight` (in memory:
        /// a restart forgets them, as it does on the devices that show it).
        var endedIntervalThresholds: [ThresholdCrossing] = []
        init(_ registration: Registration, calendar: ScheduleCalendar, warningTime: DateComponents?) {
            self.registration = registration
            counter = ThresholdCounter(events: registration.events, warningTime: warningTime, calendar: calendar)
        }
    }

    /// The monitors' table's first insertion makes its storage's type metadata, for which the runtime looks up the
    /// key's `Hashable` conformance by a scan of the program's conformance records: made once in explore's broker
    /// template (`DeviceOSWarmUp`), the runtime's caches of them are in every day forked from it.
    static func warmUpMonitorTable() {
        BrokerWarmUp.reserve([DeviceActivityName: Monitor].self)
    }

    static let registrationsKey = "deviceactivity.registrations"
    /// The device day of the last pickup, kept under `thresholds-at-first-pickup` only.
    static let lastPickupKey = "deviceactivity.lastPickupDay"

    /// Callbacks further ahead than this are unreliable on devices (the Habit Doom write-up, lesson 2).
    static let reliableHorizon: TimeInterval = 45 * 60

    private unowned let host: any DeviceHost
    private let directory: DeviceDirectory
    private var settings: DeviceSettings { directory.settings }
    private let clock: DeviceClock
    private let random: DeviceRandom
    private let usage: any MeteredUse
    private let authorization: any AuthorizationStatuses
    private var monitors: [DeviceActivityName: Monitor] = [:]
    private var throttle = CallbackThrottle()
    /// Activities the app monitors for other purposes: they count toward the limit, their callbacks are not ours to play.
    private var otherActivities: Int
    private var thresholdTimer: UInt64?
    private var running = false
    /// The start of the device day of the person's last pickup (`thresholds-at-first-pickup`).
    private var lastPickupDay: Date?

    /// The activities as the device's state holds them, timed on `clock` (the device's, which the person sets),
    /// counting `usage`, with the quirks of the device's fidelity drawn from `random`.
    init(host: any DeviceHost, directory: DeviceDirectory, clock: DeviceClock, random: DeviceRandom, usage: any MeteredUse,
         authorization: any AuthorizationStatuses) throws {
        self.host = host
        self.directory = directory
        self.clock = clock
        self.random = random
        self.usage = usage
        self.authorization = authorization
        let registrations = try Registration.load(from: host.state, key: Self.registrationsKey)
        otherActivities = try host.state.load(Int.self, key: "deviceactivity.otherActivities") ?? 0
        lastPickupDay = try host.state.load(Date.self, key: Self.lastPickupKey)
        for registration in registrations {
            monitors[registration.activity] = Monitor(registration, calendar: clock.calendar, warningTime: registration.schedule.warningTime)
        }
    }

    /// Schedule math in the time zone in force.
    private var calendar: ScheduleCalendar { clock.calendar }
    /// The device clock now (what `Date()` shows on the phone).
    private var wallNow: Date { clock.wallTime(at: host.now) }

    var activityNames: [DeviceActivityName] { monitors.keys.sorted { $0.rawValue < $1.rawValue } }

    /// Every monitored activity with its schedule, by name.
    var schedules: [MonitoredSchedule] {
        activityNames.map { name in
            let registration = monitors[name]!.registration
            return MonitoredSchedule(activity: name, schedule: registration.schedule, registeredAt: registration.registeredAt)
        }
    }

    // MARK: Requests

    func handle(_ envelope: Envelope) {
        let product = owner(of: envelope.source)
        // Found only for the requests that name the app's own activities: most are starts and event look-ups.
        var own: [DeviceActivityName] { activityNames.filter { monitors[$0]!.registration.product == product } }
        switch envelope.topic {
        case DeviceTopic.startMonitoringRequest:
            guard let request = (try? JSONValue(parsing: envelope.body)).flatMap(StartMonitoring.init(body:))
                    ?? host.decode(StartMonitoring.self, from: envelope) else { return }
            if let other = monitors[request.activity]?.registration.product, other != product {
                return host.fail(envelope, code: "activity-of-another-app", "the activity '\(request.activity.rawValue)' is \(other)'s: an app names its activities apart from other apps'")
            }
            do {
                try startMonitoring(request, by: envelope.source)
                host.replySuccess(to: envelope)
            } catch let error as DeviceActivityMonitoringError {
                host.reply(to: envelope, DeviceReply<NoValue>.failure(DeviceError(code: Self.code(of: error), message: error.description)))
            } catch {
                host.fail(envelope, code: "internal", "\(error)")
            }
        case DeviceTopic.stopMonitoringRequest:
            guard let request = host.decode(StopMonitoring.self, from: envelope) else { return }
            stopMonitoring(request.activities.isEmpty ? own : request.activities.filter(own.contains))
            host.replySuccess(to: envelope)
        case DeviceTopic.activitiesRequest:
            host.reply(to: envelope, bodyJSON: MonitoredActivities(activities: own).successReplyJSON)
        case DeviceTopic.eventsRequest:
            guard let request = (try? JSONValue(parsing: envelope.body)).flatMap(MonitoredEvents.init(body:))
                    ?? host.decode(MonitoredEvents.self, from: envelope) else { return }
            if let monitor = monitors[request.activity], monitor.registration.product == product {
                host.reply(to: envelope, bodyJSON: monitor.eventsReplyJSON)
            } else {
                let none = MonitoredEvents(activity: request.activity)
                host.reply(to: envelope, bodyJSON: none.successReplyJSON ?? DeviceAPICoding.encode(DeviceReply.success(none)))
            }
        default:
            break
        }
    }

    static func code(of error: DeviceActivityMonitoringError) -> String {
        switch error {
        case .excessiveActivities: return "excessive-activities"
        case .intervalTooLong: return "interval-too-long"
        case .intervalTooShort: return "interval-too-short"
        case .invalidDateComponents: return "invalid-date-components"
        case .unauthorized: return "unauthorized"
        }
    }

    /// The product whose activities `plugin` sees (nil on a device with one product: every activity).
    private func owner(of plugin: String) -> String? {
        directory.audience(of: plugin) == nil ? nil : directory.product(of: plugin)?.name
    }

    /// Starts monitoring for `requester`'s app (the limit of activities is per app, as is the authorization).
    func startMonitoring(_ request: StartMonitoring, by requester: String) throws {
        let existing = monitors[request.activity]
        let now = host.now
        let product = owner(of: requester)
        let monitoredCount = monitors.values.filter { $0.registration.product == product }.count
        // Judged on the device clock, which the schedules run on (`currentInterval`): on true time, a clock set back
        // put a check planned for tonight on tomorrow's date (as on the eve of a spring-forward).
        try calendar.validateMonitoring(request.schedule, events: request.events,
                                               monitoredActivityCount: monitoredCount + otherActivities + (existing == nil ? 1 : 0),
                                               authorizationStatus: authorization.status(of: requester), now: wallNow,
                                               acceptingTimeOnlyWithFullDate: settings.fidelity.has(.mixedComponentsNeverStart))
        if let existing {
            cancelTimers(existing)
            if settings.fidelity.has(.restartingMonitoringEndsInterval) {
                // What devices do (lesson 3): the running activity is stopped first, and the monitor hears intervalDidEnd.
                emitCallback(DeviceTopic.intervalDidEnd, activity: request.activity, event: nil, scheduledFor: now)
            }
        }
        let registration = Registration(activity: request.activity, schedule: request.schedule, events: request.events, registeredAt: now, product: product)
        let monitor = Monitor(registration, calendar: calendar, warningTime: request.schedule.warningTime)
        monitors[request.activity] = monitor
        persist()
        if running { plan(monitor, firstPlan: true) }
        if settings.fidelity.has(.startsIntervalsAtOnce) {
            emitCallback(DeviceTopic.intervalDidStart, activity: request.activity, event: nil, scheduledFor: now)
        }
        if settings.fidelity.has(.pastStartFiresThresholds), startMatchedEarlierToday(request.schedule) { fireEveryThreshold(of: monitor) }
    }

    /// Delivers `eventDidReachThreshold` now for each of the activity's events not yet delivered in its interval,
    /// whatever the use: what the threshold quirks do.
    private func fireEveryThreshold(of monitor: Monitor) {
        for event in monitor.registration.events.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            let crossing = ThresholdCrossing(event: event, callback: .eventDidReachThreshold, date: host.now)
            if !monitor.registration.hasDelivered(crossing) { deliver(crossing, monitor) }
        }
    }

    /// Whether the schedule's start components already matched earlier on the device's day (its interval of today
    /// began, or is over): what `past-start-fires-thresholds` reacts to.
    private func startMatchedEarlierToday(_ schedule: DeviceActivitySchedule) -> Bool {
        let wall = wallNow
        let dayStart = calendar.dailyInterval(containing: wall).start
        guard let first = calendar.nextDate(after: dayStart.addingTimeInterval(-1), matching: schedule.intervalStart) else { return false }
        return first < wall
    }

    /// The person picks the phone up (opens an app or a page). Under `thresholds-at-first-pickup` (iOS 26.2 RC) the
    /// first pickup of the device's day fires every threshold of every running interval that has not fired yet.
    func pickedUp() {
        guard settings.fidelity.has(.thresholdsAtFirstPickup), running else { return }
        let day = calendar.dailyInterval(containing: wallNow).start
        guard lastPickupDay != day else { return }
        lastPickupDay = day
        host.save(day, key: Self.lastPickupKey)
        for name in activityNames where monitors[name]!.interval != nil { fireEveryThreshold(of: monitors[name]!) }
    }

    func stopMonitoring(_ names: [DeviceActivityName]) {
        for name in names {
            guard let monitor = monitors.removeValue(forKey: name) else { continue }
            cancelTimers(monitor)
        }
        persist()
        usageChanged()
    }

    /// A revocation: every activity of the app stops — its other activities too, which held places of the limit.
    func stopAll(reason: String) {
        stopMonitoring(activityNames)
        guard otherActivities != 0 else { return }
        otherActivities = 0
        host.save(otherActivities, key: "deviceactivity.otherActivities")
    }

    /// The app's other activities take every place the limit leaves free (a scenario's `fillActivityLimit`) — when the
    /// app may monitor: without authorization its other features cannot register activities either (`startMonitoring`
    /// throws `.unauthorized`), so the limit fills only once some app is approved.
    func fillLimit() {
        guard settings.products.contains(where: { authorization.status(ofProduct: $0.name) == .approved }) else { return }
        // Per app: the app with the most activities is left with no free place.
        let perProduct = Dictionary(grouping: monitors.values, by: { $0.registration.product ?? "" }).values.map(\.count)
        otherActivities = max(0, DeviceActivityMonitoringError.maximumActivities - (perProduct.max() ?? 0))
        host.save(otherActivities, key: "deviceactivity.otherActivities")
    }

    // MARK: Scheduling

    /// Starts (or restarts, after a device restart) timing every monitored activity.
    func resume() {
        running = true
        for name in activityNames { plan(monitors[name]!, firstPlan: false) }
        usageChanged()
    }

    /// Cancels every timer (the device is going down).
    func suspendTimers() {
        for monitor in monitors.values { cancelTimers(monitor) }
        if let thresholdTimer { host.bus.cancel(thresholdTimer) }
        running = false
    }

    private func cancelTimers(_ monitor: Monitor) {
        cancelPlannedTimers(monitor)
        cancelDeliveries(monitor) { _ in true }
    }

    /// Cancels the callbacks held for their whole minute that were due in an interval `isDropped` names.
    private func cancelDeliveries(_ monitor: Monitor, where isDropped: (Date?) -> Bool) {
        for (timer, intervalStart) in monitor.deliveries where isDropped(intervalStart) {
            host.bus.cancel(timer)
            monitor.deliveries.removeValue(forKey: timer)
        }
    }

    private func cancelPlannedTimers(_ monitor: Monitor) {
        for timer in monitor.timers { host.bus.cancel(timer) }
        monitor.timers = []
    }

    /// Plans the callbacks of the activity's current or next interval.
    private func plan(_ monitor: Monitor, firstPlan: Bool) {
        let now = host.now
        let activitySchedule = monitor.registration.schedule
        guard let interval = continuedInterval(of: monitor) ?? currentInterval(of: activitySchedule) else { return finish(monitor) }
        let reference = now
        let name = monitor.registration.activity
        if interval.start <= now {
            // Monitoring (re)starts inside an interval: it starts now, unless its start went out before a restart.
            let alreadyStarted = monitor.registration.startedInterval == interval.start && monitor.registration.pendingStart != interval.start
            beginInterval(monitor, interval, announce: !alreadyStarted)
        } else {
            if let warning = activitySchedule.intervalWillStartWarning(for: interval), warning > now {
                schedule(monitor, DeviceActivityTopicCallback(topic: DeviceTopic.intervalWillStartWarning, event: nil), at: warning, reference: reference, firstPlan: firstPlan)
            }
            let timer = host.bus.schedule(at: busTime(interval.start)) { [weak self, weak monitor] in
                guard let self, let monitor, monitors[name] === monitor else { return }
                beginInterval(monitor, interval, announce: true)
            }
            monitor.timers.append(timer)
        }
        planEnd(monitor, interval, firstPlan: firstPlan)
        // The start is a callback too; its timing quirks apply to its announcement.
        if interval.start > now, firstPlan { applyStartQuirk(monitor, interval, reference: reference) }
    }

    /// Plans the end of the interval and the warning before it.
    private func planEnd(_ monitor: Monitor, _ interval: DateInterval, firstPlan: Bool) {
        let name = monitor.registration.activity
        if let warning = monitor.registration.schedule.intervalWillEndWarning(for: interval), warning > host.now {
            schedule(monitor, DeviceActivityTopicCallback(topic: DeviceTopic.intervalWillEndWarning, event: nil), at: warning, reference: host.now, firstPlan: firstPlan)
        }
        let endTimer = host.bus.schedule(at: busTime(interval.end)) { [weak self, weak monitor] in
            guard let self, let monitor, monitors[name] === monitor else { return }
            endInterval(monitor, interval)
        }
        monitor.timers.append(endTimer)
    }

    /// The interval the activity started and still runs in, its end read on the device clock in the zone in force
    /// (`ScheduleCalendar.end(ofIntervalStartedAt:)`): after a zone change, the interval started before it goes on, as
    /// iOS's does. Nil when none was started or its end is past.
    private func continuedInterval(of monitor: Monitor) -> DateInterval? {
        guard let start = monitor.registration.startedInterval, start <= host.now,
              let end = continuedEnd(of: monitor.registration.schedule, startedAt: start), end > host.now else { return nil }
        return DateInterval(start: start, end: end)
    }

    /// The end, in bus time, of the schedule's interval that started at `start`, on the device clock in the zone in force.
    private func continuedEnd(of schedule: DeviceActivitySchedule, startedAt start: Date) -> Date? {
        calendar.end(ofIntervalStartedAt: clock.wallTime(at: start), of: schedule).map(clock.busInstant(showing:))
    }

    /// The schedule's current or next interval in bus time: its components are read on the device clock, in the
    /// time zone in force, as a phone reads them (a clock set forward ends an interval early).
    private func currentInterval(of schedule: DeviceActivitySchedule) -> DateInterval? {
        guard let wall = calendar.nextInterval(for: schedule, at: wallNow) else { return nil }
        return DateInterval(start: clock.busInstant(showing: wall.start), end: clock.busInstant(showing: wall.end))
    }

    /// The device clock or time zone changed: every activity is planned again on it. A callback already due and
    /// waiting for its whole minute is still delivered while the device's day goes on (a change to the same or an
    /// earlier date, docs/explore.md "The device's day"): the quirk delays a callback, it does not drop it (a threshold
    /// reached seconds before the clock is set back would otherwise never come that day). A change to a later date
    /// ends that day, and what was still due for it — unless it is a zone change that leaves the interval running:
    /// what was due in that interval is still its own (what was due in an earlier one is dropped).
    ///
    /// A running interval goes on across a zone change, as iOS's does: its start and the activity counted since stay
    /// (Apple: "the system uses the time zone of the device at `nextInterval.start` to calculate device activity for
    /// the entirety of the interval"), and its end is read on the wall clock in the new zone ("bases the interval's end
    /// date on wall-clock time, regardless of any time zone changes"); when the new zone's clock is past that end, the
    /// interval ends now (`intervalDidEnd`) and the one the clock is in now starts. A clock set by the person ends a
    /// running interval that the new clock moves (or leaves), and the one the clock is in now starts.
    func clockMoved(toALaterDate: Bool, zoneChanged: Bool) {
        guard running else { return }
        for name in activityNames {
            guard let monitor = monitors[name] else { continue }
            // A callback held for its whole minute is dropped when the device then shows a later date, unless the
            // change is of zone and the interval it belongs to goes on (then it is still that interval's to deliver).
            let endInNewZone = zoneChanged ? monitor.interval.flatMap { continuedEnd(of: monitor.registration.schedule, startedAt: $0.start) } : nil
            let intervalGoesOn = endInNewZone.map { $0 > host.now } ?? false
            cancelPlannedTimers(monitor)
            if toALaterDate {
                let goingOn = intervalGoesOn ? monitor.interval?.start : nil
                cancelDeliveries(monitor) { dueIn in goingOn == nil || dueIn != goingOn }
            }
            guard let running = monitor.interval else {
                plan(monitor, firstPlan: false)
                continue
            }
            if zoneChanged {
                if let end = endInNewZone, intervalGoesOn {
                    let continued = DateInterval(start: running.start, end: end)
                    monitor.interval = continued
                    monitor.counter.moveEnd(to: end)
                    planEnd(monitor, continued, firstPlan: false)
                } else {
                    endInterval(monitor, DateInterval(start: running.start, end: max(running.start, host.now)))
                }
            } else if currentInterval(of: monitor.registration.schedule) != running {
                endInterval(monitor, running)
            } else {
                plan(monitor, firstPlan: false)
            }
        }
        usageChanged()
    }

    private struct DeviceActivityTopicCallback {
        let topic: String
        let event: DeviceActivityEvent.Name?
    }

    private func beginInterval(_ monitor: Monitor, _ interval: DateInterval, announce: Bool) {
        guard monitor.interval != interval else { return }
        monitor.interval = interval
        if monitor.registration.startedInterval != interval.start {
            monitor.registration.startedInterval = interval.start
            monitor.registration.deliveredCrossings = []
        }
        persist()
        usage.flush()
        // The interval's use so far counts — after a reload too: the stored history is the system's count.
        let crossings = monitor.counter.startInterval(interval, monitoringStart: monitor.registration.registeredAt,
                                                      pastUsage: usage.spans(overlapping: interval))
        if announce && !monitor.suppressStart {
            deliver(DeviceTopic.intervalDidStart, monitor, event: nil, scheduledFor: interval.start)
        }
        monitor.suppressStart = false
        for crossing in crossings where !monitor.registration.hasDelivered(crossing) { deliver(crossing, monitor) }
        redeliverAfterMidnight(monitor)
        usageChanged()
    }

    /// Under `thresholds-redelivered-after-midnight`: an interval that starts on a later device day than its
    /// predecessor's thresholds were reached delivers those thresholds again (kept undelivered in this interval).
    private func redeliverAfterMidnight(_ monitor: Monitor) {
        let batch = monitor.endedIntervalThresholds
        monitor.endedIntervalThresholds = []
        guard settings.fidelity.has(.thresholdsRedeliveredAfterMidnight), let last = batch.last?.date,
              calendar.dailyInterval(containing: wallNow).start > calendar.dailyInterval(containing: clock.wallTime(at: last)).start else { return }
        for crossing in batch { deliver(DeviceTopic.eventDidReachThreshold, monitor, event: crossing.event, scheduledFor: crossing.date) }
    }

    private func endInterval(_ monitor: Monitor, _ interval: DateInterval) {
        usage.flush()
        monitor.timers = []  // this interval's timers have fired
        deliver(DeviceTopic.intervalDidEnd, monitor, event: nil, scheduledFor: interval.end)
        if settings.fidelity.has(.thresholdsRedeliveredAfterMidnight) {
            monitor.endedIntervalThresholds = (monitor.registration.deliveredCrossings ?? []).filter { $0.callback == .eventDidReachThreshold }
        }
        monitor.interval = nil
        monitor.registration.startedInterval = nil
        monitor.registration.deliveredCrossings = nil
        if monitor.registration.schedule.repeats {
            persist()
            plan(monitor, firstPlan: false)
        } else {
            finish(monitor)
        }
    }

    /// A schedule with no further interval is no longer monitored.
    private func finish(_ monitor: Monitor) {
        monitor.isFinished = true
        monitors[monitor.registration.activity] = nil
        persist()
    }

    // MARK: Thresholds

    /// Called when what is in use changes: plans a timer at the next instant a threshold or warning is due.
    func usageChanged() {
        if let thresholdTimer { host.bus.cancel(thresholdTimer) }
        thresholdTimer = nil
        guard running, let (subject, since) = usage.currentUse else { return }
        var earliest: Date?
        for monitor in monitors.values where monitor.interval != nil {
            for (name, event) in monitor.counter.events where event.includes(subject) {
                let used = monitor.counter.usage(of: name)
                let threshold = event.threshold.durationInSeconds
                var levels = [threshold]
                if let warning = monitor.registration.schedule.warningTime?.durationInSeconds, warning > 0 { levels.append(threshold - warning) }
                for level in levels where level > used {
                    let due = since.addingTimeInterval(level - used)
                    if due < monitor.interval!.end, earliest.map({ due < $0 }) ?? true { earliest = due }
                }
            }
        }
        guard let earliest else { return }
        thresholdTimer = host.bus.schedule(at: busTime(earliest)) { [weak self] in
            guard let self else { return }
            thresholdTimer = nil
            usage.flush()  // records the span, which delivers the crossings
            usageChanged()
        }
    }

    /// Counts a span of use toward every monitored activity's events.
    func record(_ span: UsageSpan) {
        for name in activityNames {
            let monitor = monitors[name]!
            // Each once per interval, as iOS calls them: one a quirk already delivered early is not delivered again.
            for crossing in monitor.counter.record(span) where !monitor.registration.hasDelivered(crossing) { deliver(crossing, monitor) }
        }
    }

    func migrate(_ migration: TokenMigration) {
        for monitor in monitors.values {
            monitor.registration.events = monitor.registration.events.mapValues(migration.migrate)
            var counter = ThresholdCounter(events: monitor.registration.events, warningTime: monitor.registration.schedule.warningTime, calendar: calendar)
            if let interval = monitor.interval {
                // Replay this interval's use in the new tokens; crossings it already delivered are not delivered again.
                _ = counter.startInterval(interval, monitoringStart: monitor.registration.registeredAt, pastUsage: usage.spans(overlapping: interval))
            }
            monitor.counter = counter
        }
        persist()
    }

    // MARK: Delivery, with the device quirks

    private func deliver(_ crossing: ThresholdCrossing, _ monitor: Monitor) {
        let topic = crossing.callback == .eventDidReachThreshold ? DeviceTopic.eventDidReachThreshold : DeviceTopic.eventWillReachThresholdWarning
        deliver(topic, monitor, event: crossing.event, scheduledFor: crossing.date, crossing: crossing)
    }

    /// Delivers a callback that is due now (rounded to the next whole minute under that quirk). A threshold
    /// crossing is kept as delivered when it goes out, so one lost with a pending timer is delivered after a reload.
    private func deliver(_ topic: String, _ monitor: Monitor, event: DeviceActivityEvent.Name?, scheduledFor: Date, crossing: ThresholdCrossing? = nil) {
        let activity = monitor.registration.activity
        if topic == DeviceTopic.intervalDidStart, settings.fidelity.has(.mixedComponentsNeverStart),
           monitor.registration.schedule.mixesTimeOnlyAndDateComponents {
            return swallowed(.mixedComponentsNeverStart, topic, activity: activity, event: nil, scheduledFor: scheduledFor)
        }
        if settings.fidelity.has(.wholeMinuteCallbacks) {
            let rounded = Self.nextWholeMinute(host.now)
            if rounded > host.now {
                if topic == DeviceTopic.intervalDidStart {
                    monitor.registration.pendingStart = scheduledFor
                    persist()
                }
                let started = monitor.interval?.start
                var timer: UInt64 = 0
                // The monitor is held here: a finished one (its schedule does not repeat) is no longer the device's.
                timer = host.bus.schedule(at: busTime(rounded)) { [weak self, monitor] in
                    // Stopped or replaced meanwhile: dropped. Finished (a schedule that does not repeat ended): its end goes out.
                    guard let self, monitors[activity] === monitor || (monitor.isFinished && monitors[activity] == nil) else { return }
                    monitor.deliveries.removeValue(forKey: timer)
                    // A crossing is kept as delivered in its own interval only: a clock change may have begun another
                    // (a zone change may have moved its end: the same interval).
                    emitCallback(topic, monitor, event: event, scheduledFor: scheduledFor, crossing: monitor.interval?.start == started ? crossing : nil)
                }
                monitor.deliveries.updateValue(started, forKey: timer)  // (a subscript set to nil would remove it)
                return
            }
        }
        emitCallback(topic, monitor, event: event, scheduledFor: scheduledFor, crossing: crossing)
    }

    private func emitCallback(_ topic: String, _ monitor: Monitor, event: DeviceActivityEvent.Name?, scheduledFor: Date, crossing: ThresholdCrossing?) {
        var told: DeliveredCrossings?
        if let crossing {
            let delivered = (monitor.registration.deliveredCrossings ?? []) + [crossing]
            monitor.registration.deliveredCrossings = delivered
            persist()
            told = monitor.registration.startedInterval.map { DeliveredCrossings(interval: $0, crossings: delivered) }
        }
        if topic == DeviceTopic.intervalDidStart, monitor.registration.pendingStart != nil {
            monitor.registration.pendingStart = nil
            persist()
        }
        emitCallback(topic, activity: monitor.registration.activity, event: event, scheduledFor: scheduledFor, told: told)
    }

    /// `told`: with a threshold callback, what the activity's callbacks have told in its interval (`JournalCatchUp`).
    private func emitCallback(_ topic: String, activity: DeviceActivityName, event: DeviceActivityEvent.Name?, scheduledFor: Date,
                              told: DeliveredCrossings? = nil) {
        if settings.fidelity.has(.monitorNeverWoken) {
            return swallowed(.monitorNeverWoken, topic, activity: activity, event: event, scheduledFor: scheduledFor)
        }
        // On a device with several products, only the registering app's plugins hear its activities' callbacks.
        let product = monitors[activity]?.registration.product
        let audience = product.flatMap { name in settings.products.first { $0.name == name }?.plugins }
        guard throttle.admits(app: product ?? "", now: host.bus.now) else {
            return throttled(topic, activity: activity, event: event, scheduledFor: scheduledFor, product: product)
        }
        host.emit(topic, bodyJSON: DeviceActivityCallback(activity: activity, event: event, scheduledFor: scheduledFor).json, audience: audience,
                  fact: told.map { _ in StatedFact.crossings(of: activity) }, factValue: told.map(DeviceAPICoding.encode))
    }

    /// A callback the OS's throttle keeps from a monitor called back too often (`CallbackThrottle`): said as an error,
    /// since it is the product's loop, not a quirk of the device.
    private func throttled(_ topic: String, activity: DeviceActivityName, event: DeviceActivityEvent.Name?, scheduledFor: Date, product: String?) {
        let whose = product.map { "\($0)'s" } ?? "the app's"
        let callback = "\(topic) of '\(activity.rawValue)'" + (event.map { " (event '\($0.rawValue)')" } ?? "") + " due at \(scheduledFor)"
        host.emit(topic: "bus.error", body: ["code": "callback-loop", "sender": "broker", "message": .string(
            "\(whose) monitor was called back more than \(CallbackThrottle.perMinute) times within a minute, as one that re-registers at each callback is: the OS throttles it and does not deliver \(callback)")])
    }

    /// A callback a quirk keeps from the monitor: iOS says nothing, ShieldBus says `device.quirk` (the monitor does not
    /// hear it: only taps and the journal do).
    private func swallowed(_ quirk: Quirk, _ topic: String, activity: DeviceActivityName, event: DeviceActivityEvent.Name?, scheduledFor: Date) {
        var body: [String: JSONValue] = ["quirk": .string(quirk.rawValue), "activity": .string(activity.rawValue), "callback": .string(topic),
                                         "scheduledFor": .int(busTime(scheduledFor)), "fate": "never"]
        if let event { body["event"] = .string(event.rawValue) }
        host.emit(topic: "device.quirk", body: .object(body), audience: [])
    }

    /// Unmarks the threshold callbacks marked delivered in a running interval that the journal never told (`told`:
    /// what the activity's callbacks last told), so that `resume` delivers them: their batch was lost with a
    /// broker killed before saving it, and the monitor never had them.
    func forgetCrossings(told: (DeviceActivityName) -> DeliveredCrossings?) {
        var changed = false
        for monitor in monitors.values {
            guard let delivered = monitor.registration.deliveredCrossings, !delivered.isEmpty, let started = monitor.registration.startedInterval else { continue }
            let said = told(monitor.registration.activity).flatMap { $0.interval == started ? $0.crossings : nil } ?? []
            let kept = delivered.filter { crossing in said.contains { $0.event == crossing.event && $0.callback == crossing.callback } }
            guard kept.count != delivered.count else { continue }
            monitor.registration.deliveredCrossings = kept
            changed = true
        }
        if changed { persist() }
    }

    /// Schedules a warning callback, subject to the far-schedule quirk.
    private func schedule(_ monitor: Monitor, _ callback: DeviceActivityTopicCallback, at instant: Date, reference: Date, firstPlan: Bool) {
        let name = monitor.registration.activity
        guard let fireAt = fate(of: instant, reference: reference, firstPlan: firstPlan, activity: name, topic: callback.topic) else { return }
        let timer = host.bus.schedule(at: busTime(fireAt)) { [weak self, weak monitor] in
            guard let self, let monitor, monitors[name] === monitor else { return }
            deliver(callback.topic, monitor, event: callback.event, scheduledFor: instant)
        }
        monitor.timers.append(timer)
    }

    /// Under the far-schedule quirk an interval's start may be announced early, late or never: the
    /// interval still starts on time for counting, only the monitor's callback moves.
    private func applyStartQuirk(_ monitor: Monitor, _ interval: DateInterval, reference: Date) {
        let name = monitor.registration.activity
        guard let fireAt = fate(of: interval.start, reference: reference, firstPlan: true, activity: name, topic: DeviceTopic.intervalDidStart) else {
            monitor.suppressStart = true
            return
        }
        guard fireAt != interval.start else { return }
        monitor.suppressStart = true
        let timer = host.bus.schedule(at: busTime(fireAt)) { [weak self, weak monitor] in
            guard let self, let monitor, monitors[name] === monitor else { return }
            deliver(DeviceTopic.intervalDidStart, monitor, event: nil, scheduledFor: interval.start)
        }
        monitor.timers.append(timer)
    }

    /// When a callback scheduled `instant` (from `reference`) really fires; nil when it never does.
    private func fate(of instant: Date, reference: Date, firstPlan: Bool, activity: DeviceActivityName, topic: String) -> Date? {
        guard settings.fidelity.has(.unreliableFarSchedules), firstPlan,
              instant.timeIntervalSince(reference) > Self.reliableHorizon else { return instant }
        let roll = Int.random(in: 0..<100, using: &random.generator)
        let outcome: (Date?, String)
        switch roll {
        case 0..<40:
            outcome = (instant, "on-time")
        case 40..<60:
            let earliest = reference.addingTimeInterval(Self.reliableHorizon)
            let span = max(60, instant.timeIntervalSince(earliest))
            outcome = (earliest.addingTimeInterval(Double(Int.random(in: 0..<Int(span / 60), using: &random.generator)) * 60), "early")
        case 60..<80:
            outcome = (instant.addingTimeInterval(Double(Int.random(in: 1...20, using: &random.generator)) * 60), "late")
        default:
            outcome = (nil, "never")
        }
        var body: [String: JSONValue] = [
            "quirk": .string(Quirk.unreliableFarSchedules.rawValue), "activity": .string(activity.rawValue),
            "callback": .string(topic), "scheduledFor": .int(busTime(instant)), "fate": .string(outcome.1),
        ]
        if let at = outcome.0 { body["firesAt"] = .int(busTime(at)) }
        host.emit(topic: "device.quirk", body: .object(body))
        return outcome.0
    }

    static func nextWholeMinute(_ date: Date) -> Date {
        let seconds = date.timeIntervalSince1970
        return Date(timeIntervalSince1970: (seconds / 60).rounded(.up) * 60)
    }

    /// Saves the registrations as one JSON array, the bytes encoding `[Registration]` gives, from each one's kept form.
    private func persist() {
        var array: [UInt8] = [UInt8(ascii: "[")]
        for (index, name) in activityNames.enumerated() {
            if index > 0 { array.append(UInt8(ascii: ",")) }
            array += monitors[name]!.persistedJSON
        }
        array.append(UInt8(ascii: "]"))
        host.saving(Self.registrationsKey) { try $0.save(json: array, key: Self.registrationsKey) }
    }
}
