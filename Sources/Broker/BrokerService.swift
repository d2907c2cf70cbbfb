// BrokerService: the broker's in-process parts (the device OS), and what they may do on the bus (`ServiceBus`).

import BusClient
import BusProtocol

/// An in-process part of the broker — the device OS's clock, enforcement and scheduling — that sees events
/// like a plugin does and emits events through the sequencer.
public protocol BrokerService: AnyObject {
    /// Topic prefixes this service receives: read once, when the service is added.
    var subscriptions: [String] { get }
    /// Called once before the broker starts serving.
    func attach(to bus: any ServiceBus)
    /// Called once the plugins' processes are started, before anything of theirs is taken in: the service's own start
    /// work that can run beside theirs (it emits nothing then).
    func whilePluginsStart()
    /// Called once at the run's end, the plugins asked to stop and not yet ended: the service's close work that can run
    /// while they end (it emits nothing then).
    func whilePluginsStop()
    /// Called for each matching event, in sequence order.
    func handle(_ envelope: Envelope)
    /// Whether the service waits for a reply: virtual time does not advance meanwhile.
    var isAwaitingReplies: Bool { get }
}

extension BrokerService {
    public var isAwaitingReplies: Bool { false }
    public func whilePluginsStart() {}
    public func whilePluginsStop() {}
}

/// An event a service emits: sequenced after the current one, from `source`. With an `audience` (one product's
/// plugins), only those plugins and taps receive it, and a request addressed to a role goes to that role's holder
/// among them. With a `fact`, the event states that fact of the service's durable state — its whole current value,
/// `bodyJSON` unless `factValue` gives it: the broker keeps the value as what the journal last said of it, saved in
/// bus.sqlite with the batch that journals the event (`ServiceBus.announced`).
public struct ServiceEvent: Equatable, Sendable {
    public var topic: String
    /// One JSON object, compact.
    public var bodyJSON: [UInt8]
    public var source = "broker"
    public var corr: String?
    public var deadline: BusTime?
    public var audience: Set<String>?
    public var fact: String?
    public var factValue: [UInt8]?

    public init(topic: String, bodyJSON: [UInt8], source: String = "broker", corr: String? = nil, deadline: BusTime? = nil,
                audience: Set<String>? = nil, fact: String? = nil, factValue: [UInt8]? = nil) {
        (self.topic, self.bodyJSON, self.source, self.corr, self.deadline) = (topic, bodyJSON, source, corr, deadline)
        (self.audience, self.fact, self.factValue) = (audience, fact, factValue)
    }
}

/// What a service may do on the bus: emit events, read the clock and set timers, wait for the bus to be ready or
/// quiet, ask who is connected, and act on the plugins. The broker's `BrokerBus` is one; a test drives a service
/// in-process through another.
public protocol ServiceBus {
    /// Emits an event through the sequencer.
    func emit(_ event: ServiceEvent)
    /// What the journal last said of each fact (`ServiceEvent.fact`), by fact: the value stated by the last event
    /// stating it — on a restarted broker, the last one its predecessor saved, which is what a resumed journal
    /// keeps. A service whose state was saved at once finds there what a broker killed before the save never journaled.
    var announced: [String: [UInt8]] { get }

    /// Bus time now.
    var now: BusTime { get }
    /// Runs `action` at bus time `time`; returns an id for `cancel`.
    @discardableResult func schedule(at time: BusTime, _ action: @escaping () -> Void) -> UInt64
    func cancel(_ timer: UInt64)
    /// Runs `action` after `milliseconds` of wall time (reply deadlines).
    @discardableResult func afterWallTime(milliseconds: Int64, _ action: @escaping () -> Void) -> UInt64
    func cancelWallTimer(_ timer: UInt64)
    /// Runs `action` once the plugin that the request `corr`, emitted next, goes to has had it for `milliseconds` of wall
    /// time (a reply deadline) — counted from the turn it is handed the request, never from the request: in virtual
    /// time how long it waits for other plugins' turns, or for its plugin's next process, is process timing. At once
    /// when no plugin will take it. `cancelAnswerTime` when the reply came.
    func afterAnswerTime(for corr: String, milliseconds: Int64, _ action: @escaping () -> Void)
    func cancelAnswerTime(for corr: String)
    /// Runs `action` once every configured plugin has connected and `bus.ready` went out.
    func whenReady(_ action: @escaping () -> Void)
    /// Runs `action` once everything delivered so far has been handled.
    func whenQuiet(_ action: @escaping () -> Void)

    /// Whether a plugin or a service receives events on `topic` (taps and tools only watch: they do not count).
    func isSubscribed(_ topic: String) -> Bool
    /// Whether a plugin of `role` is connected (among `audience`, one product's plugins, when given).
    func isConnected(role: Role, among audience: Set<String>?) -> Bool
    /// The supervised plugins that could not act on what was sequenced after `seq`, with why: each is given up on or
    /// stopped and was subscribed to an event sequenced since — or was given up on without ever connecting, so
    /// what it would have wanted is unknown and nothing it would have done can be vouched for.
    func pluginsThatCouldNotAct(since seq: UInt64) -> [(name: String, why: String)]
    /// Whether `name` is a plugin the broker starts (from the configuration), not an outside client.
    func isSupervisedPlugin(_ name: String) -> Bool

    /// Kills and restarts every supervised plugin (a device restart).
    func restartAllPlugins(reason: String)
    /// Kills and restarts one plugin at once, without counting a failure (an app force-quit by the person).
    func restartPlugin(named name: String, reason: String)
    /// Sets a fact that plugins (re)starting from now on find in their welcome's `settings`.
    func setPluginSetting(_ key: String, _ value: JSONValue)
    /// The broker is killed and starts again on the same state (a scenario's `crashBroker`): deliveries waiting in
    /// mailboxes and pending requests are lost, every plugin is killed and started again, and the journal shows
    /// `bus.started {clock, after: "crash"}`. Timers of services stay: the services reload and re-plan them.
    func crashAndRestart()

    /// Reports that state could not be written: on the terminal, in `status` (`storageErrors`,
    /// `lastStorageError`) and as a `bus.error` `storage-failed`.
    func reportStorageFailure(_ message: String)
    /// Counts a plugin's report of what iOS would have let pass silently (`state.call-failed`,
    /// `state.multiple-writers`) in `status` under `code`, and says it on the terminal.
    func countPluginReport(_ code: String, _ message: String)
    /// Stops the bus (the end of a scenario).
    func stop()
}

extension ServiceBus {
    /// Emits an event whose body is already compact JSON (one object); see `ServiceEvent`.
    public func emit(topic: String, bodyJSON: [UInt8], source: String = "broker", corr: String? = nil, deadline: BusTime? = nil,
                     audience: Set<String>? = nil, fact: String? = nil, factValue: [UInt8]? = nil) {
        emit(ServiceEvent(topic: topic, bodyJSON: bodyJSON, source: source, corr: corr, deadline: deadline, audience: audience, fact: fact, factValue: factValue))
    }

    /// Emits an event with a JSON body; see `ServiceEvent`.
    public func emit(topic: String, body: JSONValue, source: String = "broker", corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil) {
        emit(topic: topic, bodyJSON: body.jsonBytes, source: source, corr: corr, deadline: deadline, audience: audience)
    }

    /// Whether a plugin of `role` is connected.
    public func isConnected(role: Role) -> Bool { isConnected(role: role, among: nil) }
}

/// The broker's `ServiceBus`: each call asks the broker's part that does it.
public struct BrokerBus: ServiceBus {
    unowned let broker: Broker

    public func emit(_ event: ServiceEvent) {
        broker.outbox.emit(topic: event.topic, bodyJSON: event.bodyJSON, source: event.source, corr: event.corr, deadline: event.deadline,
                           audience: event.audience, fact: event.fact, factValue: event.factValue)
    }

    public var announced: [String: [UInt8]] { broker.sequencer.announced }
    public var now: BusTime { broker.clock.now() }

    @discardableResult
    public func schedule(at time: BusTime, _ action: @escaping () -> Void) -> UInt64 { broker.time.schedule(at: time, action) }
    public func cancel(_ timer: UInt64) { broker.time.cancel(timer) }

    @discardableResult
    public func afterWallTime(milliseconds: Int64, _ action: @escaping () -> Void) -> UInt64 {
        broker.time.scheduleWall(at: monotonicMilliseconds() + milliseconds, action)
    }
    public func cancelWallTimer(_ timer: UInt64) { broker.time.cancelWall(timer) }

    public func afterAnswerTime(for corr: String, milliseconds: Int64, _ action: @escaping () -> Void) {
        broker.answerTimers.add(corr: corr, milliseconds: milliseconds, action: action)
    }
    public func cancelAnswerTime(for corr: String) { broker.answerTimers.cancel(corr: corr) }

    public func whenReady(_ action: @escaping () -> Void) { broker.readiness.whenReady(action) }
    public func whenQuiet(_ action: @escaping () -> Void) { broker.time.whenQuiet(action) }

    public func isSubscribed(_ topic: String) -> Bool { broker.isSubscribed(topic) }

    public func isConnected(role: Role, among audience: Set<String>?) -> Bool {
        guard let audience else { return broker.sessions.all.contains { $0.role == role } }
        return audience.contains { broker.sessions.named($0)?.role == role }
    }

    public func pluginsThatCouldNotAct(since seq: UInt64) -> [(name: String, why: String)] {
        broker.supervisor.plugins.compactMap { plugin in
            let name = plugin.spec.name
            guard let why = plugin.outOfAction else { return nil }
            let missed = broker.router.lastUnreached[name].map { $0 > seq } ?? false
            let neverConnected: Bool
            if case .failed = plugin.state { neverConnected = broker.sessions.lastSubscriptions(of: name) == nil } else { neverConnected = false }
            return missed || neverConnected ? (name, why) : nil
        }
    }

    public func isSupervisedPlugin(_ name: String) -> Bool { broker.settings.plugins.contains { $0.name == name } }

    public func restartAllPlugins(reason: String) { broker.restarts.restart(reason: reason) }
    public func restartPlugin(named name: String, reason: String) { broker.restarts.restart(named: name, reason: reason) }
    public func setPluginSetting(_ key: String, _ value: JSONValue) { broker.reception.pluginSettings[key] = value }
    public func crashAndRestart() { broker.restarts.crashAndRestart() }

    public func reportStorageFailure(_ message: String) { broker.recorder.reportStorageFailure(message) }

    public func countPluginReport(_ code: String, _ message: String) {
        broker.statistics.countError(code)
        broker.logger.warning("\(message)")
    }

    public func stop() { broker.stop() }
}
