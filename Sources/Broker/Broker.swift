// Broker: the bus — its parts, composed, and the loop that serves its peers over a transport.

import BusClient
import BusProtocol
import Foundation
import Logging

/// The broker process's core: every plugin, tap and tool talks to it over one transport (libzmq in production).
///
/// It is the sequencer: every event that enters the bus — its own or a plugin's — gets the next gap-free
/// sequence number and the bus time, is journaled, and is delivered in that order to every session whose
/// subscriptions match its topic, each delivery carrying that receiver's own delivery number.
/// Single-threaded: everything happens in `run()`'s loop. Each job is a part of its own (docs/architecture.md
/// § 1.1); this class wires them, turns the loop, and sequences each batch. Why past 500 lines: the wiring of every
/// part and the hooks they call back through (sequencing, turns, laggards) share the loop's private state.
public final class Broker {
    public let settings: BrokerSettings
    public let clock: BusClock
    let logger: Logger

    private var services: [BrokerService] = []
    /// Each service's subscriptions as read when it was added: what a service receives is fixed then, whatever its
    /// property answers later.
    private var servicePrefixes: [[String]] = []
    /// By topic, the services that receive it, found once: every event sequenced asks, and the clock asks about its
    /// tick at every bus minute. Bounded: plugins' topics are many.
    private var servicesByTopic: [String: [BrokerService]] = [:]
    /// Called for every sequenced event (the command line's timeline printer, tests).
    private var eventObservers: [(Envelope) -> Void] = []
    private var journalOpened: ((UInt64) throws -> Void)?
    /// The batch's events the observers have not seen yet: they see them once the batch is sent, so that what they
    /// do (formatting the timeline, the lock invariant's reading) does not hold up what plugins wait for.
    private var unobserved: [Envelope] = []
    /// Batches sequenced and journaled that `bus.sqlite` does not hold yet: one save covers them all, made before
    /// anything is sent (`Dispatcher.saveBeforeSending`), before a timer acts (`QuietBus.saveSequenced`) or at the end
    /// of the loop's pass, so the batches of a pass that send nothing — a plugin's publications waiting in the turn
    /// queue for its turn's end — share one commit with what the pass sends next.
    private var saveOwed = false
    private var stopRequested = false
    /// Starts the configured plugins on threads of this process instead of as processes: tests only, set before `open`.
    var inProcessLauncher: InProcessLauncher?
    private let startedAt = monotonicMilliseconds()
    /// Each configured plugin's place in the configuration: the order of announcements and of released publications.
    private let configurationOrder: [String: Int]
    /// The last message received: its arrays' storage serves the next one (nothing kept from it is touched).
    private var received: [[UInt8]] = []
    /// Whether a child may have ended since the last reaping. With the signal pipe, SIGCHLD and the templates'
    /// channels wake the loop, so a pass that was not woken need not ask the kernel (a `wait4` and a `recvmsg` per
    /// template); without it (a broker a test drives), every pass reaps.
    private var childrenMayHaveEnded = true
    /// What the supervisor told of the plugins while the run opened (they start before `bus.started`): told after it.
    private var heldLifecycle: [(String, String, JSONValue)]?

    // The parts that need nothing of a run's state. Those not private serve `BrokerBus`: a service asks the part itself.
    let statistics = BusStatistics()
    /// Each supervised plugin's events not yet acknowledged: its mailbox while it is between two processes.
    let ledger: DeliveryLedger
    let outbox = Outbox()
    private let held: HeldPublications
    private(set) var sequencer = Sequencer()
    private let requests: OpenRequests
    let time: TimeKeeper
    let answerTimers: AnswerTimers
    private let turns = TurnQueue()
    let sessions = SessionTable()
    private var heartbeats: Heartbeats
    private var freedMemory = FreedMemoryReturn()
    private let crashPoints: CrashPoints
    let recorder: Recorder

    // The parts a run makes when it opens: they need its transport or its plugins' supervisor.
    private var transport: BusTransport?
    private var signals: SignalPipe?
    /// What wakes the loop besides peers: the signal pipe and the launch templates' channels.
    private var wakeSet: WakeSet?
    private(set) var supervisor: PluginSupervisor!
    /// The last look at each lagging plugin's process, while virtual time waits for its acknowledgements.
    private var laggards = LaggardReadings()
    /// Plugins' processes started and not yet said hello past `bus.startupTimeoutMs`.
    private var lateStarts: LateStarts!
    /// Readings of the processes of plugins whose sessions fell silent past `bus.sessionTimeoutMs` (virtual time).
    private var silences = ProgressWatch<String>()
    private var dispatcher: Dispatcher!
    private(set) var readiness: Readiness!
    private(set) var reception: Reception!
    private(set) var router: EventRouter!
    private var intake: Intake!
    private(set) var restarts: PluginRestarts!

    public init(settings: BrokerSettings, clock: BusClock = BusClock(mode: .real), logger: Logger = Logger(label: "shieldbus.broker")) {
        self.settings = settings
        self.clock = clock
        self.logger = logger
        configurationOrder = Dictionary(settings.plugins.enumerated().map { ($0.element.name, $0.offset) }, uniquingKeysWith: { first, _ in first })
        ledger = DeliveryLedger(limit: settings.deliveryLogLimit, store: nil)
        held = HeldPublications(ledger: ledger)
        requests = OpenRequests(table: settings.table,
                                declaredNamespaces: Authority.declaredNamespaces(plugins: settings.plugins, clients: settings.outsideClients))
        time = TimeKeeper(clock: clock, acknowledgementTimeout: settings.acknowledgementTimeoutMilliseconds)
        answerTimers = AnswerTimers(time: time)
        heartbeats = Heartbeats(interval: settings.heartbeatMilliseconds, now: monotonicMilliseconds())
        crashPoints = CrashPoints(point: settings.crashPoint, occurrence: settings.crashOccurrence, logger: logger)
        recorder = Recorder(ledger: ledger, outbox: outbox, statistics: statistics, clock: clock, logger: logger)
        outbox.drainer = self
        time.bus = self
        addService(ClockControl(clock: clock, time: time))
        addService(PluginAdministration(broker: self))
    }

    /// Adds an in-process component (the device OS's parts) that receives events like a plugin and may emit events.
    public func addService(_ service: BrokerService) {
        services.append(service)
        servicePrefixes.append(service.subscriptions)
        servicesByTopic.removeAll()
    }

    /// Calls `observer` with every sequenced event, in order, on the broker's thread, once its batch is journaled
    /// and sent (and saved, if it sent anything).
    public func observeEvents(_ observer: @escaping (Envelope) -> Void) {
        eventObservers.append(observer)
    }

    /// `body` is handed, once the journal is open and before any event of this run, how many bytes of the previous
    /// runs' journal it kept (0 unless resumed): lines past the last save were cut off, journaled again when
    /// published again, so a resumed run's check reads only what is kept. A throw stops the run from starting.
    public func whenJournalOpened(_ body: @escaping (_ keptBytes: UInt64) throws -> Void) {
        journalOpened = body
    }

    // MARK: Running

    /// Takes the runtime directory (unless `lock` says it is taken already), binds, starts the plugins, and
    /// serves until SIGINT/SIGTERM or `stop()`. Then stops the plugins and cleans up: no child processes, no socket files.
    public func run(lock taken: RuntimeLock? = nil, onReady: (() -> Void)? = nil) throws {
        let lock = try taken ?? RuntimeLock(settings.runtimeDirectory)
        defer { lock.release() }
        if lock.removedStaleSocket {
            logger.warning("removed a stale bus socket left by a broker that did not shut down", metadata: ["runtime_dir": "\(settings.runtimeDirectory.path)"])
        }
        let endpoint = try ZeroMQTransport.endpoint(settings.bindEndpoint)
        try open(lock: lock, handlingSignals: true) { [settings, logger, statistics] in
            try ZeroMQTransport(endpoint, settings: settings, lock: lock, logger: logger, countRefusal: statistics.countError)
        }
        defer { close() }
        onReady?()
        while !stopRequested { try serveOnce() }
        shutDown()
    }

    /// Opens a run on the transport `makeTransport` makes: the cookie, the transport, the parts composed and the
    /// services attached, the plugins started; then, while they start, the delivery store, the endpoint published in
    /// the runtime directory and the journal; then `bus.started` sequenced, and `serveOnce` turns the loop.
    /// `handlingSignals`: SIGINT and SIGTERM stop the loop and SIGCHLD reaps (a process's own broker, not one a test
    /// drives).
    func open(lock: RuntimeLock, handlingSignals: Bool, transport makeTransport: () throws -> BusTransport) throws {
        // Before the endpoint is published: a client that finds the broker finds its cookie.
        let admission = Admission(cookie: try BusCookie.establish(at: settings.runtimeDirectory.cookiePath),
                                  toolCredential: try BusCookie.establish(at: settings.runtimeDirectory.toolCredentialPath),
                                  grants: settings.outsideClients, table: settings.table, runtimeDirectory: settings.runtimeDirectory)
        let transport = try makeTransport()
        self.transport = transport
        // What wakes the loop besides peers: launch templates' channels always, the signal pipe when signals are ours.
        let wakeSet = WakeSet()
        if handlingSignals {
            let signals = SignalPipe()
            wakeSet.watch(signals.readDescriptor)
            self.signals = signals
        }
        self.wakeSet = wakeSet
        compose(transport, admission: admission)
        // Before the plugins start: a service's attach sets what each launch is given (the device's zone, `TZ`).
        for service in services { service.attach(to: BrokerBus(broker: self)) }
        // The plugins start now, bound to, while the broker opens its delivery store and journal: their starts (the
        // sandbox, the program's loading, their stores) overlap the broker's. Nothing reaches them, and nothing of
        // theirs is taken in, before the loop's first pass, after both are open: no event is sent before the ledger
        // is durable. What the supervisor tells of them meanwhile is held and told after `bus.started`, in order, as
        // if they had started then.
        heldLifecycle = []
        supervisor.startAll()
        let restored: Recorder.Restored
        do {
            restored = try recorder.openDeliveryStore(path: settings.deliveryStorePath, plugins: Set(configurationOrder.keys),
                                                      continuingTheRun: settings.journalAppends)
            try lock.publishEndpoint(transport.endpoint)
            try recorder.openJournal(path: settings.journalPath, appending: settings.journalAppends, keepingThrough: restored.savedSeq)
            try journalOpened?(recorder.journalKept)
        } catch {
            // A run that cannot start leaves no plugin behind.
            supervisor.stopAll(graceMilliseconds: 0, unstarted: "\(error)")
            close()
            throw error
        }
        for service in services { service.whilePluginsStart() }
        sequencer.resume(lastSeq: restored.lastSeq, announced: restored.announced)
        held.restore(restored.held)
        logger.info("broker listening", metadata: ["endpoint": "\(transport.endpoint)", "pid": "\(getpid())"])
        clock.startRunning()
        outbox.emit(topic: "bus.started", body: .object(restarts.startedBody()))
        recorder.busStarted(restartLosses: settings.storeLosses + [restored.restartLoss].compactMap { $0 })
        let started = heldLifecycle ?? []
        heldLifecycle = nil
        for (name, what, detail) in started { tellLifecycle(name, what, detail) }
        outbox.drain()
        time.scheduleWall(at: monotonicMilliseconds() + settings.startupTimeoutMilliseconds) { [unowned self] in startupLimitPassed() }
        readiness.check()
    }

    /// The bus is ready without the plugins not connected yet — in virtual time, once none of them is still starting
    /// at work (`LateStarts`): looked at again a heartbeat later. A start that said hello waits, blocked, for its
    /// welcome: hellos already come are taken in first (the next pass), not judged against their senders.
    private func startupLimitPassed(messagesTakenIn: Bool = false) {
        guard !readiness.isReady else { return }
        let now = monotonicMilliseconds()
        if lateStarts.holdUpReadiness(now: now) {
            time.scheduleWall(at: now + settings.heartbeatMilliseconds) { [unowned self] in startupLimitPassed() }
            return
        }
        if clock.isVirtual, !messagesTakenIn, let probe = try? transport?.wait(timeoutMilliseconds: 0, wakeDescriptor: nil) {
            // The look takes the wake of a run hosted in this process that ended: the loop's next pass looks for it.
            if probe.woken { childrenMayHaveEnded = true }
            if probe.messagesWaiting {
                // A moment later, not now: the timers due now fire before the loop takes anything in.
                time.scheduleWall(at: now + max(1, settings.heartbeatMilliseconds / 10)) { [unowned self] in startupLimitPassed(messagesTakenIn: true) }
                return
            }
        }
        readiness.becomeReady()
    }

    /// Makes the parts that depend on the run and wires them to the rest.
    private func compose(_ transport: BusTransport, admission: Admission) {
        let supervisor = PluginSupervisor(specs: settings.plugins, runtimeDirectory: settings.runtimeDirectory, endpoint: transport.endpoint,
                                          sandbox: settings.sandbox, launchTemplates: settings.launchTemplates, logger: logger,
                                          keepsSandboxes: settings.keptLaunchTemplates != nil)
        supervisor.kept = settings.keptLaunchTemplates
        supervisor.wake = wakeSet
        supervisor.inProcessLauncher = inProcessLauncher
        if let inMemory = transport as? InMemoryTransport { supervisor.wakeLoop = { inMemory.wake() } }
        supervisor.launchTimeZone = { [unowned self] in reception.welcomeSetting("timeZone")?.stringValue }
        if clock.isVirtual { supervisor.failureTime = { [unowned self] in clock.now() } }
        let dispatcher = Dispatcher(transport: transport, ledger: ledger, statistics: statistics, outbox: outbox, answerTimers: answerTimers, turns: turns)
        dispatcher.saveBeforeSending = { [unowned self] in saveSequenced() }
        let readiness = Readiness(supervisor: supervisor, sessions: sessions, ledger: ledger, dispatcher: dispatcher, outbox: outbox, turns: turns,
                                  statistics: statistics, settings: settings, clock: clock)
        reception = Reception(admission: admission, admitsByKey: transport.admitsPeersByKey,
                              parts: Reception.Parts(supervisor: supervisor, sessions: sessions, readiness: readiness, dispatcher: dispatcher, ledger: ledger,
                                                     requests: requests, turns: turns, outbox: outbox, statistics: statistics),
                              settings: settings, clock: clock, logger: logger)
        router = EventRouter(sessions: sessions, readiness: readiness, ledger: ledger, turns: turns, dispatcher: dispatcher, outbox: outbox,
                             statistics: statistics, logger: logger)
        intake = Intake(authority: Authority(plugins: settings.plugins, clients: settings.outsideClients, table: settings.table), requests: requests, reception: reception,
                        ledger: ledger, turns: turns, held: held, outbox: outbox, crashPoints: crashPoints, statistics: statistics)
        answerTimers.process = { [unowned supervisor] name in supervisor.plugin(named: name).flatMap { $0.programPID ?? $0.pid } }
        lateStarts = LateStarts(supervisor: supervisor, sessions: sessions, settings: settings, clock: clock)
        restarts = PluginRestarts(supervisor: supervisor, sessions: sessions, reception: reception, requests: requests, outbox: outbox,
                                  settings: settings, clock: clock)
        (self.supervisor, self.dispatcher, self.readiness) = (supervisor, dispatcher, readiness)
        supervisor.onLifecycle = { [unowned self] name, what, detail in
            if heldLifecycle != nil { return heldLifecycle!.append((name, what, detail)) }
            tellLifecycle(name, what, detail)
        }
    }

    /// Publishes what the supervisor tells of a plugin, and what it means for its session and mailbox.
    private func tellLifecycle(_ name: String, _ what: String, _ detail: JSONValue) {
        var body = detail.objectValue ?? [:]
        body["name"] = .string(name)
        outbox.emit(topic: "plugin.\(what)", body: .object(body))
        // A process that ended has no session any more, whatever its socket last said.
        if what == "exited", let session = sessions.named(name) { reception.remove(session, reason: "process exited") }
        if what == "failed" { ledger.discard(name) }
    }

    /// One pass of the loop: waits for a peer or a signal (at most until something falls due), takes in what came,
    /// keeps house, and moves time on.
    func serveOnce() throws {
        // Also when the pass fails: what it sequenced is not left to a kill's cut while the broker stops.
        defer { saveSequenced() }
        var timeout = pollTimeout()
        var waiting: TransportWake?
        // About to wait (nothing falls due now): `bus.sqlite`'s checkpoint, when owed, runs here, in real time as in
        // virtual time, unless a peer's message or a signal already waits — the commits it would hold up come first.
        if timeout > 0, recorder.deliveryStoreOwesCheckpoint {
            let probe = try transport!.wait(timeoutMilliseconds: 0, wakeDescriptor: wakeSet?.descriptor)
            if probe.messagesWaiting || probe.woken {
                (waiting, timeout) = (probe, 0)
            } else {
                // Two syncs on a slow disk can outlast a heartbeat: nobody is held to the broker's own checkpoint.
                let checkpointStarted = monotonicMilliseconds()
                recorder.checkpointDeliveryStore()
                excuseStall(monotonicMilliseconds() - checkpointStarted)
                timeout = pollTimeout()
            }
        }
        let waitStarted = monotonicMilliseconds()
        let wake = try waiting ?? transport!.wait(timeoutMilliseconds: timeout, wakeDescriptor: wakeSet?.descriptor)
        // Longer than asked: the broker was stopped (SIGSTOP, a suspended VM) or starved of CPU; as a pass of its own
        // loop that took long, nobody is held to what the broker could not hear meanwhile.
        let passStarted = monotonicMilliseconds()
        excuseStall(passStarted - waitStarted - Int64(timeout))
        // A template's channel is read by the supervisor's reaping, in housekeeping.
        if wake.woken { childrenMayHaveEnded = true }
        if wake.woken, let signals { handleSignals(signals.drain()) }
        if wake.messagesWaiting { try receiveWaiting() }
        excuseStall(monotonicMilliseconds() - passStarted)
        let keepingStarted = monotonicMilliseconds()
        housekeeping()
        if readiness.isReady { time.advance() }
        // A batch of the pass that sent nothing is saved before the loop waits: a broker killed meanwhile loses from
        // the journal no more than the pass it was in.
        saveSequenced()
        // Stopped while keeping house, the broker would otherwise meet its stall only as its peers' silence next pass.
        excuseStall(monotonicMilliseconds() - keepingStarted)
    }

    /// The broker did not run its loop for `milliseconds`: peers' silence and plugins' starts are counted from after
    /// it, so no session is ended and no plugin killed for the broker's own stall. Shorter than a heartbeat: nothing.
    private func excuseStall(_ milliseconds: Int64) {
        guard milliseconds > settings.heartbeatMilliseconds else { return }
        let now = monotonicMilliseconds()
        for session in sessions.all { session.lastHeard = min(now, session.lastHeard + milliseconds) }
        supervisor.excuseStall(milliseconds)
        time.excuseStall(milliseconds)
        logger.notice("the broker did not run for \(milliseconds) ms (stopped, or starved of CPU): sessions, starting plugins and acknowledgements are not held to it")
    }

    /// Closes what `open` opened (the runtime directory's lock is its taker's).
    func close() {
        signals?.restore()
        signals = nil
        wakeSet?.close()
        wakeSet = nil
        recorder.closeJournal()
        transport?.close()
        transport = nil
    }

    /// Asks the loop to stop (from within the loop, e.g. a service; other threads send SIGTERM).
    public func stop() { stopRequested = true }

    private func pollTimeout() -> Int {
        let now = monotonicMilliseconds()
        let interval = settings.heartbeatMilliseconds
        var due = heartbeats.nextDue(sessions: sessions.all.count)
        if let restart = supervisor.nextRestartDue { due = min(due, restart) }
        if let wall = time.nextWallTimer() { due = min(due, wall) }
        if readiness.isReady {
            if time.hasQuietActions, isQuiet { return 0 }
            if !held.isEmpty, isSettled { return 0 }
            if time.isMovingOn {
                if isQuiet { return 0 }
            } else if let next = time.nextBusTimer() {
                if clock.isVirtual {
                    if isQuiet && !clock.isPaused { return 0 }
                } else {
                    due = min(due, now + min(clock.wallMilliseconds(until: next), interval))
                }
            }
        }
        return Int(max(0, min(due - now, interval)))
    }

    private func handleSignals(_ received: [Int32]) {
        for signalNumber in received {
            switch signalNumber {
            case SIGINT, SIGTERM:
                logger.info("stopping", metadata: ["signal": "\(signalNumber == SIGINT ? "SIGINT" : "SIGTERM")"])
                stopRequested = true
            case SIGCHLD:
                supervisor.reap()
                childrenMayHaveEnded = false  // reaped just now: housekeeping need not again
            default:
                break
            }
        }
        outbox.drain()
    }

    private func receiveWaiting() throws {
        // A bounded batch, so heartbeats and signals are never starved by a flood.
        for _ in 0..<10_000 {
            guard try transport!.receive(into: &received) else { break }
            let frames = received
            // Outside virtual time, publishes already waiting are sequenced together, so that what each receiver
            // gets of them can go in one message (`Dispatcher.sendSaved`). Anything else is handled, as on its own,
            // after the events before it are sequenced; so is a request or reply (the next publish's checks look at
            // the requests it opens or closes).
            let joinsBatch = !clock.isVirtual && frames.count == 3 && frames[1] == Self.publishKind
            if !joinsBatch && !outbox.isEmpty { outbox.drain() }
            handle(frames)
            if !joinsBatch || outbox.count >= Self.publishesPerBatch || outbox.last?.corr != nil { outbox.drain() }
        }
        if !outbox.isEmpty { outbox.drain() }
    }

    private static let publishKind = Array(MessageKind.publish.rawValue.utf8)
    /// At most this many publishes are sequenced together: a batch message stays well under a few MB.
    static let publishesPerBatch = 64

    private func housekeeping() {
        let now = monotonicMilliseconds()
        if childrenMayHaveEnded || signals == nil || supervisor.hasNewsWithoutWake {
            childrenMayHaveEnded = false
            supervisor.reap()
        }
        supervisor.tick()
        heartbeats.sendDue(now: now, to: sessions.all, time: clock.now) { frames, session in dispatcher.send(frames, to: session.identity) }
        if heartbeats.isRoundDue(now: now) { endSilentPeers(now: now) }
        time.fireDueWallTimers()
        readiness.check()
        readiness.welcomeReturningPlugins()
        takeTurns()
        // A request whose answerer failed or stopped for good is not answered: its deadline runs from now.
        if !answerTimers.isEmpty { answerTimers.startUnreachable { sessions.named($0) != nil || readiness.isExpectedBack($0) } }
        if !outbox.isEmpty { outbox.drain() }  // what waits for numbering to resume
        if !saveOwed {  // else the pass's end saves it all
            // A scaled clock's reservation is renewed even while no event comes, so a restarted broker resumes from
            // at least where this one stopped; acknowledgements are written within a second, and with them what
            // observers published meanwhile (held for the bus to settle) — not a save of their own each.
            recorder.saveLedger(lastSeq: sequencer.lastSeq, publicationsMayWait: true)
        }
        freedMemory.observe(sessionsEnded: sessions.endedCount, dropped: statistics.dropped, now: now)
    }

    /// Ends the sessions that fell silent, killing their processes; and kills a plugin's process that never said
    /// hello, which would hold up every turn (and virtual time) — its restart policy ends a crash loop in `failed`.
    /// In virtual time a supervised plugin still at work is late on a machine busy with other work, not stopped (a
    /// long handler does not heartbeat): ending it would put its exit and restart in the journal by process timing.
    /// It is looked at again next round, up to the busy limit (`ProgressWatch`); one blocked with no CPU used is not.
    private func endSilentPeers(now: Int64) {
        let limit = settings.sessionTimeoutMilliseconds
        // Read halfway through the silence, so that the look at the limit compares the CPU used since.
        let quiet = sessions.all.filter { now - $0.lastHeard > limit / 2 }
        silences.keep(only: Set(quiet.map(\.name)))
        for session in quiet {
            let pid = clock.isVirtual ? supervisedProcess(of: session) : nil
            if now - session.lastHeard <= limit {
                if let pid, !silences.hasReading(session.name, pid: pid) { silences.read([(session.name, pid)]) }
                continue
            }
            if let pid, silences.waitsOn(session.name, pid: pid, waited: now - session.lastHeard, limit: limit) { continue }
            silences.forget(session.name)
            let reason = "no message for \(now - session.lastHeard) ms (timeout \(settings.sessionTimeoutMilliseconds) ms)"
            statistics.countError("heartbeat-timeout")
            reception.remove(session, reason: "heartbeat-timeout: \(reason)")
            supervisor.killUnresponsive(name: session.name, reason: "stopped heartbeating: \(reason)")
        }
        guard readiness.isReady else { return }
        for plugin in lateStarts.hung(now: now) {
            statistics.countError("startup-timeout")
            supervisor.helloTimedOut(name: plugin.spec.name, after: settings.startupTimeoutMilliseconds)
        }
    }

    /// Says `bus.stopping`, says goodbye to every session, and stops the plugins.
    func shutDown() {
        outbox.append(contentsOf: held.takeAll())
        outbox.emit(topic: Topic.busStopping, body: [:])
        outbox.drain()
        saveSequenced()
        let bye = WireCodec.encode(.bye(reason: "broker stopping"))
        for session in sessions.all { dispatcher.send(bye, to: session.identity) }
        // The broker's own close work (the journal's last lines, its stores' logs copied in) runs while they end.
        supervisor.stopAll(graceMilliseconds: 3_000) { [recorder, services] in
            recorder.flushJournal()
            recorder.copyDeliveryStoreLog()
            for service in services { service.whilePluginsStop() }
        }
        logger.info("stopped", metadata: ["events": "\(statistics.events)", "turns": "\(statistics.turns)", "errors": "\(statistics.errors)"])
    }

    // MARK: Inbound messages

    private func handle(_ frames: [[UInt8]]) {
        guard frames.count >= 1 else { return }
        let identity = frames[0]
        let session = sessions[identity: identity]
        let message: ClientMessage
        do {
            message = try WireCodec.decodeClientMessage(frames[1...], maximumBodyBytes: settings.maximumBodyBytes, roles: settings.table.roles)
        } catch let error as BusProtocolError {
            if session == nil { supervisor.recordRefusedHello(frames[1...], error) }
            reception.refuse(identity, session: session, error)
            return
        } catch {
            return
        }
        session?.lastHeard = monotonicMilliseconds()
        switch message {
        case .hello(let hello):
            // The welcome's number is where a tap or the Studio reads the journal to: every line up to it saved, so a
            // kill cuts none of what they showed.
            saveSequenced()
            reception.welcome(identity, hello, lastSeq: sequencer.lastSeq, firstSeq: sequencer.firstSeq)
        case .status(let credential):
            // What it tells (numbers, what is kept) is what a broker killed after it would resume from.
            saveSequenced()
            let trusted = session != nil || reception.isTrusted(credential)
            dispatcher.send(WireCodec.encode(.status(statusReport.json(full: trusted))), to: identity)
        case .publish(let publish):
            guard let session else { return reception.refuse(identity, session: nil, .helloRequired(kind: "publish")) }
            intake.accept(publish, from: session)
        case .ack(let seq):
            guard let session else { return reception.refuse(identity, session: nil, .helloRequired(kind: "ack")) }
            session.acknowledge(upTo: seq)
            if session.isDurable { ledger.acknowledge(upTo: seq, by: session.name) }
            takeTurns()
        case .gap(let from, let to):
            guard let session else { return reception.refuse(identity, session: nil, .helloRequired(kind: "gap")) }
            session.gapsReported += 1
            outbox.reportError("gap", sender: session.name, message: "\(session.name) missed deliveries \(from)–\(to) (\(to - from + 1) events)",
                               details: ["from": .int(Int64(from)), "to": .int(Int64(to))], countedIn: statistics)
        case .heartbeat:
            if session == nil { reception.refuse(identity, session: nil, .helloRequired(kind: "heartbeat")) }
        case .bye:
            if let session { reception.remove(session, reason: "bye") }
        }
    }

    /// Hands out the deliveries waiting for their turn, unless a plugin between two processes is awaited: its
    /// return happens at a fixed point, and nobody takes a turn meanwhile.
    private func takeTurns() {
        guard !readiness.awaitsReturningPlugins, readiness.allRunningPluginsConnected else { return }
        turns.pump(isCurrent: sessions.isCurrent, deliver: { dispatcher.deliver($0.envelope, seq: $0.seq, to: $0.session) }) { session in
            statistics.turns += 1
            // The OS's request in this turn (or handed over with a returning plugin's mailbox) is in its hands now.
            if !answerTimers.isEmpty { answerTimers.turnTaken(by: session.name) }
        }
    }

    private var statusReport: StatusReport {
        StatusReport(broker: StatusReport.Facts(runtimeDirectory: settings.runtimeDirectory.path, endpoint: transport?.endpoint ?? "", clock: clock,
                                                startedAt: startedAt, lastSeq: sequencer.lastSeq, lastStorageError: recorder.lastStorageError),
                     sessions: sessions.all, supervisor: supervisor, ledger: ledger, statistics: statistics)
    }

    // MARK: What services may ask (BrokerBus)

    /// Whether a plugin — connected, or supervised and coming back — or a service receives events on `topic`.
    /// Taps and tools only watch: an event only they would see is not worth making (it would make the journal
    /// depend on who watched).
    func isSubscribed(_ topic: String) -> Bool {
        sessions.mayHaveSubscribers(topic)
            && (sessions.all.contains { !$0.isTapOrTool && $0.wants(topic) } || sessions.absentPlugins.contains { readiness.isExpectedBack($0, wanting: topic) })
            || !services(receiving: topic).isEmpty
    }

    private func services(receiving topic: String) -> [BrokerService] {
        if let found = servicesByTopic[topic] { return found }
        let found = zip(services, servicePrefixes).filter { $0.1.contains { Topic.matches(topic, prefix: $0) } }.map(\.0)
        if servicesByTopic.count >= 256 { servicesByTopic.removeAll() }
        servicesByTopic[topic] = found
        return found
    }
}

// MARK: Sequencing

extension Broker: OutboxDrain {
    func batchInstant() -> BusTime { clock.now() }

    func sequence(_ event: PendingEvent, at time: BusTime) -> Bool {
        guard recorder.reserveNumber(after: sequencer.lastSeq) else { return false }
        let envelope = sequencer.stamp(event, at: time)
        let json = WireCodec.encodeEnvelope(envelope)
        recorder.journal(json)
        crashPoints.arm(event.topic)
        if let fact = event.fact { ledger.noteAnnounced(fact, body: event.factValue ?? event.body) }
        statistics.events += 1
        let (requester, addressee) = requests.note(event) { reception.holder(of: $0, among: event.audience) }
        router.route(envelope, json: json, of: event, requester: requester, addressee: addressee)
        // The OS's own request (plugins' requests have a requester): its deadline waits for the answerer's turn.
        if !answerTimers.isEmpty, event.requester == nil, event.topic.hasSuffix(Topic.requestSuffix), let corr = event.corr {
            answerTimers.sequenced(corr: corr, seq: envelope.seq, answerer: addressee.flatMap { readiness.willReceive(event.topic, $0) ? $0 : nil })
        }
        for service in services(receiving: event.topic) { service.handle(envelope) }
        if !eventObservers.isEmpty { unobserved.append(envelope) }
        return true
    }

    /// Journal, save, send: what a plugin is given is in bus.sqlite first (the first send saves every batch not
    /// saved yet: `saveSequenced`), so a broker killed at any point redelivers it; a journal line no save covered was
    /// sent to nobody, and is cut off when the journal is resumed.
    func commitBatch() {
        // Written now, whatever the save waits for: what the device did is in the journal's file, cut off or kept.
        recorder.flushJournal()
        crashPoints.batchSequenced()
        saveOwed = true
        if crashPoints.savesEachBatch { saveSequenced() }
        dispatcher.sendSaved(batching: !clock.isVirtual)
        takeTurns()
        observeBatch()
    }

    /// Writes the journal's lines, then saves in `bus.sqlite` every batch sequenced since the last save, in one
    /// transaction with all else that changed; nothing when none is owed. The journal goes first: a save never
    /// covers a line the journal may lack.
    func saveSequenced() {
        guard saveOwed else { return }
        saveOwed = false
        recorder.flushJournal()
        crashPoints.crashIfDue(before: true)
        recorder.saveLedger(lastSeq: sequencer.lastSeq)
        crashPoints.crashIfDue(before: false)
    }

    private func observeBatch() {
        guard !unobserved.isEmpty else { return }
        for envelope in unobserved {
            for observer in eventObservers { observer(envelope) }
        }
        unobserved.removeAll(keepingCapacity: true)
    }
}

// MARK: Time

extension Broker: QuietBus {
    var isStopping: Bool { stopRequested }
    var lastSequencedTime: BusTime { sequencer.lastSequencedTime }

    /// Whether everything sent so far has been handled: nothing queued, every acknowledging session has
    /// acknowledged all it was delivered, every running plugin is connected, and no service awaits a reply.
    private var isSettled: Bool {
        outbox.isEmpty && turns.isEmpty
            && sessions.all.allSatisfy { !$0.acknowledges || $0.lag == 0 }
            && readiness.allRunningPluginsConnected
            && services.allSatisfy { !$0.isAwaitingReplies }
    }

    /// Settled, with nothing held back from observers either: virtual time may move on.
    var isQuiet: Bool { isSettled && held.isEmpty }

    func releaseHeldPublications() -> Bool {
        guard !held.isEmpty, isSettled else { return false }
        outbox.append(contentsOf: held.takeAll(ordered: configurationOrder))
        outbox.drain()
        return true
    }

    func drain() { outbox.drain() }

    func readLaggards() { laggards.read(sessions.all.filter { $0.acknowledges && $0.lag > 0 }.compactMap { s in supervisedProcess(of: s).map { (s.name, $0) } }) }

    func waitForQuietEnded() { laggards.waitEnded() }

    func excuseLaggards(waited: Int64, mayWaitOn: Bool) -> Bool {
        var waitsOn = false
        for session in sessions.all where session.acknowledges && session.lag > 0 {
            if mayWaitOn, isStillAtWork(session) {
                waitsOn = true
                continue
            }
            laggards.forget(session.name)
            let unacknowledged = session.lag  // counted before the excuse forgets them
            session.excuseFromAcknowledging()
            outbox.reportError("ack-timeout", sender: session.name,
                               message: "\(session.name) left \(unacknowledged) event(s) unacknowledged for \(waited) ms; virtual time no longer waits for it",
                               countedIn: statistics)
        }
        outbox.drain()
        return waitsOn
    }

    /// Whether `session` is a supervised plugin whose process works on (runnable, or using CPU since the last look):
    /// late on a busy machine, not stopped. An outside client's process is not the broker's to read.
    private func isStillAtWork(_ session: Session) -> Bool {
        supervisedProcess(of: session).map { laggards.isStillAtWork(session.name, pid: $0) } ?? false
    }

    /// The process of the supervised plugin whose session `session` is (its program's, in a sandbox); nil for anyone else.
    private func supervisedProcess(of session: Session) -> pid_t? {
        guard let plugin = supervisor?.plugin(named: session.name), plugin.connection == session.identity else { return nil }
        return plugin.programPID ?? plugin.pid
    }
}
