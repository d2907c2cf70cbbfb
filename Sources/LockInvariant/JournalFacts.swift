import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

/// Something that can be locked: an app or a web domain, each with its category's name, if it has one.
enum Target: Hashable {
    case app(String, category: String?)
    case domain(String, category: String?)

    var name: String {
        switch self {
        case .app(let name, _), .domain(let name, _): return name
        }
    }

    var category: String? {
        switch self {
        case .app(_, let category), .domain(_, let category): return category
        }
    }

    var isApp: Bool {
        if case .app = self { return true }
        return false
    }
}

/// What happened in a run, read from its journal: only what the person did and what the OS did (events whose
/// source is the OS), never what a plugin says about itself.
struct JournalFacts {
    /// A stretch during which a target was on screen and usable, or on screen under a shield.
    struct Span {
        var target: Target
        var from: Date
        var to: Date
        /// A private browser tab (the OS records no usage for it).
        var isPrivate = false
        /// For a shield: the stores whose settings matched (or the OS setting behind an OS view).
        var stores: Set<String> = []
    }

    /// A shield button the person pressed, on the shield of `target`.
    struct Press {
        var at: Date
        var action: ShieldAction
        var target: Target
    }

    /// A write to a ManagedSettings store, as the OS applied it.
    struct StoreChange {
        var at: Date
        var store: String
        var writer: String
        var shield: ShieldSettings
        var epoch: Int
    }

    private(set) var range: DateInterval
    private(set) var zones: ZoneTimeline
    /// The OS's daily intervals over the range (`OSDays`).
    private(set) var osDays = OSDays(days: [])
    /// The device clock minus true time from each `device.clock-changed` on (the person set the clock).
    private(set) var clockOffsets: [(from: Date, offset: TimeInterval)] = [(Date.distantPast, 0)]
    private(set) var habitCompletions: [(at: Date, habit: String)] = []
    /// The person's actions in a product's app ("skip tonight").
    private(set) var appActions: [(at: Date, app: String, action: String)] = []
    private(set) var presses: [Press] = []
    private(set) var usable: [Span] = []
    private(set) var shielded: [Span] = []
    private(set) var storeChanges: [StoreChange] = []
    /// The device behaviours the OS played (`bus.started`'s `quirks`; none in a journal that does not name them).
    private(set) var quirks: Set<String> = []
    /// When the OS refused a registration carrying a threshold event because the app's activities were at Apple's limit
    /// (`excessive-activities`, `MonitoringError.excessiveActivities`): the reply to a `start-monitoring` with events.
    private(set) var thresholdRefusals: [Date] = []
    /// FamilyControls authorization as the OS told it: a reply to a plugin's request (`plugin`: the requester) or a
    /// change it announced (`plugin` nil: the person's answer or a revocation, for every app; or the policy's answer
    /// to a request, which the reply that follows repeats).
    private(set) var authorizations: [(at: Date, plugin: String?, approved: Bool)] = []
    /// When the broker — the OS — started again after a crash (each `bus.started` but the first).
    private(set) var brokerRestarts: [Date] = []
    /// When an iOS update regenerated every token (`device.os-updated`).
    private(set) var osUpdates: [Date] = []
    /// DeviceActivity callbacks the OS delivered, each with the plugin that registered its activity.
    private(set) var callbacks: [(at: Date, registrant: String?)] = []
    /// Tokens as the OS named them: (epoch, kind, name) → token.
    private var tokens: [TokenKey: String] = [:]

    struct TokenKey: Hashable {
        var epoch: Int
        var kind: String
        var name: String
    }

    /// The source the OS's events carry in the journal.
    static let osSource = "broker"

    /// The topics of a monitor extension's callbacks (`DeviceActivityMonitor`'s six methods).
    static let monitorCallbacks = [DeviceTopic.intervalDidStart, DeviceTopic.intervalDidEnd, DeviceTopic.intervalWillStartWarning,
                                   DeviceTopic.intervalWillEndWarning, DeviceTopic.eventDidReachThreshold, DeviceTopic.eventWillReachThresholdWarning]

    private init(timeZone: TimeZone) {
        range = DateInterval(start: Date(timeIntervalSince1970: 0), duration: 0)
        zones = ZoneTimeline(initial: timeZone)
    }

    /// Reads a journal one envelope at a time, keeping only the facts: a run's check need not hold its journal.
    struct Builder {
        private var partial: JournalFacts
        private var reader = Reader()
        private var first: Date?
        private var last: Date?

        init(timeZone: TimeZone) {
            partial = JournalFacts(timeZone: timeZone)
        }

        mutating func read(_ envelope: Envelope) {
            let at = date(busTime: envelope.time)
            if first == nil { first = at }
            last = at
            // The OS's events, and the registrations its replies answer (`thresholdRefusals`).
            guard envelope.source == JournalFacts.osSource || envelope.topic == DeviceTopic.startMonitoringRequest
                || envelope.topic == DeviceTopic.authorizationRequest else { return }
            reader.read(envelope, into: &partial)
        }

        /// The facts of the journal read so far, with what is still on screen closed at its last event.
        func facts() -> JournalFacts {
            var facts = partial
            var reader = self.reader
            let first = self.first ?? Date(timeIntervalSince1970: 0)
            facts.range = DateInterval(start: first, end: max(first, last ?? first))
            reader.closeAll(at: facts.range.end, into: &facts)
            facts.osDays = OSDays(facts)
            facts.usable.sort { ($0.from, $0.target.name) < ($1.from, $1.target.name) }
            facts.shielded.sort { ($0.from, $0.target.name) < ($1.from, $1.target.name) }
            return facts
        }
    }

    /// When the app of the product with these plugins was not authorized: from the OS saying so (not determined,
    /// denied, revoked) to its saying approved. Before the first word on it, authorized: a journal may start on a
    /// device approved long ago, and then nobody asks.
    func unauthorized(plugins: Set<String>) -> Periods {
        var periods = Periods()
        var since: Date?
        for fact in authorizations where fact.plugin.map(plugins.contains) ?? true {
            if fact.approved, let start = since {
                periods.insert(DateInterval(start: start, end: fact.at))
                since = nil
            } else if !fact.approved, since == nil {
                since = fact.at
            }
        }
        if let start = since, start < range.end { periods.insert(DateInterval(start: start, end: range.end)) }
        return periods
    }

    func clockOffset(at date: Date) -> TimeInterval {
        clockOffsets.last { $0.from <= date }!.offset
    }

    /// Where the count of the OS's day running at `date` begins (`OSDays`).
    func osDayStart(at date: Date) -> Date {
        osDays.countStart(at: date) ?? zones.deviceDayStart(at: date, clockOffset: clockOffset(at: date))
    }

    /// The first instant after `date` at which the device clock or the time zone changes, if one does.
    func nextClockOrZoneChange(after date: Date) -> Date? {
        (clockOffsets.map(\.from) + zones.changes.map(\.from)).filter { $0 > date }.min()
    }

    /// The days the device showed within the journal's range, as the OS counts them (`OSDays`): each runs from the true
    /// instant the device clock showed midnight in the zone in force, or from a change that began another day, to the
    /// next such instant. A zone change that leaves the OS's day running continues it; one whose new zone's clock is
    /// past its end begins the new zone's day (even on the same date: another interval). A clock set to an earlier date
    /// (or the same one) continues the day: that date began earlier in true time, so the OS's count of it holds the
    /// day's use so far.
    func deviceDays() -> [DateInterval] {
        var days: [(interval: DateInterval, date: Int)] = []
        var previous: OSDays.Day?
        for stretch in osDays.days {
            let date = deviceDate(at: stretch.span.start, clockOffset: clockOffset(at: stretch.span.start))
            if let last = days.last, let before = previous,
               stretch.countStart == before.countStart || (stretch.afterClockSet && date <= last.date) {
                days[days.count - 1] = (DateInterval(start: last.interval.start, end: stretch.span.end), date)
            } else {
                days.append((stretch.span, date))
            }
            previous = stretch
        }
        return days.map(\.interval)
    }

    /// The date (days since 1970-01-01) the device clock shows at `date`, in the zone in force.
    private func deviceDate(at date: Date, clockOffset: TimeInterval) -> Int {
        let shown = date.addingTimeInterval(clockOffset)
        let local = shown.timeIntervalSince1970 + Double(zones.zone(at: date).secondsFromGMT(for: shown))
        return Int((local / 86_400).rounded(.down))
    }

    /// The token the OS used for a named app, category or domain in an epoch, if the journal shows it.
    func token(epoch: Int, kind: String, name: String) -> String? {
        tokens[TokenKey(epoch: epoch, kind: kind, name: name)]
    }

    /// Follows the OS's events in order, keeping what is open on screen.
    private struct Reader {
        var usable: [Target: Span] = [:]
        var shield: Span?
        /// The token epoch in force, relative to the journal's start (`device.os-updated` moves it on).
        var epoch = 0
        var started = false
        /// The `corr` of each `start-monitoring` request with events, until its reply.
        var thresholdRegistrations: Set<String> = []
        /// The plugin that last registered each activity (the source of its `start-monitoring` request).
        var registrants: [String: String] = [:]
        /// The requester (its source, stamped by the broker) of each authorization request, by `corr`, until its reply.
        var authorizationRequesters: [String: String] = [:]
        /// The bodies last read, parsed.
        private let bodies = RecentBodies()

        mutating func read(_ envelope: Envelope, into facts: inout JournalFacts) {
            // One look-up of the topic, not a comparison with each topic read here in turn.
            guard let kind = Self.kinds[envelope.topic] else { return }
            let at = date(busTime: envelope.time)
            // Parsed only for the topics read here: most of a journal is events this reader passes over.
            lazy var body = bodies.value(of: envelope, kind: kind)
            switch kind {
            case .busStarted:
                // A broker that starts again crashed: what was on screen stayed in use until it came back (the OS
                // counts that use up to its new start, as the report builder does; in virtual time that is the crash).
                if started {
                    closeAll(at: at, into: &facts)
                    facts.brokerRestarts.append(at)
                }
                started = true
                if let quirks = body["quirks"]?.arrayValue { facts.quirks = Set(quirks.compactMap(\.stringValue)) }
            case .restarted:
                closeAll(at: at, into: &facts)
            case .clockChanged:
                if let milliseconds = body["offsetMs"]?.intValue { facts.clockOffsets.append((at, Double(milliseconds) / 1000)) }
            case .timeZoneChanged:
                if let zone = body["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)) { facts.zones.change(to: zone, at: at) }
            case .osUpdated:
                if let value = body["tokenEpoch"]?.intValue { epoch = Int(value) }
                facts.osUpdates.append(at)
            case .callback:
                facts.callbacks.append((at, body["activity"]?.stringValue.flatMap { registrants[$0] }))
            case .habitCompleted:
                if let habit = body["habit"]?.stringValue { facts.habitCompletions.append((at, habit)) }
            case .appAction:
                if let app = body["app"]?.stringValue, let action = body["action"]?.stringValue { facts.appActions.append((at, app, action)) }
            case .opened:
                guard let target = learn(body, into: &facts) else { return }
                usable[target] = Span(target: target, from: at, to: at, isPrivate: body["isPrivate"]?.boolValue ?? false)
            case .closed:
                guard let target = learn(body, into: &facts), var span = usable.removeValue(forKey: target) else { return }
                span.to = at
                facts.usable.append(span)
            case .shieldShown:
                guard let target = learn(body["target"] ?? [:], into: &facts) else { return }
                closeShield(at: at, into: &facts)  // a shield drawn anew replaces the one on screen
                let stores = Set((body["stores"]?.arrayValue ?? []).compactMap(\.stringValue))
                shield = Span(target: target, from: at, to: at, stores: stores)
            case .shieldDismissed:
                closeShield(at: at, into: &facts)
            case .actionHandled:
                guard let shield, let action = body["action"]?.stringValue.flatMap(ShieldAction.init(rawValue:)) else { return }
                facts.presses.append(Press(at: at, action: action, target: shield.target))
            case .startMonitoringRequest:
                if let activity = body["activity"]?.stringValue { registrants[activity] = envelope.source }
                if let corr = envelope.corr, body["events"]?.objectValue?.isEmpty == false { thresholdRegistrations.insert(corr) }
            case .startMonitoringReply:
                guard let corr = envelope.corr, thresholdRegistrations.remove(corr) != nil else { return }
                if body["error"]?["code"]?.stringValue == "excessive-activities" { facts.thresholdRefusals.append(at) }
            case .authorizationRequest:
                if let corr = envelope.corr { authorizationRequesters[corr] = envelope.source }
            case .authorizationReply:
                guard let corr = envelope.corr, let requester = authorizationRequesters.removeValue(forKey: corr),
                      let status = body["value"]?["status"]?.stringValue else { return }
                facts.authorizations.append((at, requester, status == AuthorizationStatus.approved.rawValue))
            case .authorizationChanged:
                guard let status = body["status"]?.stringValue else { return }
                facts.authorizations.append((at, nil, status == AuthorizationStatus.approved.rawValue))
            case .settingsChanged:
                guard let change = try? DeviceAPICoding.decode(ManagedSettingsChanged.self, from: envelope.body) else { return }
                facts.storeChanges.append(StoreChange(at: at, store: change.store, writer: change.writer, shield: change.shield, epoch: epoch))
            }
        }

        /// The bodies last read of each kind, parsed: the OS says the same again and again (the same shield shown,
        /// the same app opened). A callback's body names the instant it was due, so none is said twice: read as is.
        private final class RecentBodies {
            private var kept: [Kind: RecentlyRead<JSONValue>] = [:]

            func value(of envelope: Envelope, kind: Kind) -> JSONValue {
                if kind == .callback { return envelope.bodyValue }
                return kept[kind, default: RecentlyRead(limit: 8)].value(of: envelope.body) { _ in envelope.bodyValue }
            }
        }

        /// What the reader does with an event, by its topic.
        private enum Kind {
            case busStarted, restarted, clockChanged, timeZoneChanged, osUpdated, callback, habitCompleted, appAction, opened, closed
            case shieldShown, shieldDismissed, actionHandled, startMonitoringRequest, startMonitoringReply, authorizationRequest
            case authorizationReply, authorizationChanged, settingsChanged
        }

        private static let kinds: [String: Kind] = Dictionary(uniqueKeysWithValues: JournalFacts.monitorCallbacks.map { ($0, Kind.callback) }).merging([
            "bus.started": .busStarted,
            DeviceTopic.restarted: .restarted,
            DeviceTopic.clockChanged: .clockChanged,
            "device.time-zone-changed": .timeZoneChanged,
            DeviceTopic.osUpdated: .osUpdated,
            DeviceTopic.habitCompleted: .habitCompleted,
            DeviceTopic.appAction: .appAction,
            DeviceTopic.appOpened: .opened,
            DeviceTopic.webVisited: .opened,
            DeviceTopic.appClosed: .closed,
            DeviceTopic.webLeft: .closed,
            DeviceTopic.shieldShown: .shieldShown,
            DeviceTopic.shieldDismissed: .shieldDismissed,
            DeviceTopic.actionHandled: .actionHandled,
            DeviceTopic.startMonitoringRequest: .startMonitoringRequest,
            DeviceTopic.startMonitoringReply: .startMonitoringReply,
            DeviceTopic.authorizationRequest: .authorizationRequest,
            DeviceTopic.authorizationReply: .authorizationReply,
            DeviceTopic.authorizationChanged: .authorizationChanged,
            DeviceTopic.settingsChanged: .settingsChanged,
        ]) { _, _ in preconditionFailure("a topic read twice") }

        mutating func closeShield(at date: Date, into facts: inout JournalFacts) {
            guard var span = shield else { return }
            span.to = date
            facts.shielded.append(span)
            shield = nil
        }

        mutating func closeAll(at date: Date, into facts: inout JournalFacts) {
            closeShield(at: date, into: &facts)
            for (_, span) in usable {
                var closed = span
                closed.to = date
                facts.usable.append(closed)
            }
            usable = [:]
        }

        /// The target an OS body names (an app or a web domain, with its category), learning its tokens.
        func learn(_ body: JSONValue, into facts: inout JournalFacts) -> Target? {
            let category = body["category"]?["localizedDisplayName"]?.stringValue
            func remember(_ kind: String, _ name: String, _ token: String?) {
                if let token { facts.tokens[TokenKey(epoch: epoch, kind: kind, name: name)] = token }
            }
            if let category { remember("cat", category, body["category"]?["token"]?.stringValue) }
            if let app = body["application"], let name = app["localizedDisplayName"]?.stringValue {
                remember("app", name, app["token"]?.stringValue)
                return .app(name, category: category)
            }
            if let web = body["webDomain"], let host = web["domain"]?.stringValue {
                remember("web", host, web["token"]?.stringValue)
                return .domain(host, category: category)
            }
            return nil
        }
    }
}
