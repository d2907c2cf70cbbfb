// Readiness: which plugins are connected or coming back, and `bus.ready` — at start-up, and for each plugin that returns.

import BusProtocol

/// The broker is ready once every supervised plugin has connected (or the start-up limit passed): the plugins are
/// announced in configuration order, so the journal does not depend on which process started faster. A plugin that
/// comes back later is announced once every running plugin is connected, with its mailbox and its own `bus.ready`.
final class Readiness {
    /// Set once `bus.ready` went out.
    private(set) var isReady = false
    private var readyActions: [() -> Void] = []
    /// Plugins (re)started after bus.ready that said hello and wait to be announced.
    private var returning = Set<String>()
    private let supervisor: PluginSupervisor
    private let sessions: SessionTable
    private let ledger: DeliveryLedger
    private let dispatcher: Dispatcher
    private let outbox: Outbox
    private let turns: TurnQueue
    private let statistics: BusStatistics
    private let settings: BrokerSettings
    private let clock: BusClock

    init(supervisor: PluginSupervisor, sessions: SessionTable, ledger: DeliveryLedger, dispatcher: Dispatcher, outbox: Outbox,
         turns: TurnQueue, statistics: BusStatistics, settings: BrokerSettings, clock: BusClock) {
        (self.supervisor, self.sessions, self.ledger, self.dispatcher, self.outbox) = (supervisor, sessions, ledger, dispatcher, outbox)
        (self.turns, self.statistics, self.settings, self.clock) = (turns, statistics, settings, clock)
    }

    /// Runs `action` once the bus is ready (at once if it is).
    func whenReady(_ action: @escaping () -> Void) {
        if isReady { action() } else { readyActions.append(action) }
    }

    /// Whether a returning plugin waits to be announced: meanwhile nobody takes a turn.
    var awaitsReturningPlugins: Bool { !returning.isEmpty }

    /// Whether every supervised plugin that is running (or about to restart) has a session.
    /// Found again only when a plugin's state or the sessions' names changed: the loop asks at every pass and every
    /// settled check, and the answer rarely changes.
    var allRunningPluginsConnected: Bool {
        if let found = connectedFound, found.nameChanges == sessions.nameChanges, found.stateChanges == supervisor.stateChangeCount {
            return found.answer
        }
        let answer = supervisor.runningPlugins.allSatisfy { sessions.named($0.spec.name) != nil }
        connectedFound = (sessions.nameChanges, supervisor.stateChangeCount, answer)
        return answer
    }
    private var connectedFound: (nameChanges: UInt64, stateChanges: UInt64, answer: Bool)?

    /// Whether a plugin without a session will come back (it is supervised and running, restarting or waiting for its
    /// storage).
    func isExpectedBack(_ name: String) -> Bool {
        sessions.lastSubscriptions(of: name) != nil && supervisor.plugins.contains { $0.spec.name == name && $0.comesBack }
    }

    /// Whether a plugin that will come back acts on nothing now (it waits for its storage).
    func isOutOfActionNow(_ name: String) -> Bool {
        supervisor.plugin(named: name)?.isWaitingForStorage == true
    }

    /// Whether `name`'s session, or its next process, gets events on `topic`.
    func willReceive(_ topic: String, _ name: String) -> Bool {
        if let session = sessions.named(name) { return session.wants(topic) }
        return isExpectedBack(name, wanting: topic)
    }

    /// Whether plugin `name`, away between two processes, comes back subscribed to `topic` (its mailbox keeps it).
    func isExpectedBack(_ name: String, wanting topic: String) -> Bool {
        isExpectedBack(name) && wasSubscribed(name, to: topic)
    }

    /// Whether supervised plugin `name` was subscribed to `topic` in its last session.
    func wasSubscribed(_ name: String, to topic: String) -> Bool {
        sessions.lastSubscriptions(of: name)?.wants(topic) ?? false
    }

    /// Whether supervised plugin `name`'s last session would have got `event` (its topic, and the App-Group key it
    /// changes when the session watched keys).
    func wasSubscribed(_ name: String, to event: PendingEvent, changed: inout ChangedKeyReading) -> Bool {
        sessions.lastSubscriptions(of: name)?.wants(event, changed: &changed) ?? false
    }

    /// Becomes ready if every supervised plugin has connected.
    func check() {
        guard !isReady else { return }
        if supervisor.expectedPluginNames.allSatisfy({ sessions.named($0) != nil }) { becomeReady() }
    }

    /// Announces the connected plugins in configuration order (and the missing ones as `startup-timeout`), hands over
    /// what a previous broker left unacknowledged, says `bus.ready`, and runs what waited for it.
    func becomeReady() {
        guard !isReady else { return }
        isReady = true
        if clock.isVirtual { turns.begin() }
        for plugin in supervisor.plugins {
            if let session = sessions.named(plugin.spec.name) { announceUp(session) }
        }
        let missing = supervisor.expectedPluginNames.filter { sessions.named($0) == nil }.sorted()
        if !missing.isEmpty {
            outbox.reportError("startup-timeout", sender: "broker",
                               message: "plugin(s) \(missing.joined(separator: ", ")) did not connect within \(settings.startupTimeoutMilliseconds) ms; see their logs in \(settings.runtimeDirectory.logsPath)",
                               countedIn: statistics)
        }
        // What a previous broker left unacknowledged goes first, before bus.ready and anything new.
        for session in sessions.all where session.isCatchingUp { catchUp(session) }
        outbox.emit(topic: "bus.ready", body: ["plugins": .array(supervisor.plugins.map { .string($0.spec.name) }), "startup": true])
        outbox.drain()
        let actions = readyActions
        readyActions = []
        for action in actions { action() }
        outbox.drain()
    }

    /// A supervised plugin said hello after bus.ready: it is announced once every running plugin is connected.
    func pluginReturned(_ name: String) {
        returning.insert(name)
        welcomeReturningPlugins()
    }

    /// Once every running plugin is connected, announces the returning ones in configuration order — each
    /// with its own bus.ready and its mailbox — so a restart's journal does not depend on process timing.
    func welcomeReturningPlugins() {
        guard !returning.isEmpty, allRunningPluginsConnected else { return }
        for plugin in supervisor.plugins where returning.contains(plugin.spec.name) {
            guard let session = sessions.named(plugin.spec.name) else { continue }
            announceUp(session)
            catchUp(session)
            outbox.emit(topic: "bus.ready", body: ["plugins": [.string(plugin.spec.name)]])
            outbox.drain()
        }
        returning = []
    }

    /// `plugin.up`, for plugins only: taps and tools come and go without a trace in the journal.
    func announceUp(_ session: Session) {
        guard !session.isTapOrTool else { return }
        outbox.emit(topic: "plugin.up", body: [
            "name": .string(session.name), "role": .string(session.role.rawValue),
            "subscribe": .array(session.subscriptions.map(JSONValue.string)),
        ])
    }

    /// Hands a returning plugin what it missed — what its last process did not acknowledge, and what arrived
    /// while it was away — in sequence order, at once and just before its own bus.ready (which it waits for,
    /// holding them): so its acknowledgement of bus.ready covers them all, and no turn passes meanwhile.
    /// From now on its new events are delivered as they come.
    ///
    /// A `bus.ready` that announced an earlier process of the plugin is not handed over but dropped: that process
    /// ended before acknowledging it (a short-lived extension acknowledges the callback it was started for and
    /// leaves its bus.ready, so that no turn passes before its goodbye). Handed to the next process among what it
    /// missed, it would start that process's work at once — outside its turn, while another plugin has its own — and
    /// the journal would depend on which process ran faster. Its own bus.ready follows.
    private func catchUp(_ session: Session) {
        session.isCatchingUp = false
        for item in ledger.undelivered(of: session.name) {
            if Self.announcesAProcess(of: session.name, item.json) {
                ledger.discard(seq: item.seq, of: session.name)
                continue
            }
            dispatcher.deliver(item.envelope, seq: item.seq, to: session)
        }
    }

    /// Whether `json` is a `bus.ready` that names plugin `name` — the bus's first (naming every plugin) or the one
    /// that announced a process of it after a restart.
    static func announcesAProcess(of name: String, _ json: [UInt8]) -> Bool {
        guard let envelope = try? WireCodec.decodeEnvelope(json), envelope.topic == "bus.ready" else { return false }
        return envelope.bodyValue["plugins"]?.arrayValue?.contains(.string(name)) ?? false
    }
}
