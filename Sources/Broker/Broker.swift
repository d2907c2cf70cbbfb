// Broker: the ShieldBus bus — it sequences every event, routes it to subscribers, journals it, and supervises plugins.
//
// Why one file past 500 lines, for now: the event loop, sessions, sequencing, virtual-time turns and the delivery
// ledger share one class's state, and splitting them behind a seam is issue #30's work, not a move of lines.

import BusClient
import BusProtocol
import Foundation
import Logging
import ZeroMQ

/// The broker process's core: one ROUTER socket that every plugin, tap and tool talks to.
///
/// It is the sequencer: every event that enters the bus — its own or a plugin's — gets the next gap-free
/// sequence number and the bus time, is journaled, and is delivered in that order to every session whose
/// subscriptions match its topic, each delivery carrying that receiver's own delivery number.
/// Single-threaded: everything happens in `run()`'s loop.
public final class Broker {
    public let settings: BrokerSettings
    public let clock: BusClock
    let logger: Logger

    private var busTimers = TimerQueue()
    /// Timers on the monotonic wall clock (request deadlines, start-up and acknowledgement limits).
    private var wallTimers = TimerQueue()
    /// Set once every supervised plugin has connected (or the start-up limit passed) and `bus.ready` went out.
    private(set) var isReady = false
    private var readyActions: [() -> Void] = []
    /// Actions waiting for the bus to go quiet (everything delivered has been handled).
    private var quietActions: [() -> Void] = []
    /// Since when (wall ms) virtual time has been waiting for the bus to go quiet.
    private var waitingForQuietSince: Int64?

    private var router: Socket?
    private var lock: RuntimeLock?
    private var signals: SignalPipe?
    private var journal: Journal?
    private var supervisor: PluginSupervisor!

    private var sessions: [Session] = []
    private var sessionsByIdentity: [[UInt8]: Session] = [:]
    /// Names are unique among sessions; looked up on every message, so never found by scanning `sessions`
    /// (thousands of idle sessions would make each message cost thousands of steps).
    private var sessionsByName: [String: Session] = [:] {
        didSet { absentSubscribersFound = nil }
    }
    /// The sessions in name order, the order of turns in virtual time: kept so as sessions come and go, so that no
    /// event sorts its receivers (by comparing strings).
    private var sessionsInNameOrder: [Session] = []
    /// Requests awaiting replies: correlation id → who asked (nil: the OS), the reply topic, and who may answer.
    private var pendingRequests: [String: PendingRequest] = [:]
    /// Who may say hello as whom; set when the broker starts (it needs the cookie).
    private var admission: Admission!
    /// Namespaces declared in the configuration → the plugin or client that alone publishes there.
    private var declaredNamespaces: [String: String] = [:]
    private var declaredNamespaceNames = Set<String>()
    private var services: [BrokerService] = []
    /// Called for every sequenced event (the command line's timeline printer, tests).
    private var eventObservers: [(Envelope) -> Void] = []
    /// Events emitted while handling something else, sequenced in order once that is done.
    private var outbox: [PendingEvent] = []
    /// What observers published while handling events they only observe, out of turn: sequenced together, in
    /// configuration order, once everything delivered has been handled — a fixed point, whatever the processes' timing.
    private var heldPublications: [PendingEvent] = [] {
        didSet { ledger.noteHeld(heldPublications.map(\.held)) }
    }
    private var isDrainingOutbox = false
    /// The OS's reply deadlines on its requests to a role, until their answerer's turn; then their wall timers.
    private var answerDeadlines = AnswerDeadlines()
    private var answerTimers: [String: UInt64] = [:]

    private(set) var lastSeq: UInt64 = 0
    /// The latest bus instant sequenced so far: a late timer is never stamped before it.
    private var lastSequencedTime: BusTime = 0
    /// The endpoint actually bound (a wildcard port resolved).
    private var boundEndpoint = ""
    private var statistics = BusStatistics()
    private var startedAt = monotonicMilliseconds()
    private var lastHeartbeatSent: Int64 = 0
    /// Heartbeats go out a slice of the sessions at a time, round the list once per interval, so that thousands of
    /// sessions do not make one burst of sends that everyone else's messages wait behind.
    private var heartbeatCursor = 0
    private var heartbeatsOwed = 0.0
    private var lastHeartbeatSlice = monotonicMilliseconds()
    private var stopRequested = false
    /// The last failure to write the broker's own state (the delivery ledger), while it lasts.
    private var storageFailure: String?
    private var lastStorageError: String?
    private var journalFailing = false

    /// Who may answer a request: the OS (the broker's services), the holder of a role (by name), or anyone
    /// (requests in a plugin's own namespace).
    enum Answerer: Equatable {
        case system
        case session(String)
        case nobody(Role)
        case anyone
    }

    struct PendingRequest {
        var requester: [UInt8]?
        var replyTopic: String
        var answerer: Answerer
    }

    struct PendingEvent {
        var topic: String
        var body: [UInt8]
        var source: String
        var corr: String?
        var deadline: BusTime?
        var requester: [UInt8]?
        /// The plugins an OS event is for (one product's, on a device with several); nil: every subscriber.
        var audience: Set<String>? = nil
        /// The service fact this event states (`BrokerBus.emit(…, fact:)`), if it states one, and its value when
        /// that is not the body.
        var fact: String? = nil
        var factValue: [UInt8]? = nil

        /// As kept in `bus.sqlite` while held (an observer's publication: never a request, for everyone).
        var held: DeliveryStore.Held { DeliveryStore.Held(source: source, topic: topic, body: body, corr: corr, deadline: deadline) }

        init(topic: String, body: [UInt8], source: String, corr: String?, deadline: BusTime?, requester: [UInt8]?, audience: Set<String>? = nil) {
            (self.topic, self.body, self.source, self.corr, self.deadline, self.requester, self.audience) = (topic, body, source, corr, deadline, requester, audience)
        }

        init(held: DeliveryStore.Held) {
            self.init(topic: held.topic, body: held.body, source: held.source, corr: held.corr, deadline: held.deadline, requester: nil)
        }
    }

    public init(settings: BrokerSettings, clock: BusClock = BusClock(mode: .real), logger: Logger = Logger(label: "shieldbus.broker")) {
        self.settings = settings
        self.clock = clock
        self.logger = logger
    }

    /// Adds an in-process component (the device OS's parts) that receives events like a plugin and may emit events.
    public func addService(_ service: BrokerService) {
        services.append(service)
    }

    /// Calls `observer` with every sequenced event, in order, on the broker's thread.
    public func observeEvents(_ observer: @escaping (Envelope) -> Void) {
        eventObservers.append(observer)
    }

    // MARK: Running

    /// Takes the runtime directory (unless `lock` says it is taken already), binds, starts the plugins, and
    /// serves until SIGINT/SIGTERM or `stop()`. Then stops the plugins and cleans up: no child processes, no socket files.
    public func run(lock taken: RuntimeLock? = nil, onReady: (() -> Void)? = nil) throws {
        let lock = try taken ?? RuntimeLock(settings.runtimeDirectory)
        self.lock = lock
        defer { lock.release() }
        if lock.removedStaleSocket {
            logger.warning("removed a stale bus socket left by a broker that did not shut down", metadata: ["runtime_dir": "\(settings.runtimeDirectory.path)"])
        }
        let endpointKind: BusEndpoint
        do { endpointKind = try BusEndpoint(settings.bindEndpoint) } catch let error as BusEndpointError { throw ListenError.badEndpoint(error) }
        try openDeliveryLedger()
        // Before the endpoint is published: a client that finds the broker finds its cookie.
        try establishAuthority()
        let context = try Context()
        let router = try Socket(context, .router)
        try router.setRouterMandatory(true)
        try router.setSendHighWaterMark(settings.deliveryHighWaterMark)
        try router.setReceiveHighWaterMark(settings.deliveryHighWaterMark)
        try router.setMaximumMessageSize(settings.maximumFrameBytes)
        var guards: TransportGuards?
        if endpointKind.needsCurve {
            guard let curve = settings.curve else { throw ListenError.curveRequired(endpoint: settings.bindEndpoint) }
            guard Curve.isAvailable else { throw ListenError.curveUnavailable(libzmqVersion: libzmqVersion) }
            // The user's own clients (supervised plugins, the command line's tools) use a key made for this run.
            let local = try CurveKeyPair.generate()
            var allowed = curve.allowedClients
            allowed[local.publicKey] = "local"
            // The ZAP handler must be bound before the router: with none, libzmq admits every CURVE peer.
            guards = TransportGuards(zap: try ZAPHandler(context), monitor: try SocketMonitor(router, context: context, name: "shieldbus.router.monitor"),
                                     allowedClients: allowed)
            try router.makeCurveServer(curve.serverKeys)
            try lock.publishCurveKeys(server: curve.serverKeys, localClient: local)
        }
        defer { guards?.close() }
        listensWithCurve = guards != nil
        try router.bind(settings.bindEndpoint)
        if case .ipc(let path) = endpointKind { chmod(path, 0o600) }
        let endpoint = settings.bindEndpoint.contains(":*") ? try router.lastEndpoint() : settings.bindEndpoint
        boundEndpoint = endpoint
        try lock.publishEndpoint(endpoint)
        self.router = router
        defer {
            router.close()
            self.router = nil
        }
        if let path = settings.journalPath {
            journal = try Journal(path: path, appending: settings.journalAppends, keepingThrough: savedSeqAtStart)
            if let reached = journal?.cutOffReached { clock.resume(notBefore: reached, continuingTheRun: settings.journalAppends) }
        }
        defer { do { try journal?.close() } catch { reportJournalFailure(error) } }

        let signals = SignalPipe()
        self.signals = signals
        defer { signals.restore() }

        supervisor = PluginSupervisor(specs: settings.plugins, runtimeDirectory: settings.runtimeDirectory,
                                      endpoint: endpoint, logger: logger)
        supervisor.onLifecycle = { [unowned self] name, what, detail in
            var body = detail.objectValue ?? [:]
            body["name"] = .string(name)
            emit(topic: "plugin.\(what)", body: .object(body))
            // A process that ended has no session any more, whatever its socket last said.
            if what == "exited", let session = sessionsByName[name] { remove(session, reason: "process exited") }
            if what == "failed" { ledger.discard(name) }
        }
        for service in services { service.attach(to: BrokerBus(broker: self)) }
        logger.info("broker listening", metadata: ["endpoint": "\(endpoint)", "pid": "\(getpid())"])
        clock.startRunning()
        emit(topic: "bus.started", body: .object(startedBody()))
        supervisor.startAll()
        drainOutbox()
        wallTimers.schedule(at: monotonicMilliseconds() + settings.startupTimeoutMilliseconds) { [unowned self] in becomeReady() }
        checkReadiness()
        onReady?()

        var poller = Poller()
        try poller.addReadable(router)
        poller.addReadable(fileDescriptor: signals.readDescriptor)
        if let guards {
            try poller.addReadable(guards.zap.pollable)
            try poller.addReadable(guards.monitor.pollable)
        }
        while !stopRequested {
            let ready = try poller.poll(timeoutMilliseconds: pollTimeout())
            if ready[1] { handleSignals(signals.drain()) }
            if let guards, ready[2] || ready[3] { try admit(guards) }
            if ready[0] { try drainRouter(router) }
            housekeeping()
            advanceTime()
        }
        shutDown()
    }

    // MARK: Admission on tcp

    /// The ZAP handler and the router's monitor, when the bus listens on tcp.
    private struct TransportGuards {
        let zap: ZAPHandler
        let monitor: SocketMonitor
        /// Public key (Z85) → the name logs give its holder.
        let allowedClients: [String: String]

        func close() {
            zap.close()
            monitor.close()
        }
    }

    /// Answers libzmq's questions about connecting peers (only keys on the allowlist get in), and logs and counts
    /// the peers whose handshake failed (no CURVE, a wrong server key, a refused key).
    private func admit(_ guards: TransportGuards) throws {
        try guards.zap.answerPending { request in
            guard request.mechanism == "CURVE", let raw = request.credentials.first, let key = Curve.encode(raw) else {
                return .refuse(reason: "CURVE required")
            }
            if let name = guards.allowedClients[key] { return .admit(userID: name) }
            statistics.countError("curve-refused")
            logger.warning("refused a tcp client: its CURVE key is not on the allowlist (bus.curve.allow)",
                           metadata: ["address": "\(request.address)", "key": "\(key)"])
            return .refuse(reason: "key not on the allowlist")
        }
        for event in try guards.monitor.pending() {
            switch event.kind {
            case .handshakeFailedProtocol, .handshakeFailedNoDetail:
                statistics.countError("curve-handshake-failed")
                // libzmq clients reconnect every 100 ms: one line a second says enough.
                let now = monotonicMilliseconds()
                handshakeFailuresNotLogged += 1
                guard now - lastHandshakeFailureLogged >= 1_000 else { continue }
                logger.warning("refused a tcp client: no CURVE handshake (a client without keys, or with the wrong broker key)",
                               metadata: ["endpoint": "\(event.endpoint)", "refusals": "\(handshakeFailuresNotLogged)"])
                lastHandshakeFailureLogged = now
                handshakeFailuresNotLogged = 0
            default:
                break  // refusals by key were logged when ZAP was asked
            }
        }
    }

    /// On tcp: libzmq lets only clients with a key on the allowlist through, so each of them is admitted as the cookie admits.
    private var listensWithCurve = false
    private var lastHandshakeFailureLogged: Int64 = 0
    private var handshakeFailuresNotLogged = 0

    /// The cookie and the grants that admit clients, and who owns which declared namespace.
    private func establishAuthority() throws {
        admission = Admission(cookie: try BusCookie.establish(in: settings.runtimeDirectory), grants: settings.outsideClients,
                              runtimeDirectory: settings.runtimeDirectory)
        for plugin in settings.plugins { for namespace in plugin.namespaces { declaredNamespaces[namespace] = plugin.name } }
        for grant in settings.outsideClients { if let name = grant.name { for namespace in grant.namespaces { declaredNamespaces[namespace] = name } } }
        declaredNamespaceNames = Set(declaredNamespaces.keys)
    }

    // MARK: Time

    /// Runs `action` at bus time `time` (at once if it has passed). In virtual mode time jumps there once the bus is quiet.
    @discardableResult
    func schedule(at time: BusTime, _ action: @escaping () -> Void) -> UInt64 {
        busTimers.schedule(at: time, action)
    }

    func cancelTimer(_ id: UInt64) { busTimers.cancel(id) }

    /// Runs `action` after `milliseconds` of wall time, whatever the bus clock does (deadlines of replies).
    @discardableResult
    func scheduleWall(afterMilliseconds milliseconds: Int64, _ action: @escaping () -> Void) -> UInt64 {
        wallTimers.schedule(at: monotonicMilliseconds() + milliseconds, action)
    }

    func cancelWallTimer(_ id: UInt64) { wallTimers.cancel(id) }

    /// Runs `action` once the plugin that the OS's request `corr` (emitted next) goes to has had it for `milliseconds`
    /// of wall time, counted from the turn it is handed it; at once when nobody will take it.
    func afterAnswerTime(for corr: String, milliseconds: Int64, _ action: @escaping () -> Void) {
        answerDeadlines.add(corr: corr, milliseconds: milliseconds, action: action)
    }

    func cancelAnswerTime(for corr: String) {
        if answerDeadlines.remove(corr: corr) { return }
        if let timer = answerTimers.removeValue(forKey: corr) { wallTimers.cancel(timer) }
    }

    private func startAnswerTimers(_ deadlines: [AnswerDeadlines.Deadline]) {
        for deadline in deadlines {
            answerTimers[deadline.corr] = wallTimers.schedule(at: monotonicMilliseconds() + deadline.milliseconds) { [unowned self] in
                answerTimers[deadline.corr] = nil
                deadline.action()
            }
        }
    }

    /// Runs `action` once the bus is ready (at once if it is).
    func whenReady(_ action: @escaping () -> Void) {
        if isReady { action() } else { readyActions.append(action) }
    }

    /// Runs `action` once everything delivered so far has been handled (before virtual time moves on).
    func whenQuiet(_ action: @escaping () -> Void) {
        quietActions.append(action)
    }

    /// Runs the actions waiting for quiet, if the bus is quiet; returns whether any ran.
    @discardableResult
    private func runQuietActions() -> Bool {
        guard !quietActions.isEmpty, isQuiet else { return false }
        let actions = quietActions
        quietActions = []
        for action in actions {
            action()
            drainOutbox()
        }
        return true
    }

    /// Whether every supervised plugin that is running (or about to restart) has a session.
    private var allRunningPluginsConnected: Bool {
        supervisor.runningPlugins.allSatisfy { sessionsByName[$0.spec.name] != nil }
    }

    /// Whether everything sent so far has been handled: nothing queued, every acknowledging session has
    /// acknowledged all it was delivered, every running plugin is connected, and no service awaits a reply.
    private var isSettled: Bool {
        outbox.isEmpty && serialQueueHead >= serialQueue.count
            && sessions.allSatisfy { !$0.acknowledges || $0.lag == 0 }
            && allRunningPluginsConnected
            && services.allSatisfy { !$0.isAwaitingReplies }
    }

    /// Settled, with nothing held back from observers either: virtual time may move on.
    var isQuiet: Bool { isSettled && heldPublications.isEmpty }

    /// Sequences the observers' held publications once the bus has settled; returns whether there were any.
    private func releaseHeldPublications() -> Bool {
        guard !heldPublications.isEmpty, isSettled else { return false }
        let order = Dictionary(settings.plugins.enumerated().map { ($0.element.name, $0.offset) }, uniquingKeysWith: { first, _ in first })
        let held = heldPublications.enumerated().sorted {
            (order[$0.element.source] ?? Int.max, $0.element.source, $0.offset) < (order[$1.element.source] ?? Int.max, $1.element.source, $1.offset)
        }
        heldPublications = []
        outbox.append(contentsOf: held.map(\.element))
        drainOutbox()
        return true
    }

    /// Fires due timers: by the wall clock in real and scaled mode; in virtual mode, jumps to the next
    /// scheduled instant whenever the bus is quiet, so a virtual run is as fast as its plugins and deterministic.
    private func advanceTime() {
        guard isReady else { return }
        runQuietActions()
        if !clock.isVirtual {
            // A timer runs at its own instant (never before what is already sequenced): after a stall, timers
            // due meanwhile keep their order in bus time instead of all sharing the instant the broker woke at.
            while let entry = busTimers.popDue(atOrBefore: clock.now()) {
                clock.holding(at: max(entry.time, lastSequencedTime)) {
                    entry.action()
                    drainOutbox()
                }
            }
            // Actions waiting for quiet must not wait forever for a plugin that stopped acknowledging.
            if !quietActions.isEmpty && !isQuiet { excuseLaggardsIfWaitingTooLong() } else { waitingForQuietSince = nil }
            return
        }
        for _ in 0..<1_000 {  // bounded, so sockets are still polled during a long virtual run
            guard !stopRequested else { return }
            if releaseHeldPublications() { continue }
            guard isQuiet else {
                excuseLaggardsIfWaitingTooLong()
                return
            }
            waitingForQuietSince = nil
            if runQuietActions() { continue }  // they may have made the bus busy again
            guard let next = busTimers.nextTime() else { return }
            clock.advance(to: next)
            // One timer at a time: what it sets off is handled before the next one due at the same instant runs.
            if let entry = busTimers.popDue(atOrBefore: next) {
                entry.action()
                drainOutbox()
            }
        }
    }

    /// A plugin that stops acknowledging must not freeze virtual time: after the limit it is reported and
    /// no longer waited for.
    private func excuseLaggardsIfWaitingTooLong() {
        let now = monotonicMilliseconds()
        guard let since = waitingForQuietSince else {
            waitingForQuietSince = now
            return
        }
        guard now - since > settings.acknowledgementTimeoutMilliseconds else { return }
        waitingForQuietSince = nil
        for session in sessions where session.acknowledges && session.lag > 0 {
            session.excuseFromAcknowledging()
            statistics.countError("ack-timeout")
            emit(topic: "bus.error", body: [
                "code": "ack-timeout", "sender": .string(session.name),
                "message": .string("\(session.name) left \(session.lag) event(s) unacknowledged for \(settings.acknowledgementTimeoutMilliseconds) ms; virtual time no longer waits for it"),
            ])
        }
        drainOutbox()
    }

    /// Emits `bus.ready` once every supervised plugin has connected (or the start-up limit has passed),
    /// announcing the plugins in configuration order so that the journal does not depend on start-up timing.
    private func checkReadiness() {
        guard !isReady else { return }
        if supervisor.expectedPluginNames.allSatisfy({ sessionsByName[$0] != nil }) { becomeReady() }
    }

    private func becomeReady() {
        guard !isReady else { return }
        isReady = true
        for plugin in supervisor.plugins {
            if let session = sessionsByName[plugin.spec.name] { announceUp(session) }
        }
        let missing = supervisor.expectedPluginNames.filter { sessionsByName[$0] == nil }.sorted()
        if !missing.isEmpty {
            statistics.countError("startup-timeout")
            emit(topic: "bus.error", body: [
                "code": "startup-timeout", "sender": "broker",
                "message": .string("plugin(s) \(missing.joined(separator: ", ")) did not connect within \(settings.startupTimeoutMilliseconds) ms; see their logs in \(settings.runtimeDirectory.logsPath)"),
            ])
        }
        // What a previous broker left unacknowledged goes first, before bus.ready and anything new.
        for session in sessions where session.isCatchingUp { catchUp(session) }
        emit(topic: "bus.ready", body: ["plugins": .array(supervisor.plugins.map { .string($0.spec.name) }), "startup": true])
        drainOutbox()
        let actions = readyActions
        readyActions = []
        for action in actions { action() }
        drainOutbox()
    }

    /// Asks the loop to stop (from within the loop, e.g. a service; other threads send SIGTERM).
    public func stop() { stopRequested = true }

    private func pollTimeout() -> Int {
        let now = monotonicMilliseconds()
        var due = min(lastHeartbeatSent + settings.heartbeatMilliseconds, lastHeartbeatSlice + heartbeatSliceMilliseconds)
        if let restart = supervisor.nextRestartDue { due = min(due, restart) }
        if let wall = wallTimers.nextTime() { due = min(due, wall) }
        if isReady, !quietActions.isEmpty, isQuiet { return 0 }
        if isReady, !heldPublications.isEmpty, isSettled { return 0 }
        if isReady, let next = busTimers.nextTime() {
            if clock.isVirtual {
                if isQuiet { return 0 }
            } else {
                let wait = clock.wallMilliseconds(until: next)
                due = min(due, now + min(wait, settings.heartbeatMilliseconds))
            }
        }
        return Int(max(0, min(due - now, settings.heartbeatMilliseconds)))
    }

    private func handleSignals(_ received: [Int32]) {
        for signalNumber in received {
            switch signalNumber {
            case SIGINT, SIGTERM:
                logger.info("stopping", metadata: ["signal": "\(signalNumber == SIGINT ? "SIGINT" : "SIGTERM")"])
                stopRequested = true
            case SIGCHLD:
                supervisor.reap()
            default:
                break
            }
        }
        drainOutbox()
    }

    private func drainRouter(_ router: Socket) throws {
        // A bounded batch, so heartbeats and signals are never starved by a flood.
        for _ in 0..<10_000 {
            guard try router.receive(into: &received, dontWait: true) else { break }
            let frames = received
            // Outside virtual time, publishes already waiting are sequenced together, so that what each receiver
            // gets of them can go in one message (`sendAfterSave`). Anything else is handled, as on its own, after
            // the events before it are sequenced; so is a request or reply (the next publish's checks look at
            // the requests it opens or closes).
            let joinsBatch = !clock.isVirtual && frames.count == 3 && frames[1] == Self.publishKind
            if !joinsBatch && !outbox.isEmpty { drainOutbox() }
            handle(frames)
            if !joinsBatch || outbox.count >= Self.publishesPerBatch || outbox.last?.corr != nil { drainOutbox() }
        }
        if !outbox.isEmpty { drainOutbox() }
    }

    /// The last message received: its arrays' storage serves the next one (nothing kept from it is touched).
    private var received: [[UInt8]] = []
    private static let publishKind = Array(MessageKind.publish.rawValue.utf8)
    /// At most this many publishes are sequenced together: a batch message stays well under a few MB.
    static let publishesPerBatch = 64

    private func housekeeping() {
        let now = monotonicMilliseconds()
        supervisor.reap()
        supervisor.tick()
        sendHeartbeatSlice(now: now)
        if now - lastHeartbeatSent >= settings.heartbeatMilliseconds {
            lastHeartbeatSent = now
            for session in sessions where now - session.lastHeard > settings.sessionTimeoutMilliseconds {
                let reason = "no message for \(now - session.lastHeard) ms (timeout \(settings.sessionTimeoutMilliseconds) ms)"
                statistics.countError("heartbeat-timeout")
                remove(session, reason: "heartbeat-timeout: \(reason)")
                supervisor.killUnresponsive(name: session.name, reason: "stopped heartbeating: \(reason)")
            }
            // A process that never says hello would hold up every turn (and virtual time): it is killed, and
            // restarted by its policy — a crash loop ends in `failed`.
            for plugin in supervisor.plugins where plugin.state == .running && plugin.pid != nil && sessionsByName[plugin.spec.name] == nil
                && now - plugin.startedAt > settings.startupTimeoutMilliseconds && isReady {
                statistics.countError("startup-timeout")
                supervisor.helloTimedOut(name: plugin.spec.name, after: settings.startupTimeoutMilliseconds)
            }
        }
        while let entry = wallTimers.popDue(atOrBefore: monotonicMilliseconds()) {
            entry.action()
            drainOutbox()
        }
        checkReadiness()
        welcomeReturningPlugins()
        pumpSerialQueue()
        // A request whose answerer failed or stopped for good is not answered: its deadline runs from now.
        if !answerDeadlines.isEmpty { startAnswerTimers(answerDeadlines.start(unreachable: { sessionsByName[$0] != nil || isExpectedBack($0) })) }
        // A scaled clock's reservation is renewed even while no event comes, so a restarted broker resumes from
        // at least where this one stopped; acknowledgements are written within a second.
        saveLedger()
    }

    /// How often a slice of heartbeats goes out: every session gets one per interval, at most 20 of them at once (every 10 ms at the most).
    private var heartbeatSliceMilliseconds: Int64 {
        max(10, min(settings.heartbeatMilliseconds, settings.heartbeatMilliseconds * 20 / Int64(max(1, sessions.count))))
    }

    /// Sends the heartbeats that have come due since the last slice, continuing round the sessions.
    private func sendHeartbeatSlice(now: Int64) {
        let elapsed = now - lastHeartbeatSlice
        guard elapsed >= heartbeatSliceMilliseconds || elapsed >= settings.heartbeatMilliseconds else { return }
        lastHeartbeatSlice = now
        guard !sessions.isEmpty else { return }
        heartbeatsOwed = min(Double(sessions.count), heartbeatsOwed + Double(sessions.count) * Double(elapsed) / Double(settings.heartbeatMilliseconds))
        guard heartbeatsOwed >= 1 else { return }
        let frames = WireCodec.encode(.heartbeat(time: clock.now()))
        while heartbeatsOwed >= 1 {
            if heartbeatCursor >= sessions.count { heartbeatCursor = 0 }
            sendDirect(frames, to: sessions[heartbeatCursor].identity)
            heartbeatCursor += 1
            heartbeatsOwed -= 1
        }
    }

    private func shutDown() {
        outbox.append(contentsOf: heldPublications)
        heldPublications = []
        emit(topic: "bus.stopping", body: [:])
        drainOutbox()
        let bye = WireCodec.encode(.bye(reason: "broker stopping"))
        for session in sessions { sendDirect(bye, to: session.identity) }
        supervisor.stopAll(graceMilliseconds: 3_000)
        flushJournal()
        logger.info("stopped", metadata: ["events": "\(statistics.events)", "turns": "\(statistics.turns)", "errors": "\(statistics.errors)"])
    }

    // MARK: Inbound messages

    private func handle(_ frames: [[UInt8]]) {
        guard frames.count >= 1 else { return }
        let identity = frames[0]
        let session = sessionsByIdentity[identity]
        let message: ClientMessage
        do {
            message = try WireCodec.decodeClientMessage(frames[1...], maximumBodyBytes: settings.maximumBodyBytes)
        } catch let error as BusProtocolError {
            if session == nil { supervisor.recordRefusedHello(frames[1...], error) }
            refuse(identity, session: session, error)
            return
        } catch {
            return
        }
        session?.lastHeard = monotonicMilliseconds()
        switch message {
        case .hello(let hello):
            welcome(identity, hello)
        case .status(let credential):
            let trusted = session != nil || admission.isTrusted(credential, plugins: supervisor.plugins)
            sendDirect(WireCodec.encode(.status(statusReport(full: trusted))), to: identity)
        case .publish(let publish):
            guard let session else { return refuse(identity, session: nil, .helloRequired(kind: "publish")) }
            // A plugin's next process sends again what handling a redelivered event published; the bus has it once
            // (and a refused one is not refused twice).
            if let cause = publish.cause, session.isDurable, ledger.isRepeat(publish, cause: cause, by: session.name) {
                statistics.repeatsDropped += 1
                return
            }
            if let problem = authority(session, publish) { return refuse(identity, session: session, problem) }
            let requester = publish.topic.hasSuffix(Topic.requestSuffix) ? identity : nil
            if requester != nil, let corr = publish.corr, pendingRequests[corr] != nil {
                return refuse(identity, session: session, .duplicateCorrelation(corr))
            }
            let event = PendingEvent(topic: publish.topic, body: publish.body, source: session.name,
                                     corr: publish.corr, deadline: publish.deadline, requester: requester)
            // An observer publishing out of its turn is handling something it observes: what it publishes waits
            // for a fixed point; a request cannot wait (the observer blocks on its reply), so it is refused.
            if serialDispatch, session.isObserver, session.acknowledges, awaitingTurn !== session || awaitingObserver {
                if requester != nil { return refuse(identity, session: session, .requestWhileObserving(topic: publish.topic)) }
                heldPublications.append(event)
                armCrashPoint(event.topic)
            } else {
                outbox.append(event)
            }
        case .ack(let seq):
            guard let session else { return refuse(identity, session: nil, .helloRequired(kind: "ack")) }
            session.acknowledge(upTo: seq)
            if session.isDurable { ledger.acknowledge(upTo: seq, by: session.name) }
            pumpSerialQueue()
        case .gap(let from, let to):
            guard let session else { return refuse(identity, session: nil, .helloRequired(kind: "gap")) }
            session.gapsReported += 1
            statistics.countError("gap")
            emit(topic: "bus.error", body: [
                "code": "gap", "sender": .string(session.name),
                "message": .string("\(session.name) missed deliveries \(from)–\(to) (\(to - from + 1) events)"),
                "from": .int(Int64(from)), "to": .int(Int64(to)),
            ])
        case .heartbeat:
            if session == nil { refuse(identity, session: nil, .helloRequired(kind: "heartbeat")) }
        case .bye:
            if let session { remove(session, reason: "bye") }
        }
    }

    /// Why `session` may not publish `publish`, if it may not: taps only read; events only the system produces,
    /// the person's input (tools only), unknown namespaces, other plugins' namespaces, and replies from anyone
    /// but the request's addressee are refused.
    private func authority(_ session: Session, _ publish: Publish) -> BusProtocolError? {
        let topic = publish.topic
        if session.role == .tap { return .readOnly(topic: topic) }
        if Topic.isSystemOnly(topic) || (session.role != .tool && topic.hasPrefix(Topic.inputNamespace + ".")) {
            return .reservedTopic(topic)
        }
        if !Topic.isKnownNamespace(topic), let problem = Topic.problem(with: topic, declaredNamespaces: declaredNamespaceNames) { return problem }
        // Only topics that can have an owner are split (the hot path allocates nothing for the others).
        if topic.hasPrefix(Topic.pluginNamespace + ".") || !declaredNamespaces.isEmpty,
           let owner = Topic.owner(of: topic, declared: declaredNamespaces), owner != session.name {
            return .foreignNamespace(topic: topic, owner: owner)
        }
        if let corr = publish.corr, topic.hasSuffix(Topic.replySuffix) {
            guard let pending = pendingRequests[corr], pending.replyTopic == topic else {
                return .replyRefused(topic: topic, corr: corr, reason: "it answers no pending request")
            }
            switch pending.answerer {
            case .anyone: break
            case .session(let name) where name == session.name: break
            case .session(let name): return .replyRefused(topic: topic, corr: corr, reason: "the request went to '\(name)', not to '\(session.name)'")
            case .nobody(let role): return .replyRefused(topic: topic, corr: corr, reason: "the request went to the holder of the role '\(role.rawValue)', and '\(session.name)' is not it")
            case .system: return .replyRefused(topic: topic, corr: corr, reason: "the OS answers this request; nobody else may")
            }
        }
        return nil
    }

    /// Who answers a request on `topic`: the holder of the role the OS addresses it to (among `audience`, the
    /// plugins of the product it is for), the OS for the device API, anyone for requests in a plugin's own namespace.
    private func answerer(ofRequest topic: String, among audience: Set<String>?) -> Answerer {
        if let role = Topic.answeringRole(forRequest: topic) { return holder(of: role, among: audience).map(Answerer.session) ?? .nobody(role) }
        if Topic.isAnsweredBySystem(topic) { return .system }
        return .anyone
    }

    /// The name of the client holding `role`: the configured plugin, else a connected outside client granted it.
    private func holder(of role: Role, among audience: Set<String>?) -> String? {
        let candidate = { (name: String) in audience?.contains(name) ?? true }
        return supervisor.plugins.first { $0.spec.role == role && candidate($0.spec.name) }?.spec.name
            ?? sessions.first { $0.role == role && candidate($0.name) }?.name
    }

    private func welcome(_ identity: [UInt8], _ hello: Hello) {
        if let previous = sessionsByIdentity[identity] { forget(previous) }
        let admitted: Admission.Admitted
        switch admission.admit(hello, plugins: supervisor.plugins, keyAdmitted: listensWithCurve) {
        case .success(let result): admitted = result
        case .failure(let refusal): return refuse(identity, session: nil, refusal)
        }
        if let mismatch = supervisor.roleMismatch(hello) {
            supervisor.recordRefusedHello(name: hello.name, credential: hello.credential, mismatch)
            return refuse(identity, session: nil, mismatch)
        }
        if let sameName = sessionsByName[hello.name] {
            if case .supervised = admitted {
                // Its credential proves it is the current run: the old connection's goodbye is still on its way.
                remove(sameName, reason: "replaced by its new connection")
            } else {
                // Two live clients under one name would take it from each other forever: the second is refused.
                return refuse(identity, session: nil, .nameTaken(hello.name))
            }
        }
        let session = Session(identity: identity, hello: hello, now: monotonicMilliseconds())
        sessions.append(session)
        sessionsInNameOrder.insert(session, at: sessionsInNameOrder.firstIndex { $0.name > session.name } ?? sessionsInNameOrder.count)
        sessionsByIdentity[identity] = session
        sessionsByName[session.name] = session
        // `ready` tells a plugin whether to start its work now or on `bus.ready` (so start-up order is deterministic).
        var pluginSettings = (settings.settingsForPlugins.objectValue ?? [:]).merging(self.pluginSettings) { _, now in now }
        // A supervised plugin (re)started after bus.ready gets its own bus.ready, in turn, through the sequencer.
        let isSupervised = supervisor.plugin(named: hello.name) != nil
        pluginSettings["ready"] = .bool(isReady && !isSupervised)
        // Plugins run their device clock on between events at this speed (`Date()` inside a plugin).
        if case .scaled(let speed) = clock.clockMode { pluginSettings["clockSpeed"] = .double(speed) }
        let welcome = Welcome(name: hello.name, time: clock.now(), seq: lastSeq, clock: clock.mode,
                              heartbeatMilliseconds: settings.heartbeatMilliseconds, settings: .object(pluginSettings))
        sendDirect(WireCodec.encode(.welcome(welcome)), to: identity)
        // Before bus.ready, supervised plugins are announced together, in configuration order.
        if !isSupervised { announceUp(session) }
        if isSupervised {
            supervisor.saidHello(name: hello.name)
            lastSubscriptions[hello.name] = hello.subscriptions
            session.isDurable = true
            // Until it has had what it missed, new events wait for it in the ledger, behind the old ones.
            session.isCatchingUp = isReady || !ledger.undelivered(of: hello.name).isEmpty
        }
        if isReady && isSupervised {
            returning.insert(hello.name)
            welcomeReturningPlugins()
        }
        checkReadiness()
    }

    /// Plugins (re)started after bus.ready that said hello and wait to be announced.
    private var returning = Set<String>()
    /// Connections whose session ended: what they still send is their leftovers, not news.
    private var endedIdentities = Set<[UInt8]>()

    /// Once every running plugin is connected, announces the returning ones in configuration order — each
    /// with its own bus.ready and its mailbox — so a restart's journal does not depend on process timing.
    private func welcomeReturningPlugins() {
        guard !returning.isEmpty, allRunningPluginsConnected else { return }
        for plugin in supervisor.plugins where returning.contains(plugin.spec.name) {
            guard let session = sessionsByName[plugin.spec.name] else { continue }
            announceUp(session)
            catchUp(session)
            emit(topic: "bus.ready", body: ["plugins": [.string(plugin.spec.name)]])
            drainOutbox()
        }
        returning = []
    }

    /// Hands a returning plugin what it missed — what its last process did not acknowledge, and what arrived
    /// while it was away — in sequence order, at once and just before its own bus.ready (which it waits for,
    /// holding them): so its acknowledgement of bus.ready covers them all, and no turn passes meanwhile.
    /// From now on its new events are delivered as they come.
    private func catchUp(_ session: Session) {
        session.isCatchingUp = false
        for item in ledger.undelivered(of: session.name) {
            deliver(item.frame, seq: item.seq, to: session)
        }
    }

    /// `plugin.up`, for plugins only: taps and tools come and go without a trace in the journal.
    private func announceUp(_ session: Session) {
        guard session.role != .tap && session.role != .tool else { return }
        emit(topic: "plugin.up", body: [
            "name": .string(session.name), "role": .string(session.role.rawValue),
            "subscribe": .array(session.subscriptions.map(JSONValue.string)),
        ])
    }

    private func remove(_ session: Session, reason: String) {
        forget(session, saidBye: reason == "bye")
        guard session.role != .tap && session.role != .tool else { return }
        emit(topic: "plugin.down", body: ["name": .string(session.name), "reason": .string(reason)])
    }

    /// Ends a session. Its unacknowledged events go back to the ledger for the plugin's next process; only an
    /// end without `bye` (a crash, a kill) counts against the event it had in hand.
    private func forget(_ session: Session, saidBye: Bool = false) {
        if session.isDurable, let abandoned = ledger.processEnded(session.name, crashed: !saidBye) { reportAbandoned(abandoned, by: session.name) }
        sessions.removeAll { $0 === session }
        sessionsInNameOrder.removeAll { $0 === session }
        sessionsByIdentity[session.identity] = nil
        session.hasEnded = true
        if sessionsByName[session.name] === session { sessionsByName[session.name] = nil }
        endedIdentities.insert(session.identity)
        if endedIdentities.count > 1024 { endedIdentities = [session.identity] }
        pendingRequests = pendingRequests.filter { $0.value.requester != session.identity }
        if awaitingTurn === session { awaitingTurn = nil }
    }

    /// Answers a bad message: an `error` to its sender, a `bus.error` event for everyone, and a count.
    /// The housekeeping messages of a connection whose session ended (its last ack or heartbeat) get only the
    /// `error` that tells it to say hello again: they are no news, and journaling them would depend on timing.
    private func refuse(_ identity: [UInt8], session: Session?, _ error: BusProtocolError) {
        if session == nil, case .helloRequired(let kind) = error, kind != "publish" || endedIdentities.contains(identity) {
            statistics.countError(error.code)
            sendDirect(WireCodec.encode(.error(ErrorReport(error))), to: identity)
            return
        }
        statistics.countError(error.code)
        session?.errors += 1
        session?.lastError = error.description
        let sender = session?.name ?? hexIdentity(identity)
        logger.warning("refused a message", metadata: ["sender": "\(sender)", "code": "\(error.code)", "reason": "\(error.description)"])
        sendDirect(WireCodec.encode(.error(ErrorReport(error))), to: identity)
        emit(topic: "bus.error", body: ["code": .string(error.code), "message": .string(error.description), "sender": .string(sender)])
    }

    // MARK: Sequencing and delivery

    /// Queues an event from the broker itself (or a service) for sequencing.
    func emit(topic: String, body: JSONValue, source: String = "broker", corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil) {
        emit(topic: topic, bodyJSON: body.jsonBytes, source: source, corr: corr, deadline: deadline, audience: audience)
    }

    /// Queues an event whose body is already compact JSON (an object).
    func emit(topic: String, bodyJSON: [UInt8], source: String = "broker", corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil,
              fact: String? = nil, factValue: [UInt8]? = nil) {
        var event = PendingEvent(topic: topic, body: bodyJSON, source: source, corr: corr, deadline: deadline, requester: nil, audience: audience)
        event.fact = fact
        event.factValue = factValue
        outbox.append(event)
    }

    /// What the journal last said of each service fact, by fact: the value stated by the last event sequenced stating
    /// it (after a restart, the last one saved in bus.sqlite: what the resumed journal keeps).
    private(set) var announced: [String: [UInt8]] = [:]

    /// Sequences queued events in order; events emitted while doing so join the end of the queue.
    private func drainOutbox() {
        guard !isDrainingOutbox else { return }
        isDrainingOutbox = true
        defer { isDrainingOutbox = false }
        // Events set off together share one bus instant, so in scaled time a step and what it sets off are not
        // told apart by how long the broker took between them.
        let instant = clock.now()
        var index = 0
        while index < outbox.count {
            sequence(outbox[index], at: instant)
            index += 1
        }
        outbox.removeAll(keepingCapacity: true)
        // Journal, save, send: what a plugin is given is in bus.sqlite first, so a broker killed at any point
        // redelivers it; a journal line the save did not cover is cut off when the journal is resumed.
        flushJournal()
        crashIfDue(before: true)
        saveLedger()
        crashIfDue(before: false)
        sendAfterSave()
        pumpSerialQueue()
    }

    /// A delivery of the batch being sequenced, sent once it is saved.
    private struct UnsentDelivery {
        var session: Session
        var envelope: EnvelopeFrame
        var seq: UInt64
        var isReply: Bool
    }

    private var unsent: [UnsentDelivery] = []
    /// `unsent`'s other buffer: the two take turns, so sending a batch allocates no list.
    private var spareUnsent: [UnsentDelivery] = []
    /// The receivers of batch messages being put together in `sendAfterSave`.
    private var batchReceivers: [Session] = []

    private func sendAfterSave() {
        guard !unsent.isEmpty else { return }
        var batch = spareUnsent
        swap(&batch, &unsent)
        defer {
            batch.removeAll(keepingCapacity: true)
            spareUnsent = batch
        }
        // Outside virtual time, what a receiver that reads batches gets of this batch goes in one message: one send,
        // one wake-up and one receive instead of one per event, with the same delivery numbers in the same order.
        // (In virtual time every delivery goes on its own, as before: batching changes no turn and no journal.)
        let batching = !clock.isVirtual && batch.count > 1
        // A session that ended meanwhile gets nothing: a supervised plugin has it in the ledger for its next process.
        for index in batch.indices where !batch[index].session.hasEnded {
            let session = batch[index].session
            guard batching && session.readsBatches else {
                deliver(batch[index].envelope.frame, seq: batch[index].seq, to: session, isReply: batch[index].isReply)
                continue
            }
            if session.batchItems.isEmpty { batchReceivers.append(session) }
            session.batchItems.append(index)
        }
        // Receivers of the same events share one copy of them (the usual case: they subscribe to the same topics).
        var lastJoined: (items: [Int], frame: SharedFrame)?
        for session in batchReceivers {
            let items = session.batchItems
            session.batchItems.removeAll(keepingCapacity: true)
            guard items.count > 1 else {
                let item = items[0]
                deliver(batch[item].envelope.frame, seq: batch[item].seq, to: session, isReply: batch[item].isReply)
                continue
            }
            if lastJoined?.items != items {
                lastJoined = (items, joinedEnvelopes(items, of: batch))
            }
            deliver(items, of: batch, joined: lastJoined!.frame, to: session)
        }
        batchReceivers.removeAll(keepingCapacity: true)
    }

    /// Whether the batch being sequenced holds an event on the fault test's crash topic.
    private var crashArmed = false
    /// How many batches held an event on the crash topic so far (the crash comes at `crashOccurrence`).
    private var batchesOnCrashTopic = 0

    private func armCrashPoint(_ topic: String) {
        if settings.crashPoint?.topic == topic { crashArmed = true }
    }

    /// For fault tests: dies as a SIGKILL would, at the chosen side of the save, with nothing cleaned up.
    private func crashIfDue(before: Bool) {
        guard crashArmed, let point = settings.crashPoint else { return }
        if before { batchesOnCrashTopic += 1 } else { crashArmed = false }  // a batch is counted once, at its first point
        guard batchesOnCrashTopic == settings.crashOccurrence, (point == .beforeSaving(topic: point.topic)) == before else { return }
        logger.notice("killing the broker \(before ? "before" : "after") saving batch \(batchesOnCrashTopic) with \(point.topic), as the fault test asks")
        kill(getpid(), SIGKILL)
    }

    // MARK: Durable delivery

    /// Opens the state folder's delivery store, if the broker has one: numbering and (scaled) bus time go on
    /// from where the last broker stopped, and what it left unacknowledged waits for the plugins.
    private func openDeliveryLedger() throws {
        guard let path = settings.deliveryStorePath else {
            ledger = DeliveryLedger(limit: settings.deliveryLogLimit, store: nil)
            return
        }
        let store = try DeliveryStore(path: path)
        let snapshot = try store.load()
        ledger = DeliveryLedger(limit: settings.deliveryLogLimit, store: store)
        let configured = Set(settings.plugins.map(\.name))
        ledger.restore(snapshot.pending.filter { configured.contains($0.plugin) }, published: snapshot.published)
        lastSeq = snapshot.lastSeq
        savedSeqAtStart = snapshot.savedSeq
        announced = snapshot.announced
        // Held for a settled point the last broker did not reach: sequenced at this one's.
        heldPublications = snapshot.held.filter { configured.contains($0.source) }.map(PendingEvent.init(held:))
        if let time = snapshot.busTime { clock.resume(notBefore: time, continuingTheRun: settings.journalAppends) }
        if !snapshot.pending.isEmpty {
            logger.notice("redelivering what plugins had not acknowledged when the last broker stopped",
                          metadata: ["events": "\(snapshot.pending.count)", "store": "\(path)"])
        }
    }

    /// Keeps an event for a supervised plugin until it acknowledges it; a full ledger is reported, never silent.
    private func keep(_ seq: UInt64, _ json: [UInt8], _ frame: SharedFrame, for plugin: String) {
        guard case .full(let name, let limit)? = ledger.route(seq: seq, json: json, frame: frame, to: plugin) else { return }
        statistics.countError("delivery-log-full")
        logger.error("delivery log full", metadata: ["plugin": "\(name)", "limit": "\(limit)"])
        emit(topic: "bus.error", body: [
            "code": "delivery-log-full", "sender": "broker", "receiver": .string(name),
            "message": .string("\(name) has \(limit) unacknowledged events (bus.deliveryLogLimit): from seq \(seq) on, events for it are no longer kept for redelivery until it catches up"),
        ])
    }

    private func reportAbandoned(_ entry: DeliveryLedger.Entry, by plugin: String) {
        statistics.countError("delivery-abandoned")
        let topic = (try? WireCodec.decodeEnvelope(entry.json).topic) ?? "?"
        logger.error("delivery abandoned", metadata: ["plugin": "\(plugin)", "seq": "\(entry.seq)", "topic": "\(topic)"])
        emit(topic: "bus.error", body: [
            "code": "delivery-abandoned", "sender": "broker", "receiver": .string(plugin), "seq": .int(Int64(entry.seq)),
            "message": .string("\(plugin) ended \(DeliveryLedger.endingsBeforeAbandoning) times while handling seq \(entry.seq) (\(topic)); it is not delivered again. See its log"),
        ])
    }

    /// Writes the ledger's changes; a failure (disk full, read-only) is reported once and retried on the next
    /// save, so nothing is lost when space returns.
    private func saveLedger() {
        do {
            try ledger.save(lastSeq: lastSeq, everySequenced: journal != nil, busTime: clock.now(), timeAhead: clock.scaledMillisecondsPerWallSecond, wallNow: monotonicMilliseconds())
            if let failure = storageFailure {
                storageFailure = nil
                logger.notice("the delivery store is writable again", metadata: ["after": "\(failure)"])
            }
        } catch {
            let message = "cannot write the delivery store \(ledger.store?.path ?? ""): \(error); unacknowledged events stay in memory and are written when it can be"
            lastStorageError = message
            guard storageFailure == nil else { return }
            storageFailure = message
            reportStorageFailure(message)
        }
    }

    /// Writes the journal's buffer; a failure is reported once per episode, and the events stay buffered.
    private func flushJournal() {
        do {
            try journal?.flush()
            journalFailing = false
        } catch {
            reportJournalFailure(error)
        }
    }

    private func reportJournalFailure(_ error: Error) {
        guard !journalFailing else { return }
        journalFailing = true
        reportStorageFailure("cannot write the journal \(journal?.path ?? ""): \(error); its events are kept in memory and written when it can be")
    }

    /// A plugin's report of what iOS lets pass silently: counted in `status` under `code`, said on the terminal.
    func countPluginReport(_ code: String, _ message: String) {
        statistics.countError(code)
        logger.warning("\(message)")
    }

    /// A write of the broker's or the device's state failed: said on the terminal, counted in `status`, and
    /// published as `bus.error` `storage-failed`.
    func reportStorageFailure(_ message: String) {
        lastStorageError = message
        statistics.countError("storage-failed")
        logger.error("\(message)")
        emit(topic: "bus.error", body: ["code": "storage-failed", "sender": "broker", "message": .string(message)])
    }

    /// Whether deliveries to acknowledging plugins go one at a time (virtual time, once the bus is ready).
    private var serialDispatch: Bool { clock.isVirtual && isReady }
    /// Deliveries waiting for their turn, in order; and the session whose acknowledgement is awaited.
    private var serialQueue: [(session: Session, frame: SharedFrame, seq: UInt64, observed: Bool)] = []
    /// Each supervised plugin's events not yet acknowledged: its mailbox while it is between two processes
    /// (short-lived extensions, restarts, crashes), handed over in order when it says hello again.
    private var ledger = DeliveryLedger(limit: 0, store: nil)
    /// The last sequence number the previous broker saved: a resumed journal is cut back to it.
    private var savedSeqAtStart: UInt64?
    /// The subscriptions each supervised plugin had in its last session, to fill its mailbox while it is away.
    private var lastSubscriptions: [String: [String]] = [:] {
        didSet { absentSubscribersFound = nil }
    }
    /// The plugins in `lastSubscriptions` without a session, found again only when a session or a subscription comes
    /// or goes: every event looks at them, and usually there are none.
    private var absentSubscribersFound: [String]?
    private var absentSubscribers: [String] {
        if let found = absentSubscribersFound { return found }
        let found = lastSubscriptions.keys.filter { sessionsByName[$0] == nil }
        absentSubscribersFound = found
        return found
    }
    private var serialQueueHead = 0
    private var awaitingTurn: Session?
    /// Whether `awaitingTurn` is an observer finishing what it observes before its turn (it does not hold the turn yet).
    private var awaitingObserver = false

    /// Hands out the next deliveries once the plugin that has the turn has acknowledged everything.
    private func pumpSerialQueue() {
        // While a plugin is between two processes, nobody takes a turn: its return happens at a fixed point.
        guard returning.isEmpty, allRunningPluginsConnected else { return }
        while serialQueueHead < serialQueue.count {
            if let current = awaitingTurn, current.acknowledges, awaitingObserver ? current.isStillObserving : current.lag > 0,
               sessionsByIdentity[current.identity] === current { return }
            awaitingTurn = nil
            awaitingObserver = false
            let next = serialQueue[serialQueueHead]
            // It left meanwhile: a supervised plugin gets it from the ledger when it comes back.
            guard sessionsByIdentity[next.session.identity] === next.session else {
                serialQueueHead += 1
                continue
            }
            // An observed event takes no turn: it goes out in its place in the order, and the queue moves on.
            if next.observed {
                serialQueueHead += 1
                deliver(next.frame, seq: next.seq, to: next.session)
                next.session.lastObservedSeq = max(next.session.lastObservedSeq, next.seq)
                continue
            }
            // An observer's turn waits until it has handled all it observed, so that it acts on all of it.
            if next.session.acknowledges, next.session.isStillObserving {
                awaitingTurn = next.session
                awaitingObserver = true
                return
            }
            serialQueueHead += 1
            deliver(next.frame, seq: next.seq, to: next.session)
            // The deliveries queued next for the same plugin go in the same turn: nobody else runs between them
            // either way, and what it publishes meanwhile is queued behind them, so the journal is the same as
            // with one turn each — for one round trip instead of several.
            while serialQueueHead < serialQueue.count, serialQueue[serialQueueHead].session === next.session {
                let following = serialQueue[serialQueueHead]
                serialQueueHead += 1
                deliver(following.frame, seq: following.seq, to: following.session)
            }
            statistics.turns += 1
            awaitingTurn = next.session
            // The OS's request in this turn (or handed over with a returning plugin's mailbox) is in its hands now.
            if !answerDeadlines.isEmpty { startAnswerTimers(answerDeadlines.start(heldBy: next.session.name)) }
        }
        serialQueue.removeAll(keepingCapacity: true)
        serialQueueHead = 0
    }

    /// Whether `name`'s session, or its next process, gets events on `topic`.
    private func willReceive(_ topic: String, _ name: String) -> Bool {
        if let session = sessionsByName[name] { return session.wants(topic) }
        return isExpectedBack(name) && (lastSubscriptions[name] ?? []).contains { Topic.matches(topic, prefix: $0) }
    }

    /// Whether a plugin without a session will come back (it is supervised and running or restarting).
    private func isExpectedBack(_ name: String) -> Bool {
        lastSubscriptions[name] != nil && supervisor.runningPlugins.contains { $0.spec.name == name }
    }

    private var recipientsBuffer: [Session] = []

    private func sequence(_ event: PendingEvent, at time: BusTime) {
        lastSeq += 1
        lastSequencedTime = max(lastSequencedTime, time)
        let envelope = Envelope(seq: lastSeq, time: time, topic: event.topic, source: event.source,
                                corr: event.corr, deadline: event.deadline, body: event.body)
        let json = WireCodec.encodeEnvelope(envelope)
        if journal?.append(json) == true { flushJournal() }
        armCrashPoint(event.topic)
        if let fact = event.fact {
            announced[fact] = event.factValue ?? event.body
            ledger.noteAnnounced(fact, body: event.factValue ?? event.body)
        }
        statistics.events += 1
        var requester: [UInt8]?
        // A request the OS addresses to a role goes to that role's holder only (and to taps, which only read).
        var addressee: String?
        if let corr = event.corr {
            if event.topic.hasSuffix(Topic.requestSuffix), event.requester != nil || Topic.answeringRole(forRequest: event.topic) != nil {
                let answerer = answerer(ofRequest: event.topic, among: event.audience)
                pendingRequests[corr] = PendingRequest(requester: event.requester, replyTopic: Topic.reply(to: event.topic), answerer: answerer)
                switch answerer {
                case .session(let name): addressee = name
                case .nobody: addressee = ""
                case .system, .anyone: break
                }
            } else if let pending = pendingRequests[corr], pending.replyTopic == event.topic {
                pendingRequests[corr] = nil
                requester = pending.requester
            }
        }
        // The envelope is copied into libzmq once, if a delivery on its own needs it, and shared by all of them.
        var shared: EnvelopeFrame?
        // In virtual time, in name order (the order of turns). The list's buffer is kept from one event to the next.
        var recipients = recipientsBuffer
        recipientsBuffer = []
        defer {
            recipients.removeAll(keepingCapacity: true)
            recipientsBuffer = recipients
        }
        for session in serialDispatch ? sessionsInNameOrder : sessions where (session.wants(event.topic) && (addressee == nil || session.name == addressee || session.role == .tap)
            && (event.audience == nil || event.audience!.contains(session.name) || session.role == .tap))
            || (requester != nil && session.identity == requester!) {
            recipients.append(session)
        }
        for session in recipients {
            if shared == nil { shared = EnvelopeFrame(json) }
            let isReply = session.identity == requester
            // A supervised plugin's events are kept until it acknowledges them (a reply only matters to the
            // process that asked). One catching up gets them from the ledger, behind what it missed.
            if session.isDurable && !isReply {
                keep(envelope.seq, json, shared!.frame, for: session.name)
                if session.isCatchingUp { continue }
            }
            // In virtual time, plugins take their turns one at a time (by name), so that no race between plugin
            // processes can reorder the journal. A reply goes at once to the requester, which waits for it.
            if serialDispatch && session.acknowledges && !isReply {
                serialQueue.append((session, shared!.frame, envelope.seq, addressee == nil && session.observes(event.topic)))
            } else {
                unsent.append(UnsentDelivery(session: session, envelope: shared!, seq: envelope.seq, isReply: isReply))
            }
        }
        for name in absentSubscribers where isExpectedBack(name) && (addressee == nil || name == addressee) && (event.audience?.contains(name) ?? true)
            && lastSubscriptions[name, default: []].contains(where: { Topic.matches(event.topic, prefix: $0) }) {
            if shared == nil { shared = EnvelopeFrame(json) }
            keep(envelope.seq, json, shared!.frame, for: name)
        }
        // The OS's own request (plugins' requests have a requester): its deadline waits for the answerer's turn.
        if !answerDeadlines.isEmpty, event.requester == nil, event.topic.hasSuffix(Topic.requestSuffix), let corr = event.corr {
            let answerer = addressee.flatMap { willReceive(event.topic, $0) ? $0 : nil }
            if let now = answerDeadlines.sequenced(corr: corr, seq: envelope.seq, answerer: answerer) { startAnswerTimers([now]) }
        }
        for service in services where service.subscriptions.contains(where: { Topic.matches(event.topic, prefix: $0) }) {
            service.handle(envelope)
        }
        for observer in eventObservers { observer(envelope) }
    }

    @inline(__always)
    private func deliver(_ envelope: SharedFrame, seq: UInt64, to session: Session, isReply: Bool = false) {
        noteHandOver(seq: seq, to: session, isReply: isReply)
        session.lastDelivery += 1
        let delivery = session.lastDelivery
        // Two frames: `event <delivery>`, written on the stack, and the envelope every receiver shares.
        let queued = sent { router in
            try WireCodec.withEventHead(delivery: delivery) { head in
                try router.send(routingID: session.identity, header: head, shared: envelope, dontWait: true)
            }
        }
        record(queued, delivery: delivery, seq: seq, to: session, isReply: isReply)
    }

    /// The envelopes of `items` one per line, as a batch carries them, in one frame.
    private func joinedEnvelopes(_ items: [Int], of batch: [UnsentDelivery]) -> SharedFrame {
        var size = items.count - 1
        for item in items { size += batch[item].envelope.json.count }
        return SharedFrame(size: size) { buffer in
            var offset = 0
            for item in items {
                if offset > 0 {
                    buffer[offset] = WireCodec.batchSeparator
                    offset += 1
                }
                batch[item].envelope.json.withUnsafeBytes { json in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]).copyMemory(from: json)
                }
                offset += batch[item].envelope.json.count
            }
        }
    }

    /// Delivers several events in one message (`events <first delivery>`, then `joined`: their envelopes, one per
    /// line), to a session that reads batches. Each counts as a delivery of its own, with its own number.
    private func deliver(_ items: [Int], of batch: [UnsentDelivery], joined: SharedFrame, to session: Session) {
        for item in items { noteHandOver(seq: batch[item].seq, to: session, isReply: batch[item].isReply) }
        let first = session.lastDelivery + 1
        session.lastDelivery += UInt64(items.count)
        let queued = sent { router in
            try WireCodec.withEventsHead(firstDelivery: first) { head in
                try router.send(routingID: session.identity, header: head, shared: joined, dontWait: true)
            }
        }
        for (offset, item) in items.enumerated() {
            record(queued, delivery: first + UInt64(offset), seq: batch[item].seq, to: session, isReply: batch[item].isReply)
        }
    }

    /// The OS's request in a delivery is in its receiver's hands: its reply deadline may start.
    @inline(__always)
    private func noteHandOver(seq: UInt64, to session: Session, isReply: Bool) {
        if !answerDeadlines.isEmpty && !isReply {
            answerDeadlines.delivered(seq: seq, to: session.name)
            // Outside turns (not virtual time, or a plugin that does not acknowledge) the delivery is the hand-over.
            if !(serialDispatch && session.acknowledges) { startAnswerTimers(answerDeadlines.start(heldBy: session.name)) }
        }
    }

    /// Whether `send` queued its message on the router (false: the receiver's queue is full, or it is gone).
    @inline(__always)
    private func sent(_ send: (Socket) throws -> Bool) -> Bool {
        do {
            return try send(router!)
        } catch {
            return false  // EHOSTUNREACH: the peer is gone; its session will time out
        }
    }

    /// Counts one delivery, queued or lost; a run of losses is reported when the next delivery gets through.
    @inline(__always)
    private func record(_ queued: Bool, delivery: UInt64, seq: UInt64, to session: Session, isReply: Bool) {
        if queued {
            // A reply is awaited by the call that asked, not handled as an event: it takes no turn and needs no
            // ack (an ack of its seq would cover events still on their way, protocol.md § 9).
            session.recordDelivered(seq: seq, isReply: isReply)
            if session.isDurable { ledger.markDelivered(seq: seq, to: session.name) }
            statistics.deliveries += 1
            if let start = session.dropRunStart {
                session.dropRunStart = nil
                reportDrops(session, fromDelivery: start.delivery, toDelivery: delivery - 1, fromSeq: start.seq, toSeq: seq - 1)
            }
        } else {
            session.dropped += 1
            statistics.dropped += 1
            if session.dropRunStart == nil { session.dropRunStart = (delivery, seq) }
        }
    }

    private func reportDrops(_ session: Session, fromDelivery: UInt64, toDelivery: UInt64, fromSeq: UInt64, toSeq: UInt64) {
        statistics.countError("delivery-dropped")
        emit(topic: "bus.error", body: [
            "code": "delivery-dropped", "sender": "broker", "receiver": .string(session.name),
            "message": .string("\(toDelivery - fromDelivery + 1) deliveries to \(session.name) were dropped: its queue was full (deliveries \(fromDelivery)–\(toDelivery), around seq \(fromSeq)–\(toSeq))"),
            "from": .int(Int64(fromDelivery)), "to": .int(Int64(toDelivery)),
        ])
    }

    private func sendDirect(_ frames: [[UInt8]], to identity: [UInt8]) {
        _ = try? router?.send([identity] + frames, dontWait: true)
    }

    /// Whether a plugin — connected, or supervised and coming back — or a service receives events on `topic`.
    /// Taps and tools only watch: an event only they would see is not worth making (it would make the journal
    /// depend on who watched).
    func isSubscribed(_ topic: String) -> Bool {
        func matches(_ prefixes: [String]) -> Bool { prefixes.contains { Topic.matches(topic, prefix: $0) } }
        return sessions.contains { $0.role != .tap && $0.role != .tool && $0.wants(topic) }
            || absentSubscribers.contains { isExpectedBack($0) && matches(lastSubscriptions[$0, default: []]) }
            || services.contains { matches($0.subscriptions) }
    }

    /// Roles with at least one connected session.
    var connectedRoles: Set<Role> { Set(sessions.map(\.role)) }

    /// Whether one of `names` is connected in `role`.
    func isConnected(role: Role, among names: Set<String>) -> Bool {
        names.contains { sessionsByName[$0]?.role == role }
    }

    func killPlugin(named name: String, reason: String) {
        supervisor.killUnresponsive(name: name, reason: reason)
    }

    /// `bus.started`'s body: the clock's mode, and the fidelity the OS plays (so a judge of the journal knows it).
    private func startedBody() -> [String: JSONValue] {
        var body: [String: JSONValue] = ["clock": .string(clock.mode)]
        for key in ["profile", "quirks"] { body[key] = settings.settingsForPlugins[key] }
        return body
    }

    /// Facts for plugins set while running (the device clock): they override `settings.settingsForPlugins`.
    var pluginSettings: [String: JSONValue] = [:]

    /// What a SIGKILL of the broker loses, then its start again on the same state (see `BrokerBus.crashAndRestart`).
    func crashAndRestart() {
        pendingRequests = [:]
        // What each plugin had not acknowledged stays in the delivery ledger (as in bus.sqlite after a real SIGKILL)
        // and goes to its next process; the broker's crash is not held against the event a plugin had in hand.
        for plugin in supervisor.plugins {
            if let session = sessionsByName[plugin.spec.name] { forget(session, saidBye: true) }
        }
        supervisor.restartAll(reason: "broker crash")
        var body = startedBody()
        body["after"] = "crash"
        emit(topic: "bus.started", body: .object(body))
    }

    /// Kills and restarts every supervised plugin, or the one named; their sessions end at once.
    func restartPlugins(named name: String? = nil, reason: String) {
        for plugin in supervisor.plugins where name == nil || plugin.spec.name == name {
            if let session = sessionsByName[plugin.spec.name] { remove(session, reason: reason) }
        }
        if let name { supervisor.restart(named: name, reason: reason) } else { supervisor.restartAll(reason: reason) }
    }

    // MARK: Status

    /// The status report; without a trusted credential (`full` false) only what is harmless: no pids, no paths,
    /// no error texts (they quote plugins' logs), no endpoint.
    private func statusReport(full: Bool) -> JSONValue {
        let report = statusReport()
        guard !full else { return report }
        let hidden: Set<String> = ["pid", "log", "lastError", "lastExit", "runtimeDir", "endpoint"]
        func redact(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let fields): return .object(fields.filter { !hidden.contains($0.key) }.mapValues(redact))
            case .array(let items): return .array(items.map(redact))
            default: return value
            }
        }
        return redact(report)
    }

    private func statusReport() -> JSONValue {
        let now = monotonicMilliseconds()
        var plugins: [JSONValue] = []
        var seen = Set<String>()
        for session in sessions {
            seen.insert(session.name)
            var entry: [String: JSONValue] = [
                "name": .string(session.name), "role": .string(session.role.rawValue), "connected": true,
                "subscriptions": .array(session.subscriptions.map(JSONValue.string)),
                "uptimeMs": .int(now - session.connectedAt), "delivered": .int(Int64(session.delivered)),
                "lag": .int(Int64(session.lag)), "dropped": .int(Int64(session.dropped)),
                "gaps": .int(Int64(session.gapsReported)), "errors": .int(Int64(session.errors)),
                "acknowledges": .bool(session.acknowledges),
            ]
            if session.isDurable { entry["kept"] = .int(Int64(ledger.count(of: session.name))) }
            if let pid = session.pid { entry["pid"] = .int(pid) }
            if let error = session.lastError { entry["lastError"] = .string(error) }
            if let plugin = supervisor.plugin(named: session.name) { entry.merge(supervision(plugin, now: now)) { _, new in new } }
            plugins.append(.object(entry))
        }
        for plugin in supervisor.plugins where !seen.contains(plugin.spec.name) {
            var entry = supervision(plugin, now: now)
            entry["name"] = .string(plugin.spec.name)
            entry["role"] = .string(plugin.spec.role.rawValue)
            entry["connected"] = false
            plugins.append(.object(entry))
        }
        var errors: [String: JSONValue] = [:]
        for (code, count) in statistics.errorsByCode { errors[code] = .int(Int64(count)) }
        return [
            "broker": [
                "pid": .int(Int64(getpid())), "runtimeDir": .string(settings.runtimeDirectory.path),
                "endpoint": .string(boundEndpoint), "clock": .string(clock.mode), "time": .int(clock.now()),
                "uptimeMs": .int(now - startedAt), "seq": .int(Int64(lastSeq)),
                "lastStorageError": lastStorageError.map(JSONValue.string) ?? .null,
            ],
            "counters": [
                "storageErrors": .int(Int64(statistics.errorsByCode["storage-failed"] ?? 0)),
                "events": .int(Int64(statistics.events)), "deliveries": .int(Int64(statistics.deliveries)),
                "dropped": .int(Int64(statistics.dropped)), "errors": .int(Int64(statistics.errors)),
                "repeatsDropped": .int(Int64(statistics.repeatsDropped)),
                "turns": .int(Int64(statistics.turns)),
                "errorsByCode": .object(errors),
            ],
            "plugins": .array(plugins),
        ]
    }

    private func supervision(_ plugin: PluginSupervisor.Plugin, now: Int64) -> [String: JSONValue] {
        var entry: [String: JSONValue] = ["restarts": .int(Int64(plugin.restarts)), "supervised": true]
        switch plugin.state {
        case .running: entry["state"] = "running"; entry["processUptimeMs"] = .int(now - plugin.startedAt)
        case .backingOff: entry["state"] = "restarting"
        case .failed(let why): entry["state"] = "failed"; entry["lastError"] = .string(why)
        case .stopped: entry["state"] = "stopped"
        }
        if let pid = plugin.pid { entry["pid"] = .int(Int64(pid)) }
        entry["log"] = .string(supervisor.log(of: plugin).path)
        if let exit = plugin.lastExit { entry["lastExit"] = .string(exit) }
        if entry["lastError"] == nil, let error = plugin.lastError { entry["lastError"] = .string(error) }
        return entry
    }
}
