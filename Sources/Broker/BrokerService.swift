// BrokerService: the broker's in-process parts (the device OS), and what they may do on the bus.

import BusClient
import BusProtocol

/// An in-process part of the broker — the device OS's clock, enforcement and scheduling — that sees events
/// like a plugin does and emits events through the sequencer.
public protocol BrokerService: AnyObject {
    /// Topic prefixes this service receives.
    var subscriptions: [String] { get }
    /// Called once before the broker starts serving.
    func attach(to bus: BrokerBus)
    /// Called for each matching event, in sequence order.
    func handle(_ envelope: Envelope)
    /// Whether the service waits for a reply: virtual time does not advance meanwhile.
    var isAwaitingReplies: Bool { get }
}

extension BrokerService {
    public var isAwaitingReplies: Bool { false }
}

/// What a service may do on the bus: emit events (sequenced after the current one), read the clock,
/// set timers, and ask which plugins are connected.
public struct BrokerBus {
    unowned let broker: Broker

    /// Emits an event from `source` (default "broker"). With an `audience` (one product's plugins), only those
    /// plugins and taps receive it, and a request addressed to a role goes to that role's holder among them.
    public func emit(topic: String, body: JSONValue, source: String = "broker", corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil) {
        broker.outbox.emit(topic: topic, body: body, source: source, corr: corr, deadline: deadline, audience: audience)
    }

    /// Emits an event whose body is already compact JSON (one object). With a `fact`, the event states that fact of
    /// the service's durable state — its whole current value, the body unless `factValue` gives it: the broker keeps
    /// the value as what the journal last said of it, saved in bus.sqlite with the batch that journals the event
    /// (`announced`).
    public func emit(topic: String, bodyJSON: [UInt8], source: String = "broker", corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil,
                     fact: String? = nil, factValue: [UInt8]? = nil) {
        broker.outbox.emit(topic: topic, bodyJSON: bodyJSON, source: source, corr: corr, deadline: deadline, audience: audience, fact: fact, factValue: factValue)
    }

    /// What the journal last said of each fact (`emit(…, fact:)`), by fact: the value stated by the last event stating it —
    /// on a restarted broker, the last one its predecessor saved, which is what a resumed journal keeps. A service
    /// whose state was saved at once finds there what a broker killed before the save never journaled.
    public var announced: [String: [UInt8]] { broker.sequencer.announced }

    /// Bus time now.
    public var now: BusTime { broker.clock.now() }

    /// The clock's mode.
    public var clockMode: ClockMode { broker.clock.clockMode }

    /// Runs `action` at bus time `time`; returns an id for `cancel`.
    @discardableResult
    public func schedule(at time: BusTime, _ action: @escaping () -> Void) -> UInt64 { broker.time.schedule(at: time, action) }

    public func cancel(_ timer: UInt64) { broker.time.cancel(timer) }

    /// Runs `action` after `milliseconds` of wall time (reply deadlines).
    @discardableResult
    public func afterWallTime(milliseconds: Int64, _ action: @escaping () -> Void) -> UInt64 {
        broker.time.scheduleWall(at: monotonicMilliseconds() + milliseconds, action)
    }

    public func cancelWallTimer(_ timer: UInt64) { broker.time.cancelWall(timer) }

    /// Runs `action` once the plugin that the request `corr`, emitted next, goes to has had it for `milliseconds` of wall
    /// time (a reply deadline) — counted from the turn it is handed the request, never from the request: in virtual
    /// time how long it waits for other plugins' turns, or for its plugin's next process, is process timing. At once
    /// when no plugin will take it. `cancelAnswerTime` when the reply came.
    public func afterAnswerTime(for corr: String, milliseconds: Int64, _ action: @escaping () -> Void) {
        broker.answerTimers.add(corr: corr, milliseconds: milliseconds, action: action)
    }

    public func cancelAnswerTime(for corr: String) { broker.answerTimers.cancel(corr: corr) }

    /// Runs `action` once every configured plugin has connected and `bus.ready` went out.
    public func whenReady(_ action: @escaping () -> Void) { broker.readiness.whenReady(action) }

    /// Runs `action` once everything delivered so far has been handled.
    public func whenQuiet(_ action: @escaping () -> Void) { broker.time.whenQuiet(action) }

    /// Whether a plugin or a service receives events on `topic` (taps and tools only watch: they do not count).
    public func isSubscribed(_ topic: String) -> Bool { broker.isSubscribed(topic) }

    /// Whether a plugin of `role` is connected (among `audience`, one product's plugins, when given).
    public func isConnected(role: Role, among audience: Set<String>? = nil) -> Bool {
        guard let audience else { return broker.sessions.all.contains { $0.role == role } }
        return audience.contains { broker.sessions.named($0)?.role == role }
    }

    /// The supervised plugins that could not act on what was sequenced after `seq`, with why: each is given up on or
    /// stopped and was subscribed to an event sequenced since — or was given up on without ever connecting, so
    /// what it would have wanted is unknown and nothing it would have done can be vouched for.
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

    /// Whether `name` is a plugin the broker starts (from the configuration), not an outside client.
    public func isSupervisedPlugin(_ name: String) -> Bool { broker.settings.plugins.contains { $0.name == name } }

    /// Kills a supervised plugin's process (a force-quit); the supervisor restarts it by its policy.
    public func killPlugin(named name: String, reason: String) { broker.supervisor.killUnresponsive(name: name, reason: reason) }

    /// Kills and restarts every supervised plugin (a device restart).
    public func restartAllPlugins(reason: String) { broker.restarts.restart(reason: reason) }

    /// Kills and restarts one plugin at once, without counting a failure (an app force-quit by the person).
    public func restartPlugin(named name: String, reason: String) { broker.restarts.restart(named: name, reason: reason) }

    /// Sets a fact that plugins (re)starting from now on find in their welcome's `settings`.
    public func setPluginSetting(_ key: String, _ value: JSONValue) { broker.reception.pluginSettings[key] = value }

    /// The broker is killed and starts again on the same state (a scenario's `crashBroker`): deliveries waiting in
    /// mailboxes and pending requests are lost, every plugin is killed and started again, and the journal shows
    /// `bus.started {clock, after: "crash"}`. Timers of services stay: the services reload and re-plan them.
    public func crashAndRestart() { broker.restarts.crashAndRestart() }

    /// Reports that state could not be written: on the terminal, in `status` (`storageErrors`,
    /// `lastStorageError`) and as a `bus.error` `storage-failed`.
    public func reportStorageFailure(_ message: String) { broker.recorder.reportStorageFailure(message) }

    /// Counts a plugin's report of what iOS would have let pass silently (`state.call-failed`,
    /// `state.multiple-writers`) in `status` under `code`, and says it on the terminal.
    public func countPluginReport(_ code: String, _ message: String) {
        broker.statistics.countError(code)
        broker.logger.warning("\(message)")
    }

    /// Stops the broker (the end of a scenario).
    public func stop() { broker.stop() }
}
