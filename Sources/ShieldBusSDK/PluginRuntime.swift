import AppGroupStore
import BusClient
import CProcessControl
import BusProtocol
import DeviceAPI
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The running plugin's link to the bus: one connection, the bus clock as the plugin sees it, synchronous
/// calls to the OS, and the event loop that dispatches events, acknowledges them, heartbeats and reconnects.
///
/// Why one file past 500 lines: the loop's state — events kept during a call, the handled record, an interrupted
/// handling, work handed over by other threads — is private and shared by dispatch, calls and publications alike;
/// split, it would have to be opened to the whole module.
///
/// One per plugin (`PluginRuntime.current`), as Apple's APIs (`ManagedSettingsStore()`,
/// `DeviceActivityCenter()`) reach the OS without being handed a connection: a plugin process has one; a test that
/// hosts several plugins in its own process (`InProcessPlugin`) binds each one's to the thread its loop runs on.
///
/// Sendable by hand: its loop's state is touched only on the plugin's thread; other threads hand it work
/// (`onPluginThread`, publications from a `Task`) through a locked queue.
public final class PluginRuntime: @unchecked Sendable {
    /// The runtime of the running plugin: the one whose loop runs on this thread (or in a task started from it) when
    /// several are hosted in one process, else the process's own, set once by `PluginHost.run` before any callback.
    public static var current: PluginRuntime? { bound ?? processRuntime.current }

    /// The runtime whose loop runs on this thread, for plugins hosted in a test's process.
    @TaskLocal static var bound: PluginRuntime?

    /// The runtime of a plugin process: what every thread of it (a Dispatch queue's, a detached task's) sees.
    private static let processRuntime = LockedValue<PluginRuntime?>(nil)

    /// Makes `runtime` the process's: a plugin process has one.
    static func setProcessRuntime(_ runtime: PluginRuntime) {
        processRuntime.withValue { $0 = runtime }
    }

    public let name: String
    public let role: Role
    public let logger: Logger
    /// The broker's facts for plugins (time zone, profile, quirks).
    public private(set) var settings: JSONValue = [:] { didSet { hasSettings = true; settingsZone.withValue { $0 = nil }; bindDeviceClock() } }
    /// The zone `settings` name, made once per change of them: a monitor asks for it several times per callback, and
    /// `TimeZone(identifier:)` looks the name up in Foundation's caches each time. Locked: any thread may ask.
    private let settingsZone = LockedValue<TimeZone?>(nil)
    /// Whether the welcome's settings are in: until then only the clock is bound, so that the first zone bound is the
    /// welcome's, the one the process was started in (`TZ`), which needs no reset of Foundation's caches.
    private var hasSettings = false
    /// Bus time: the time of the event being handled, or of a later one already heard (the welcome's included).
    /// Plugins never read the system clock.
    public private(set) var now: Date { didSet { bindDeviceClock() } }
    /// The event being handled.
    public private(set) var currentEvent: Envelope?

    let connection: BusConnection
    /// Events that arrived while a synchronous call waited for its reply; handled next, in order.
    private var pending: [Envelope] = []
    /// The last reply read for each call topic (`LastReplies`).
    private var lastReplies = LastReplies()
    private var correlation = 0
    private var handler: ((Envelope) -> Void)?
    /// What this plugin handled, across its processes: a redelivered event is skipped (exactly once).
    private let handled: HandledEvents?
    /// What handling the current event has published so far (events, not requests or replies), kept with its
    /// handled record; nil when nothing is recorded.
    private var publications: [Publish]?
    /// Set when a call made while handling the current event lost its broker (in a plugin with a handled record):
    /// the event is then left unhandled (`handleOnce`, `dispatch`), and nothing more of that handling reaches the bus.
    private var interruption: CallInterruption?
    /// Sessions the broker welcomed this process to (a new one after the broker restarted or forgot it).
    private var sessions = 0
    /// How long one wait for the broker lasts at most, so that a stop request is noticed soon (ms).
    private static let stopCheckMilliseconds = 250
    /// Subscribed topic prefixes it only observes (hello `observe`): no calls while handling them.
    private let observedTopics: [String]
    // Set by the SIGTERM handler, read by the loop: a sig_atomic_t is what a handler may write.
    nonisolated(unsafe) private static var stopRequested: sig_atomic_t = 0
    /// `stopRequested`'s value when the stop is the broker's death seen at start, not a signal (for the log's reason).
    private static let stopForBrokerGone: sig_atomic_t = 2
    /// Hosted in a test's process: the process's signals are not its own; its host asks it to stop (`requestStop`).
    let isHostedInProcess: Bool
    private let hostStop = LockedValue(false)
    /// Where `Date()` reads the device clock: the process's, or the plugin thread's own when hosted in a test's process.
    private var deviceClock: DeviceClockBinding

    /// Whether the loop is asked to stop: a signal to the plugin's process, or its host's request — or its host's
    /// kill, which cuts the connection before it asks, so that the stop never says goodbye.
    private var isStopRequested: Bool { isHostedInProcess ? hostStop.current || isCutOff : Self.stopRequested != 0 }

    /// Whether a hosted plugin's connection was cut (`InProcessPlugin.kill`): it stands for a killed process, which
    /// waits on nothing more.
    var isCutOff: Bool { connection.isCut }

    /// Asks a plugin hosted in a test's process to stop: its loop ends within a poll, saying goodbye.
    func requestStop() { hostStop.withValue { $0 = true } }

    /// Cuts a hosted plugin's connection at once, from any thread (`InProcessPlugin.kill`), when its transport can.
    func cutConnection() { connection.cut() }

    /// What this launch keeps that a process keeps for its life in a shared instance (`AuthorizationCenter.shared`'s
    /// last answer): per runtime, so that plugins hosted in one process, and each launch of one, keep their own.
    private let launchValues = LockedValue<[String: any Sendable]>([:])

    /// The value this launch keeps under `key`, if any.
    public func launchValue(_ key: String) -> (any Sendable)? { launchValues.current[key] }

    /// Keeps `value` under `key` for the rest of this launch.
    public func setLaunchValue(_ value: any Sendable, for key: String) { launchValues.withValue { $0[key] = value } }

    /// How long a synchronous call waits for the OS (wall time).
    public var callTimeoutMilliseconds = 5_000

    init(name: String, role: Role, subscriptions: [String], observedTopics: [String] = [], watchedStateKeys: [String: [String]]? = nil,
         endpoint: String, hostedInProcess: Bool = false) throws {
        self.name = name
        isHostedInProcess = hostedInProcess
        deviceClock = DeviceClockBinding(scope: hostedInProcess ? .thread : .process)
        self.role = role
        var logger = Logger(label: "plugin.\(name)")
        logger.logLevel = LaunchEnvironment["SHIELDBUS_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        self.logger = logger
        now = Date(timeIntervalSince1970: 0)
        handled = try HandledEvents.forSupervisedPlugin(named: name, environment: LaunchEnvironment.variables)
        if let loss = handled?.restartLoss { logger.warning("\(loss)") }
        handled?.onNoteFailure = { [logger] in logger.error("cannot note a commit of \($0)") }
        self.observedTopics = observedTopics
        try Self.checkWatch(watchedStateKeys, subscriptions: subscriptions)
        connection = try BusConnection(endpoint: endpoint, hello: Hello(name: name, role: role, subscriptions: subscriptions + ["bus.ready", DeviceTopic.clockChanged, DeviceTopic.timeZoneChanged],
                                                                         pid: Int64(getpid()), observations: observedTopics,
                                                                         watch: watchedStateKeys.map(StateWatch.init)),
                                       runtime: .resolve(nil, environment: LaunchEnvironment.variables), environment: LaunchEnvironment.variables)
    }

    /// Refuses a `watchedStateKeys` the broker would refuse, naming the plugin's own properties rather than the
    /// hello's `watch`: a configuration error the plugin's author fixes, not a start to retry.
    static func checkWatch(_ keys: [String: [String]]?, subscriptions: [String]) throws {
        guard let keys else { return }
        if let problem = StateWatch(keys).problem { throw PluginError.configuration("watchedStateKeys: \(problem)") }
        guard subscriptions.contains(where: { Topic.matches(StateWatch.topic, prefix: $0) }) else {
            throw PluginError.configuration("watchedStateKeys narrows `\(StateWatch.topic)`, and no prefix in `subscriptions` selects it: subscribe to `\(StateWatch.topic)` too, or leave watchedStateKeys nil")
        }
    }

    /// The time zone in force on the device (from the welcome, then `device.time-zone-changed`).
    public var timeZone: TimeZone {
        settingsZone.withValue { kept in
            if let kept { return kept }
            let zone = settings["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
            kept = zone
            return zone
        }
    }

    /// What the device's clock shows now — `Date()` on a phone: bus time plus the offset the person set
    /// (from the welcome, then `device.clock-changed`). Bus time itself is `now`.
    public var deviceClockNow: Date { now.addingTimeInterval(clockOffset) }

    /// How far the person set the device clock from bus time, in seconds.
    public var clockOffset: TimeInterval { Double(settings["clockOffsetMs"]?.intValue ?? 0) / 1000 }

    /// How many device seconds pass per host second between events: none in virtual time (the clock holds still at
    /// the instant being handled), the broker's speed in scaled time.
    private var deviceClockRate: Double {
        switch clockMode {
        case "virtual": return 0
        case "scaled": return settings["clockSpeed"]?.doubleValue ?? 1
        default: return 1
        }
    }

    /// Puts the device's clock and zone behind the process's system clock (`Date()`, `TimeZone.current`).
    private func bindDeviceClock() {
        deviceClock.set(deviceTime: deviceClockNow, rate: deviceClockRate, offset: clockOffset)
        guard hasSettings else { return }
        DeviceClockBinding.set(zoneNamed: settings["timeZone"]?.stringValue) { timeZone }
    }

    /// Keeps the device clock's facts current: they change while the plugin runs.
    private func noteClockFacts(_ envelope: Envelope) {
        guard envelope.topic == DeviceTopic.clockChanged || envelope.topic == DeviceTopic.timeZoneChanged,
              case .object(var facts) = settings else { return }
        let body = envelope.bodyValue
        if let offset = body["offsetMs"], offset.intValue != nil { facts["clockOffsetMs"] = offset }
        if let zone = body["timeZone"], zone.stringValue != nil { facts["timeZone"] = zone }
        settings = .object(facts)
    }

    /// The plugin's options from the configuration (`plugins[].options`), as JSON.
    public var options: JSONValue {
        (try? Self.launchOptionsBytes()).flatMap { try? JSONValue(parsing: $0) } ?? [:]
    }

    /// The options file the broker wrote (`SHIELDBUS_PLUGIN_OPTIONS_FILE`); `{}` for a plugin started by hand.
    static func launchOptionsBytes() throws -> [UInt8] {
        guard let path = LaunchEnvironment["SHIELDBUS_PLUGIN_OPTIONS_FILE"], !path.isEmpty else { return Array("{}".utf8) }
        guard let bytes = readFile(path) else {
            throw PluginError.configuration("cannot read the plugin's options file \(path) (SHIELDBUS_PLUGIN_OPTIONS_FILE)")
        }
        return bytes
    }

    /// The bytes of the file at `path`, nil when it cannot be read. POSIX calls, not `FileManager.default`: its first
    /// use makes the manager and its types, which a launch would pay for this one read.
    private static func readFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(Int(status.st_size), 0) + 1)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// The plugin's options decoded as `T`; a mismatch is a clear error naming the plugin.
    public func options<T: Decodable>(as type: T.Type) throws -> T { try Self.launchOptions(as: type) }

    /// The options of the plugin being launched, decoded as `T`, readable before it connects (e.g. to choose
    /// its subscriptions from them); a mismatch is a clear error naming the plugin.
    public static func launchOptions<T: Decodable>(as type: T.Type) throws -> T {
        let bytes = try launchOptionsBytes()
        return try fitting(type, describing: DeviceAPICoding.describe) { try DeviceAPICoding.decode(type, from: bytes) }
    }

    /// The options of the plugin being launched, read as `T` from their JSON (`JSONReadableOptions`: no `Codable`);
    /// a mismatch is a clear error naming the plugin, the key and what was expected.
    public static func launchOptions<T: JSONReadableOptions>(as type: T.Type) throws -> T {
        let bytes = try launchOptionsBytes()
        return try fitting(type, describing: { "\($0)" }) { try T(json: JSONValue(parsing: bytes)) }
    }

    /// Runs `read`, turning what it throws into a configuration error that names the plugin and the type.
    private static func fitting<T>(_ type: T.Type, describing describe: (Error) -> String, _ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch {
            let reason = describe(error)
            guard let name = LaunchEnvironment["SHIELDBUS_PLUGIN_NAME"] else {
                throw PluginError.configuration("this plugin was started outside `shieldbus run` (no SHIELDBUS_PLUGIN_NAME), so it has no options; declare it under a configuration's `plugins:` and run that — its options must fit \(type): \(reason)")
            }
            throw PluginError.configuration("the options of plugin '\(name)' in the configuration do not fit \(type): \(reason)")
        }
    }

    /// The bus clock's mode, from the broker's welcome: `real`, `scaled` or `virtual`. Only under `real` does bus
    /// time match the wall clock, e.g. for anything shown outside the simulation (a desktop notification).
    public var clockMode: String { connection.welcome?.clock ?? "real" }

    /// Whether an ios-realistic quirk is on (see `shieldbus run --help`).
    public func hasQuirk(_ name: String) -> Bool {
        settings["quirks"]?.arrayValue?.contains(.string(name)) ?? false
    }

    /// Whether this plugin is an app extension (everything but the companion app, generic plugins and tools).
    public var isExtension: Bool { [.monitor, .shield, .action, .notifier, .report].contains(role) }

    // MARK: Publishing and calling

    /// Publishes an event with a Codable body.
    public func publish<Body: Encodable>(_ topic: String, _ body: Body) throws {
        try send(Publish(topic: topic, body: DeviceAPICoding.encode(body)))
    }

    /// Publishes an event with a JSON body.
    public func publish(_ topic: String, json body: JSONValue) throws {
        try send(Publish(topic: topic, body: body))
    }

    /// Publishes an event, marked with its cause (the event being handled) and kept for the handled record.
    /// After an interrupted call it is not sent: the event is handled again, and what that handling publishes (with
    /// the same causes) is what counts — this handling's later publications would follow from a call that failed.
    private func send(_ publication: Publish) throws {
        // The connection is the plugin thread's alone: a publication from a `Task` or another queue goes out from there.
        guard isOnPluginThread else { return enqueue { [weak self] in try? self?.send(publication) } }
        guard interruption == nil else { return logger.debug("not published (the event will be handled again): \(publication.topic)") }
        guard publications != nil, let cause = currentEvent?.seq else { return try connection.publish(publication) }
        var publication = publication
        publication.cause = PublicationCause(seq: cause, index: publications!.count)
        try connection.publish(publication)
        publications!.append(publication)
    }

    /// Says that what the event being handled asked for could not be recorded (a full or read-only App-Group
    /// store): `state.write-failed {what, message, cause}` — the device counts it in `status`, says it on the
    /// broker's terminal and answers the tool whose action caused it (`shieldbus do`) with the failure instead of
    /// "done". Logged here too. Never throws: a plugin reporting a failure must not fail again.
    public func reportWriteFailure(_ what: String, _ error: Error) {
        logger.error("cannot record \(what): \(error)")
        var body: [String: JSONValue] = ["what": .string(what), "message": .string("\(error)")]
        if let cause = currentEvent?.seq { body["cause"] = .int(Int64(cause)) }
        do { try publish(DeviceTopic.writeFailed, json: .object(body)) } catch { logger.error("could not report the failure: \(error)") }
    }

    /// Answers a request event: publishes `body` (JSON bytes) on the request's reply topic with its correlation id,
    /// so the broker routes it to the requester.
    public func reply(to request: Envelope, body: [UInt8]) throws {
        guard isOnPluginThread else { return enqueue { [weak self] in try? self?.reply(to: request, body: body) } }
        // The request comes back with the event being handled again, and is answered then.
        guard interruption == nil else { return }
        try connection.publish(Publish(topic: Topic.reply(to: request.topic), body: body, corr: request.corr))
    }

    /// Sends a request (a `.request` topic) and waits for its reply; events arriving meanwhile are kept for later.
    public func call<Request: Encodable, Value: Codable & Hashable>(_ topic: String, _ request: Request, expecting: Value.Type) throws -> Value {
        try call(topic, body: DeviceAPICoding.encode(request)) { try DeviceAPICoding.decode(DeviceReply<Value>.self, from: $0) }
    }

    /// The same, the reply read with the bus's JSON reader (`JSONReadableReply`; `JSONDecoder` for any other form).
    public func call<Request: Encodable, Value: JSONReadableReply>(_ topic: String, _ request: Request, expecting: Value.Type) throws -> Value {
        try call(topic, body: DeviceAPICoding.encode(request), reading: Self.readReply)
    }

    /// The same, the request written with the bus's JSON writer too (`JSONWritableRequest`).
    public func call<Request: JSONWritableRequest, Value: JSONReadableReply>(_ topic: String, _ request: Request, expecting: Value.Type) throws -> Value {
        try call(topic, body: request.requestBody, reading: Self.readReply)
    }

    private static func readReply<Value: JSONReadableReply>(_ body: [UInt8]) throws -> DeviceReply<Value> {
        if let json = try? JSONValue(parsing: body), let reply = DeviceReply<Value>(body: json) { return reply }
        return try DeviceAPICoding.decode(DeviceReply<Value>.self, from: body)
    }

    private func call<Value>(_ topic: String, body: [UInt8], reading read: ([UInt8]) throws -> DeviceReply<Value>) throws -> Value {
        let reply = try callRaw(topic, body: body)
        let decoded: DeviceReply<Value>
        do {
            // The kept replies are the plugin thread's; a call from another thread reads its own.
            decoded = isOnPluginThread ? try lastReplies.reply(to: topic, body: reply.body, reading: read) : try read(reply.body)
        } catch {
            throw PluginError.device(DeviceError(code: "malformed-reply", message: "the reply to \(topic) does not decode: \(error)"))
        }
        do {
            return try decoded.get()
        } catch let error as DeviceError {
            throw PluginError.device(error)
        }
    }

    /// Sends a request and returns the raw reply envelope.
    public func callRaw(_ topic: String, body: [UInt8]) throws -> Envelope {
        // The connection is the plugin thread's alone: a call from a `Task` or another queue is made there.
        if !isOnPluginThread { return try waitOnPluginThread { try self.callRaw(topic, body: body) } }
        // The broker would refuse it: an observer's work must not wait on anyone (docs/protocol.md, `observe`).
        if let event = currentEvent, observedTopics.contains(where: { Topic.matches(event.topic, prefix: $0) }) {
            throw PluginError.callWhileObserving(call: topic, event: event.topic)
        }
        // The handling this call belongs to is over for this process already: it will be handled again.
        if let interruption { throw PluginError.callInterrupted(call: topic, by: interruption) }
        if isStopRequested { throw interrupted(topic, by: .stopRequested) }
        correlation += 1
        let corr = "\(name)-\(correlation)"
        try connection.publish(Publish(topic: topic, body: body, corr: corr, deadline: busTime(now) + Int64(callTimeoutMilliseconds)))
        let session = sessions
        var deadline = CallDeadline(milliseconds: callTimeoutMilliseconds, now: monotonicMilliseconds(), excusingBrokerSilence: clockMode == "virtual",
                                    lastHeard: connection.lastHeardFromBroker)
        while true {
            let left = deadline.remaining(now: monotonicMilliseconds(), lastHeard: connection.lastHeardFromBroker, heartbeat: connection.heartbeatInterval)
            guard left > 0 else { break }
            let message = try connection.receive(timeoutMilliseconds: Int(min(Int64(Self.stopCheckMilliseconds), left)))
            if sessions != session {
                let error = interrupted(topic, by: .newSession)
                if case .event(let envelope, _)? = message { pending.append(envelope) }  // the new session's first
                throw error
            }
            if isStopRequested { throw interrupted(topic, by: .stopRequested) }
            guard let message else { continue }
            switch message {
            case .event(let envelope, _):
                if envelope.corr == corr && envelope.isReply && (envelope.isFromSystem || !BusTable.screenTime.isAnsweredBySystem(topic)) { return envelope }
                pending.append(envelope)
            case .error(let report):
                throw PluginError.device(DeviceError(code: report.code, message: report.message))
            case .bye(let reason):
                throw interrupted(topic, by: .brokerLeft(reason: reason))
            default:
                continue
            }
        }
        // A broker silent through the wait (stopped, or gone) answered nothing: what was asked may not have happened,
        // and the event is handled again, in the session the connection's next hello opens.
        if connection.brokerIsSilent {
            // The handling is given up and must come again: only a new session hands it back (one the broker resumes
            // would not), so the hello said during the silence is not left to resume it.
            try connection.renewSession()
            throw interrupted(topic, by: .brokerSilent)
        }
        // A timeout with the broker still there is an answer of sorts: the handler is told, and what it does instead
        // completes the event, which is recorded and acknowledged as usual. Handling it again would not help — the
        // broker, keeping this session, redelivers nothing to it, and a call the OS did not answer is likely not
        // answered the second time either — while under the virtual clock an unacknowledged event holds time still.
        throw PluginError.timeout(topic: topic, milliseconds: callTimeoutMilliseconds)
    }

    /// The call lost its broker. A plugin whose cursor the broker keeps (supervised: it has a handled record) leaves
    /// the event being handled unhandled, to be handled again, and drops the events kept from a session that is
    /// over: they come again, redelivered in the next session — handled first they would be out of order, and
    /// acknowledging one in the new session would cover the redelivered copies of older ones. Any other plugin gets
    /// nothing again: its handler's own answer to the error is all there is, as before.
    private func interrupted(_ call: String, by interruption: CallInterruption) -> PluginError {
        guard handled != nil else { return .callInterrupted(call: call, by: interruption) }
        if interruption != .stopRequested { pending.removeAll() }
        if let event = currentEvent {
            self.interruption = interruption
            logger.notice("\(call) got no reply: \(interruption); seq \(event.seq) (\(event.topic)) is left to be handled again")
        }
        return .callInterrupted(call: call, by: interruption)
    }

    // MARK: Work from other threads

    /// The thread that runs the plugin (`run`) and alone uses the connection.
    /// (By its POSIX id: Foundation's `Thread.current` would make the thread's `Thread` object, and `Thread.main`'s, at
    /// every launch.)
    private var pluginThread: pthread_t?
    /// Whether the caller is on the plugin's thread (true before `run`, when nothing runs yet).
    var isOnPluginThread: Bool { pluginThread.map { pthread_equal($0, pthread_self()) != 0 } ?? true }

    private let jobsLock = NSLock()
    private var jobs: [() -> Void] = []

    /// Runs `body` on the plugin's own thread — the one that talks to the broker — and returns its result: what an
    /// `async` API (`AuthorizationCenter.requestAuthorization`) or a `Task` needs, since the connection is the
    /// thread's alone. The thread runs such work between events and while it waits for a completion handler.
    public static func onPluginThread<Value: Sendable>(_ body: @escaping () throws -> Value) async throws -> Value {
        let runtime = try running()
        if runtime.isOnPluginThread { return try body() }
        return try await withCheckedThrowingContinuation { continuation in
            runtime.enqueue { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs `body` on the plugin's thread and waits for it (a synchronous call from another thread), at most the
    /// call timeout: the thread runs such work between events.
    private func waitOnPluginThread<Value>(_ body: @escaping () throws -> Value) throws -> Value {
        let handoff = Handoff<Value>()
        enqueue { handoff.run(body) }
        var waited = handoff.done.wait(timeout: .now() + .milliseconds(callTimeoutMilliseconds + Self.stopCheckMilliseconds))
        // In virtual time a job already running — its call waiting on a broker that did not run — is waited for to its
        // end, up to the busy limit: its call keeps its own deadline (`CallDeadline`).
        if waited != .success, clockMode == "virtual", handoff.hasBegunElseCancel() {
            waited = handoff.done.wait(timeout: .now() + .milliseconds(Int(BusyLimit.milliseconds(for: Int64(callTimeoutMilliseconds)))))
        }
        // Given up: the job must not make the call later, after its caller was told it timed out.
        guard waited == .success, let result = handoff.cancelOrTake() else {
            throw PluginError.timeout(topic: "a call from another thread (the plugin's thread was busy)", milliseconds: callTimeoutMilliseconds)
        }
        return try result.get()
    }

    private func enqueue(_ job: @escaping () -> Void) {
        jobsLock.lock()
        jobs.append(job)
        jobsLock.unlock()
    }

    /// Runs the work other threads handed to this one (`onPluginThread`); `last`: the process ends after this, so the
    /// main run loop turns whatever was signalled — nothing scheduled on it is left behind.
    func runJobs(last: Bool = false) {
        runMainQueue(force: last)
        jobsLock.lock()
        let due = jobs
        jobs = []
        jobsLock.unlock()
        for job in due { job() }
    }

    /// Runs what waits on the main queue (`DispatchQueue.main.async`, `@MainActor` work): this thread is the main
    /// thread, and on iOS an extension's main queue runs. One pass, without waiting, when one is due (`MainRunLoopTurns`:
    /// whenever work waits on the main queue) and could run anything (never while the main run loop is not made and
    /// nothing is queued).
    func runMainQueue(force: Bool = false) {
        guard Thread.isMainThread, mainRunLoopTurns.isDue(force: force), MainRunLoopTurns.mayRunAnything else { return }
        _ = RunLoop.main.run(mode: .default, before: .distantPast)
    }

    /// When the main run loop turns (on the main thread only).
    private var mainRunLoopTurns = MainRunLoopTurns()

    // MARK: The loop

    /// Connects, says hello, then dispatches events to `handle` until SIGTERM/SIGINT or the broker says goodbye.
    func run(_ handle: @escaping (Envelope) -> Void, onReady: @escaping () -> Void) throws {
        pluginThread = pthread_self()
        if LaunchEnvironment.isFromTemplate { logger.debug("launched from the plugin's template process") }
        if !isHostedInProcess { installSignalHandlers() }
        if isStopRequested {
            logger.notice(Self.stopRequested == Self.stopForBrokerGone ? "the broker that started this process is gone; stopping" : "asked to stop before connecting; stopping")
            return
        }
        do {
            try connection.connect(timeoutMilliseconds: 10_000, stopWhen: { isStopRequested })
        } catch BusClientError.stoppedBeforeWelcome {
            logger.notice("asked to stop while waiting for the broker's welcome; stopping")
            connection.close()
            return
        }
        // Bus time first: the clock is bound as each changes, and never to 1970 plus the offset.
        now = DeviceAPI.date(busTime: connection.welcome?.time ?? 0)
        settings = connection.welcome?.settings ?? [:]
        connection.onReconnect = { [weak self] welcome in
            self?.logger.notice("reconnected to a restarted broker")
            self?.now = DeviceAPI.date(busTime: welcome.time)
            self?.sessions += 1
        }
        connection.onGap = { [weak self] missed in
            self?.logger.error("missed deliveries \(missed.lowerBound)–\(missed.upperBound): the broker or libzmq dropped them")
        }
        handler = handle
        // Work starts when the whole bus is ready, so that start-up does not depend on process timing.
        startWork = onReady
        if settings["ready"]?.boolValue ?? true { beginWork() }
        while !isStopRequested {
            guard let envelope = try nextEvent() else { continue }
            // A callback handled by an earlier process (and redelivered) is skipped and does not end this one;
            // one held for bus.ready is handled (and ends the process) with the held events.
            let endsProcess = isEphemeral && startWork == nil && isCallback(envelope) && !wasHandled(envelope)
            dispatch(envelope, acknowledge: !endsProcess)
            if endsProcess || endsAfterHeldCallback {
                // A short-lived extension: its process ends with the callback, whatever arrived while it ran (it
                // says goodbye instead of acknowledging, so what it has not handled — events kept in `pending`
                // included — waits in its mailbox for its next process, as on iOS: one process per callback).
                logger.debug("the callback is handled; this extension process ends")
                // What the callback left queued (a main-queue block, a run-loop block, a Task's publication) goes out
                // before the end.
                runJobs(last: true)
                connection.close()
                // After the goodbye, so the broker drops the session at once; the next launch still waits for this
                // process to end.
                handled?.handOver()
                return
            }
        }
        logger.info("stopping")
        connection.close()
    }

    /// The next event to handle: one that arrived during a call first, else one from the broker (nil when
    /// nothing came within the poll, or the message was not an event).
    private func nextEvent() throws -> Envelope? {
        runJobs()
        if !pending.isEmpty { return pending.removeFirst() }
        guard let message = try connection.receive(timeoutMilliseconds: Self.stopCheckMilliseconds) else { return nil }
        switch message {
        case .event(let envelope, _):
            return envelope
        case .error(let report):
            logger.error("the broker refused a message: \(report.message)")
        case .bye(let reason):
            logger.info("the broker is stopping (\(reason)); waiting for it to come back")
        default:
            break
        }
        return nil
    }

    private var startWork: (() -> Void)?

    /// Started by the broker for one callback at a time (short-lived extensions, the ios-realistic profile).
    private let isEphemeral = LaunchEnvironment["SHIELDBUS_EPHEMERAL"] == "1"

    /// The events an extension process is started for: the extension point's callbacks.
    private func isCallback(_ envelope: Envelope) -> Bool {
        switch role {
        case .monitor: return envelope.topic.hasPrefix("deviceactivity.interval-") || envelope.topic.hasPrefix("deviceactivity.event-")
        case .shield: return envelope.topic == DeviceTopic.configurationRequest
        case .action: return envelope.topic == DeviceTopic.actionRequest
        default: return false
        }
    }

    private func beginWork() {
        let work = startWork
        startWork = nil
        // What went wrong before there was a bus to say it on (an app group a power cut set back), said first.
        for (call, message) in failuresAtLaunch { SilentCall.reportFailure(call, message) }
        failuresAtLaunch = []
        work?()
    }

    /// Calls that failed while the plugin was launched, before it was connected: said when its work begins.
    var failuresAtLaunch: [(call: String, message: String)] = []

    /// The App-Group stores checked at launch (`PluginAppGroup.verify`), until the plugin's own open takes them.
    let appGroupsCheckedAtLaunch = LockedValue<[String: SharedDefaults]>([:])

    /// Events that arrived before the bus was ready; handled once work begins, in order.
    private var beforeReady: [Envelope] = []
    /// A short-lived extension handled a callback among the events held for bus.ready: its process ends.
    private var endsAfterHeldCallback = false

    private func dispatch(_ envelope: Envelope, acknowledge: Bool = true) {
        // Only the system produces these events; the broker refuses them from anyone else, and a plugin does not
        // act on one that claims otherwise.
        if BusTable.screenTime.isSystemOnly(envelope.topic) && !envelope.isFromSystem && !BusTable.screenTime.isToolsOnly(envelope.topic) {
            logger.error("ignored \(envelope.topic) from \(TerminalText.escaped(envelope.sender)): only the system sends it")
            if acknowledge { try? connection.acknowledge(seq: envelope.seq) }
            return
        }
        if startWork != nil && !startsWork(envelope) {
            beforeReady.append(envelope)
            return
        }
        currentEvent = envelope
        interruption = nil
        // The plugin's clock never goes back: an event handled late (one that waited in the mailbox of a short-lived
        // extension, or behind a call) is handled at the time it is handled, as `Date()` on a phone would say.
        now = max(now, DeviceAPI.date(busTime: envelope.time))
        noteClockFacts(envelope)
        if envelope.topic == "bus.ready" {
            beginWork()
            let held = beforeReady
            beforeReady = []
            for event in held where event.topic != "bus.ready" {
                // A call lost its broker (in the work's start, or an earlier held event): this and the rest come
                // again, unacknowledged, with the bus.ready.
                guard interruption == nil else { break }
                let endsProcess = isEphemeral && isCallback(event) && !wasHandled(event)
                // Each held event is handled at its own time (redeliveries come before bus.ready).
                currentEvent = event
                now = DeviceAPI.date(busTime: event.time)
                handleOnce(event)
                if endsProcess && interruption != nil {
                    // Its next process gets the callback again, with what was held after it.
                    endsAfterHeldCallback = true
                    break
                }
                if endsProcess {
                    // What was held up to this callback is handled: acknowledged by its seq, which leaves bus.ready
                    // unacknowledged, so no turn passes before the goodbye. The rest goes to the next process.
                    endsAfterHeldCallback = true
                    do { try connection.acknowledge(seq: event.seq) } catch { logger.error("could not acknowledge: \(error)") }
                    currentEvent = nil
                    return
                }
            }
        } else {
            handleOnce(envelope)
        }
        currentEvent = nil
        let leftUnhandled = interruption != nil || isCutOff
        interruption = nil
        // Acknowledge after handling, so everything the handler published reached the broker first — by this
        // event's seq and no more: an ack covers every event delivered with a smaller seq, and one still on its
        // way (or kept in `pending`) must not be covered, or a process that ends before handling it (a
        // short-lived extension, a crash) loses it. Events come in sequence order; replies need no ack. An event
        // whose call lost its broker is not acknowledged: the broker gives it again.
        if acknowledge && !leftUnhandled {
            do {
                try connection.acknowledge(seq: envelope.seq)
            } catch {
                logger.error("could not acknowledge: \(error)")
            }
        }
    }

    /// Whether `envelope` is the bus.ready that starts this plugin's work: the bus's first one (naming every
    /// plugin) or its own after a restart. Another plugin's bus.ready — a returning plugin may be handed one
    /// among what it missed — is held like any event, so its work starts in its own turn.
    private func startsWork(_ envelope: Envelope) -> Bool {
        guard envelope.topic == "bus.ready" else { return false }
        guard let names = envelope.bodyValue["plugins"]?.arrayValue else { return true }
        return names.contains(.string(name))
    }

    /// Hands `envelope` to the plugin unless an earlier process handled it, and records it with what it published
    /// before it is acknowledged — unless a call of its handling lost its broker (`interruption`).
    private func handleOnce(_ envelope: Envelope) {
        guard let handled else {
            handler?(envelope)
            return
        }
        // The look-up, the handling and its record in one write transaction of the handled record.
        var ran = false
        do {
            if try handled.handleOnce(envelope.seq, ran: &ran, { handleForRecord(envelope) }) == .alreadyHandled {
                logger.debug("skipping seq \(envelope.seq) (\(envelope.topic)): already handled before a restart")
                publishAgain(whatHandling: envelope)
            }
        } catch {
            if ran {
                logger.error("could not record that seq \(envelope.seq) was handled (it may be handled again after a restart): \(error)")
                return
            }
            // The write lock was not taken (another process of the plugin holds it past the busy timeout: an orphan
            // of a killed broker still handling), a statement could not be compiled, or the record failed: looked up
            // as a plain read, which waits for no writer, then handled and recorded on its own.
            logger.error("could not look seq \(envelope.seq) up and record it in one write transaction of the handled record (\(error)); looking it up by a read")
            guard !wasHandled(envelope) else {
                logger.debug("skipping seq \(envelope.seq) (\(envelope.topic)): already handled before a restart")
                publishAgain(whatHandling: envelope)
                return
            }
            guard let published = handleForRecord(envelope) else { return }
            do {
                try handled.record(envelope.seq, publications: published)
            } catch {
                logger.error("could not record that seq \(envelope.seq) was handled (it may be handled again after a restart): \(error)")
            }
        }
    }

    /// Hands `envelope` to the plugin and returns what handling it published, to record with it — or nil when it is
    /// not to be recorded.
    private func handleForRecord(_ envelope: Envelope) -> [Publish]? {
        publications = []
        handler?(envelope)
        let published = publications ?? []
        publications = nil
        // Its call lost the broker: what it asked for may not have happened. Recorded, the event would be skipped
        // when it comes back (the lost lift); unrecorded, it is handled again from the start, publishing again with
        // the same causes — the broker drops what it already has (docs/protocol.md § 9.1).
        // A hosted plugin killed meanwhile (its connection cut) ended as a killed process would: before recording.
        guard interruption == nil, !isCutOff else { return nil }
        return published
    }

    /// An earlier process handled `envelope` and may have died before the broker read what it published (a broker
    /// killed meanwhile redelivers the event): that is sent again, with the same causes, and the broker drops the
    /// copies it already has.
    private func publishAgain(whatHandling envelope: Envelope) {
        do {
            for publication in try handled?.publications(of: envelope.seq) ?? [] { try connection.publish(publication) }
        } catch {
            logger.error("could not publish again what handling seq \(envelope.seq) published: \(error)")
        }
    }

    private func wasHandled(_ envelope: Envelope) -> Bool {
        do {
            return try handled?.contains(envelope.seq) ?? false
        } catch {
            logger.error("could not read which events were handled: \(error)")
            return false
        }
    }

    private func installSignalHandlers() {
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber) { _ in PluginRuntime.stopRequested = 1 }
        }
        // A supervised plugin dies with its broker: no orphans if the broker is killed.
        // Sandboxed, the plugin is the first process of a pid namespace that dies with the broker: there is no
        // parent to watch (getppid() is 0 there).
        if LaunchEnvironment["SHIELDBUS_SUPERVISED"] == "1" && LaunchEnvironment["SHIELDBUS_SANDBOX"] == nil {
            _ = shieldbus_die_with_parent(SIGTERM)
            // The broker died before the request: the parent is already another process (init, or a subreaper that is
            // not pid 1 in a container or a test harness), and no signal will come.
            let parent = getppid(), broker = LaunchEnvironment["SHIELDBUS_BROKER_PID"].flatMap { pid_t($0) }
            if parent == 1 || broker.map({ $0 != parent }) == true { PluginRuntime.stopRequested = Self.stopForBrokerGone }
        }
    }
}
