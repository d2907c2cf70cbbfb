// Reception: sessions begin and end here — hellos admitted or refused, welcomes, goodbyes, and refusals of bad messages.

import BusClient
import BusProtocol
import Logging

/// Admits a hello by `Admission`'s rules, opens its session and welcomes it; ends sessions (a goodbye, a timeout, a
/// process that exited), giving what a plugin's process left unacknowledged back to the ledger; answers a bad message
/// with an `error` and, when it is news, a `bus.error`.
final class Reception {
    /// Facts for plugins set while running (the device clock): they override `settings.settingsForPlugins`.
    var pluginSettings: [String: JSONValue] = [:]

    /// The welcome's setting `key` as it stands now.
    func welcomeSetting(_ key: String) -> JSONValue? { pluginSettings[key] ?? settings.settingsForPlugins[key] }
    private let admission: Admission
    /// The transport admitted every peer by its key (CURVE on tcp), which admits an outside client as the cookie does.
    private let admitsByKey: Bool
    private let supervisor: PluginSupervisor
    private let sessions: SessionTable
    private let readiness: Readiness
    private let dispatcher: Dispatcher
    private let ledger: DeliveryLedger
    private let requests: OpenRequests
    private let turns: TurnQueue
    private let outbox: Outbox
    private let statistics: BusStatistics
    private let settings: BrokerSettings
    private let clock: BusClock
    private let logger: Logger
    private var refusalLog = RefusalLog()
    private var helloRate = HelloRate()

    struct Parts {
        let supervisor: PluginSupervisor, sessions: SessionTable, readiness: Readiness, dispatcher: Dispatcher, ledger: DeliveryLedger
        let requests: OpenRequests, turns: TurnQueue, outbox: Outbox, statistics: BusStatistics
    }

    init(admission: Admission, admitsByKey: Bool, parts: Parts, settings: BrokerSettings, clock: BusClock, logger: Logger) {
        (self.admission, self.admitsByKey, self.settings, self.clock, self.logger) = (admission, admitsByKey, settings, clock, logger)
        (supervisor, sessions, readiness, dispatcher, ledger) = (parts.supervisor, parts.sessions, parts.readiness, parts.dispatcher, parts.ledger)
        (requests, turns, outbox, statistics) = (parts.requests, parts.turns, parts.outbox, parts.statistics)
    }

    /// Whether `credential` may see the full status report (a session is trusted already).
    func isTrusted(_ credential: String?) -> Bool { admission.isTrusted(credential, plugins: supervisor.plugins) }

    /// Admits `hello` from `identity` and welcomes it (`lastSeq`: the bus's sequence number now; `firstSeq`: this run's
    /// first), or refuses it.
    func welcome(_ identity: [UInt8], _ hello: Hello, lastSeq: UInt64, firstSeq: UInt64) {
        // A client that heard nothing for a while (the broker was stopped, or starved of CPU on a busy machine) asks to
        // resume the session it opened on this connection: it goes on untouched — nothing handed back, no turn or
        // request lost, no `plugin.up` — so how long the broker went without running leaves no trace on the bus.
        // A supervised plugin resumes only while its credential lives, as every hello is admitted: an impostor on a
        // reused connection identity with a copied credential falls through to admission and is refused there.
        if hello.resume, let current = sessions[identity: identity], current.openingHello == hello.opening,
           !current.isSupervised || BusCredential.matches(hello.credential, supervisor.plugin(named: hello.name)?.liveCredential) {
            let now = monotonicMilliseconds()
            current.lastHeard = now
            // One resumed welcome a heartbeat: a client asks again at most that often, and copies queued behind
            // each other during a stall need no answer each.
            if let last = current.lastResumedAt, now - last < settings.heartbeatMilliseconds { return }
            current.lastResumedAt = now
            let welcome = Welcome(name: hello.name, time: clock.now(), seq: lastSeq, clock: clock.mode,
                                  heartbeatMilliseconds: settings.heartbeatMilliseconds, firstSeq: firstSeq, resumed: true)
            dispatcher.send(WireCodec.encode(.welcome(welcome)), to: identity)
            return
        }
        // A client that thinks the broker gone says hello again every little while; a broker that was stopped finds
        // them queued behind each other. The first opened a session; a copy of it within a heartbeat of its welcome
        // was sent before the client could read that welcome, and opens nothing more.
        if let current = sessions[identity: identity], current.openingHello == hello.opening,
           monotonicMilliseconds() - current.connectedAt < settings.heartbeatMilliseconds {
            current.lastHeard = monotonicMilliseconds()
            return
        }
        if let previous = sessions[identity: identity] {
            // The same process saying hello again on its connection (it thought the broker gone, during a stall) has
            // not crashed: what it had not acknowledged goes back to its mailbox without counting against an event.
            let sameProcess = previous.isSupervised && previous.name == hello.name
                && BusCredential.matches(hello.credential, supervisor.plugin(named: hello.name)?.liveCredential)
            forget(previous, saidBye: sameProcess)
        }
        let admitted: Admission.Admitted
        switch admission.admit(hello, plugins: supervisor.plugins, keyAdmitted: admitsByKey) {
        case .success(let result): admitted = result
        case .failure(let refusal): return refuse(identity, session: nil, refusal)
        }
        if let problem = Admission.subscriptionProblem(hello) { return refuse(identity, session: nil, problem) }
        if case .outside(let actsForPerson) = admitted {
            guard helloRate.take(actsForPerson: actsForPerson, now: monotonicMilliseconds()) else {
                return refuse(identity, session: nil, .tooManyHellos(perSecond: HelloRate.perSecond))
            }
            if sessions.all.lazy.filter({ !$0.isSupervised && $0.actsForPerson == actsForPerson }).count >= Admission.sessionsPerCredential {
                return refuse(identity, session: nil, .tooManySessions(limit: Admission.sessionsPerCredential))
            }
        }
        if let mismatch = supervisor.roleMismatch(hello) {
            supervisor.recordRefusedHello(name: hello.name, credential: hello.credential, mismatch)
            return refuse(identity, session: nil, mismatch)
        }
        if let sameName = sessions.named(hello.name) {
            if case .supervised(let plugin) = admitted, plugin.connection == sameName.identity,
               monotonicMilliseconds() - sameName.lastHeard <= 2 * settings.heartbeatMilliseconds {
                // The current run holds its connection, alive: a second one presenting its credential copied it. (One
                // silent for two heartbeats may be the run's own connection lost in transport: the new one replaces it.)
                return refuse(identity, session: nil, .nameTaken(hello.name))
            } else if case .supervised = admitted {
                // Its credential proves it is the current run: the old connection's goodbye is still on its way.
                remove(sameName, reason: "replaced by its new connection")
            } else {
                // Two live clients under one name would take it from each other forever: the second is refused.
                return refuse(identity, session: nil, .nameTaken(hello.name))
            }
        }
        let session = Session(identity: identity, hello: hello, now: monotonicMilliseconds())
        switch admitted {
        case .supervised(let plugin):
            session.actsForPerson = plugin.spec.personInput
            session.isSupervised = true
        case .outside(let actsForPerson):
            session.actsForPerson = actsForPerson
        }
        sessions.add(session)
        // `ready` tells a plugin whether to start its work now or on `bus.ready` (so start-up order is deterministic).
        var welcomeSettings = (settings.settingsForPlugins.objectValue ?? [:]).merging(pluginSettings) { _, now in now }
        // A supervised plugin (re)started after bus.ready gets its own bus.ready, in turn, through the sequencer.
        let isSupervised = supervisor.plugin(named: hello.name) != nil
        welcomeSettings["ready"] = .bool(readiness.isReady && !isSupervised)
        // Plugins run their device clock on between events at this speed (`Date()` inside a plugin).
        if case .scaled(let speed) = clock.clockMode { welcomeSettings["clockSpeed"] = .double(clock.isPaused ? 0 : speed) }
        let welcome = Welcome(name: hello.name, time: clock.now(), seq: lastSeq, clock: clock.mode,
                              heartbeatMilliseconds: settings.heartbeatMilliseconds, settings: .object(welcomeSettings), firstSeq: firstSeq)
        dispatcher.send(WireCodec.encode(.welcome(welcome)), to: identity)
        // Before bus.ready, supervised plugins are announced together, in configuration order.
        if !isSupervised { readiness.announceUp(session) }
        if isSupervised {
            supervisor.saidHello(name: hello.name, connection: identity)
            sessions.noteSubscriptions(of: hello)
            session.isDurable = true
            // Until it has had what it missed, new events wait for it in the ledger, behind the old ones.
            session.isCatchingUp = readiness.isReady || !ledger.undelivered(of: hello.name).isEmpty
        }
        if readiness.isReady && isSupervised { readiness.pluginReturned(hello.name) }
        readiness.check()
    }

    /// Ends `session` and, for a plugin, says so (`plugin.down`).
    func remove(_ session: Session, reason: String) {
        forget(session, saidBye: reason == "bye")
        if reason == "bye" { supervisor.saidBye(name: session.name, connection: session.identity) }
        guard !session.isTapOrTool else { return }
        outbox.emit(topic: "plugin.down", body: ["name": .string(session.name), "reason": .string(reason)])
    }

    /// Ends a session. Its unacknowledged events go back to the ledger for the plugin's next process; only an
    /// end without `bye` (a crash, a kill) counts against the event it had in hand.
    func forget(_ session: Session, saidBye: Bool = false) {
        if session.isDurable, let abandoned = ledger.processEnded(session.name, crashed: !saidBye) { reportAbandoned(abandoned, by: session.name) }
        sessions.remove(session)
        requests.forget(requester: session.identity)
        turns.forget(session)
    }

    /// Answers a bad message: an `error` to its sender, a `bus.error` event for everyone, and a count.
    /// The housekeeping messages of a connection whose session ended (its last ack or heartbeat) get only the
    /// `error` that tells it to say hello again: they are no news, and journaling them would depend on timing.
    func refuse(_ identity: [UInt8], session: Session?, _ error: BusProtocolError) {
        if session == nil, case .helloRequired(let kind) = error, kind != "publish" || sessions.hasEnded(identity) {
            statistics.countError(error.code)
            dispatcher.send(WireCodec.encode(.error(ErrorReport(error))), to: identity)
            return
        }
        session?.errors += 1
        session?.lastError = error.description
        let sender = session?.name ?? hexIdentity(identity)
        let refusals = refusalLog.refusal(error.code, now: monotonicMilliseconds())
        if let refusals {
            logger.warning("refused a message", metadata: ["sender": "\(sender)", "code": "\(error.code)", "reason": "\(error.description)",
                                                           "refusals": "\(refusals)"])
        }
        dispatcher.send(WireCodec.encode(.error(ErrorReport(error))), to: identity)
        if Self.saidWithTheLogLine(error) {
            // A crowd's refusals, said on the bus as in the log: one event a second with their count. An event for
            // each would cost every subscriber a copy of each hello the bound refused, and the journal a line.
            guard let refusals, outbox.count < Outbox.waitingLimit else { return statistics.countError(error.code) }
            outbox.reportError(error.code, sender: sender, message: error.description, details: ["refusals": .int(Int64(refusals))], countedIn: statistics)
        } else if outbox.count >= Outbox.waitingLimit {
            // While nothing can be numbered a refusal's bus.error would wait in the full outbox too: counted only.
            statistics.countError(error.code)
        } else {
            outbox.reportError(error.code, sender: sender, message: error.description, countedIn: statistics)
        }
    }

    /// Refusals of the bounds on outside clients' hellos and sessions: a crowd's, cheap by design, and only outside
    /// clients get them (a run's own plugins never do, so a journal of a run never depends on their timing).
    private static func saidWithTheLogLine(_ error: BusProtocolError) -> Bool {
        switch error {
        case .tooManyHellos, .tooManySessions: return true
        default: return false
        }
    }

    /// The name of the client holding `role` (among `audience`, one product's plugins): the configured plugin, else a
    /// connected outside client granted it.
    func holder(of role: Role, among audience: Set<String>?) -> String? {
        let candidate = { (name: String) in audience?.contains(name) ?? true }
        return supervisor.plugins.first { $0.spec.role == role && candidate($0.spec.name) }?.spec.name
            ?? sessions.all.first { $0.role == role && candidate($0.name) }?.name
    }

    private func reportAbandoned(_ entry: DeliveryLedger.Entry, by plugin: String) {
        let topic = (try? WireCodec.decodeEnvelope(entry.json).topic) ?? "?"
        logger.error("delivery abandoned", metadata: ["plugin": "\(plugin)", "seq": "\(entry.seq)", "topic": "\(topic)"])
        outbox.reportError("delivery-abandoned", sender: "broker",
                           message: "\(plugin) ended \(DeliveryLedger.endingsBeforeAbandoning) times while handling seq \(entry.seq) (\(topic)); it is not delivered again. See its log",
                           details: ["receiver": .string(plugin), "seq": .int(Int64(entry.seq))], countedIn: statistics)
    }
}
