// PluginSupervisor: the plugins' runs — starts, reaping, restarts and their backoff, crash loops, kills, hello timeouts.
// Past 500 lines because every one of these reads and changes the same per-plugin run state, kept in one place.

import BusClient
import BusProtocol
import Foundation
import Logging

/// A count of changes, shared by the objects that make them.
final class ChangeCount {
    var count: UInt64 = 0
}

/// Starts the configured plugins as child processes and keeps them alive: restarts after a crash with
/// exponential backoff, kills and restarts a plugin that stops heartbeating, and marks a plugin that crashes
/// in a loop as failed, with its last exit, while everything else goes on. A plugin refused at start (its
/// hello, or its own configuration check, exit status 78) is marked failed at once: restarting cannot help. One
/// whose storage cannot be used now (a full disk, exit status 75) is started again until it can.
final class PluginSupervisor {
    enum State: Equatable {
        case running
        /// Waiting to restart at this monotonic time.
        case backingOff(until: Int64)
        /// Given up: crashed too often.
        case failed(String)
        /// Its storage could not be used (a full disk): tried again at this monotonic time, and meanwhile out of
        /// action — the bus goes on without it, as without a plugin given up on, rather than waiting for the disk.
        case waitingForStorage(until: Int64, why: String)
        case stopped
    }

    final class Plugin {
        let spec: PluginSpec
        /// The process the broker started and waits for (bwrap, when sandboxed), or the process launched from the
        /// plugin's template, whose end the template tells.
        var pid: pid_t?
        /// The current run's start.
        var launch: ChildProcess.Launch?
        /// The plugin's own program, which signals go to (the same process when not sandboxed, or launched from a template).
        var programPID: pid_t? { launch?.programPID }
        var state: State = .stopped {
            didSet { stateChanges.count &+= 1 }
        }
        /// Shared by the supervisor's plugins: what `stateChanges` counts.
        private let stateChanges: ChangeCount
        var restarts = 0
        var startedAt: Int64 = 0
        var lastExit: String?
        var lastError: String?
        /// Monotonic times of recent failures, for crash-loop detection.
        var recentFailures: [Int64] = []
        /// Starts in a row that ended because the plugin's storage could not be used (exit status 75).
        var storageWaits = 0
        /// Where the current run's output starts in the plugin's log.
        var logOffset: UInt64 = 0
        /// Why the supervisor killed the current run, told with its exit.
        var killReason: String?
        /// Why the broker refused the current run's hello: its exit is then final.
        var refusal: String?
        /// The current run's secret, handed only to its process: what proves a hello comes from it.
        var credential: String?
        /// The connection the current run said hello on: a second connection presenting its credential while
        /// that one lives is someone who copied it.
        var connection: [UInt8]?
        /// The current run when it is hosted on a thread of the broker's process (tests only): its `pid` is then a
        /// number no process can have.
        var inProcess: InProcessRun?
        /// An extension that ended after its callback while its goodbye was still on its way (its exit reaped
        /// first): the connection the goodbye comes on, and when the wait for it began. Its next run starts once the
        /// goodbye is read, so that run's hello never comes before it and the journal never depends on which of two
        /// connections the broker read first.
        var restartAfterBye: (connection: [UInt8], since: Int64)?
        init(spec: PluginSpec, stateChanges: ChangeCount) {
            self.spec = spec
            self.stateChanges = stateChanges
        }

        /// Sends `signalNumber` to the plugin's program. Sandboxed, it is the first process of its pid namespace:
        /// SIGKILL ends it and its whole sandbox; SIGTERM reaches it only if it handles SIGTERM (the SDK does). A run
        /// hosted in the broker's process is killed (its connection cut) or asked to stop.
        func signal(_ signalNumber: Int32) {
            if let inProcess { return signalNumber == SIGKILL ? inProcess.kill() : inProcess.requestStop() }
            if let target = programPID ?? pid { kill(target, signalNumber) }
        }

        /// The current run's credential while it still proves anything: not once its process has ended, even
        /// before the broker reaps it (SIGCHLD may be read after an impostor's hello), nor once it said bye.
        var liveCredential: String? {
            guard let credential, let pid else { return nil }
            if let inProcess { return inProcess.waitStatus == nil ? credential : nil }
            // A launch from a template is the template's child, not the broker's: /proc tells whether it ended.
            if launch?.templatePID != nil { return ChildProcess.hasExited(pid) ? nil : credential }
            guard !ChildProcess.hasEnded(pid) else { return nil }
            // Sandboxed, the program ends a moment before the bwrap that waits for it.
            if let programPID, programPID != pid, ChildProcess.hasExited(programPID) { return nil }
            return credential
        }

        /// Given up on, or waiting to restart: no process runs for it now.
        var isFailedOrBackingOff: Bool {
            switch state {
            case .failed, .backingOff, .waitingForStorage: return true
            case .running, .stopped: return false
            }
        }

        /// Running or about to restart: the bus is not quiet until it is connected.
        var isRunning: Bool {
            switch state {
            case .running, .backingOff: return true
            case .failed, .stopped, .waitingForStorage: return false
            }
        }

        /// Why the plugin acts on nothing now — given up on or stopped by its policy, until someone starts it again,
        /// or waiting for its storage, until the disk has room — or nil while it runs or is about to restart (what it
        /// misses meanwhile waits in its mailbox, as it does while it waits for its storage).
        var outOfAction: String? {
            switch state {
            case .failed(let why): return "failed for good: \(why)"
            case .stopped: return "stopped" + (lastExit.map { " (\($0))" } ?? "")
            case .waitingForStorage(_, let why): return "waiting for its storage: \(why)"
            case .running where storageWaits > 0: return "waiting for its storage: \(lastError ?? "")"
            case .running, .backingOff: return nil
            }
        }

        /// Waiting for its storage: between two tries, or in a try that has not said hello yet.
        var isWaitingForStorage: Bool {
            if case .waitingForStorage = state { return true }
            return state == .running && storageWaits > 0
        }

        /// A plugin whose next process will get what is kept for it meanwhile: running, about to restart, or waiting
        /// for its storage.
        var comesBack: Bool { isRunning || isWaitingForStorage }
    }

    /// Failures within this window count towards a crash loop.
    static let crashLoopWindowMilliseconds: Int64 = 30_000
    /// This many failures within the window mark the plugin failed.
    static let crashLoopFailures = 5
    static let initialBackoffMilliseconds: Int64 = 100
    static let maximumBackoffMilliseconds: Int64 = 5_000
    /// How long an extension that exited cleanly waits for its goodbye before its next run starts without it (the
    /// goodbye is sent before the exit, and is read within a pass or two of the loop).
    static let byeWaitMilliseconds: Int64 = 1_000

    private(set) var plugins: [Plugin]
    /// Changes of any plugin's state so far: an answer found over the plugins' states holds while it stays the same.
    var stateChangeCount: UInt64 { stateChanges.count }
    private let stateChanges: ChangeCount
    private let runtimeDirectory: RuntimeDirectory
    private let endpoint: String
    private let sandbox: PluginSandbox.Mode
    /// The sandboxes' /etc, gathered when the plugins start (nil: none yet, or it could not be made).
    var sandboxEtc: SandboxEtc?
    /// The sandboxes show the bus socket's folder, not the socket (`PluginSandbox.Plan.isKeptAcrossDays`).
    private let keepsSandboxes: Bool
    /// An explore worker's templates, kept across its days: the plugins launch from them.
    var kept: KeptLaunchTemplates?
    private let logger: Logger
    /// The plugins' launch templates; nil when every launch is a plain one (unsandboxed, or so asked).
    private let templates: LaunchTemplates?
    /// Where the broker's loop watches the templates' channels.
    var wake: WakeSet? {
        get { templates?.wake }
        set { templates?.wake = newValue }
    }
    /// The broker's own environment, which every plugin inherits: read once, not at each of the ~60 launches of an
    /// ios-realistic day (`ProcessInfo.environment` parses the whole environment block each time it is asked).
    private let inheritedEnvironment = ProcessEnvironment.current
    /// Told about plugin lifecycle changes (name, what happened, details) so the broker can publish them.
    var onLifecycle: ((String, String, JSONValue) -> Void)?
    /// Starts plugins on threads of this process instead of as processes (tests only).
    var inProcessLauncher: InProcessLauncher?
    /// Wakes the broker's loop when a run hosted in this process ends (its transport's wait does not see SIGCHLD).
    var wakeLoop: @Sendable () -> Void = {}
    /// The device's time zone in force, given to each launch as `TZ` (nil: the broker's environment's).
    var launchTimeZone: (() -> String?)?
    /// The milliseconds a crash loop's window is measured in: the wall clock's, or bus time's in virtual time, where
    /// how far apart two failures fall in wall time is the machine's load, not the plugin's (failures at one bus
    /// instant — a plugin that dies at each start — are a loop either way, since the bus waits for it to come back).
    var failureTime: () -> Int64 = { monotonicMilliseconds() }
    /// Runs hosted in this process get pids above Linux's limit (2^22), which no process has: a signal or a wait
    /// aimed at one reaches nobody.
    private var nextInProcessPID: pid_t = 1 << 30

    /// `launchTemplates`: SDK-based plugins launch from a template process (`LaunchTemplates`); only in a sandbox,
    /// whose pid namespace ends a template's launches with it.
    /// `keepsSandboxes`: the sandboxes are an explore worker's, kept across its days (`KeptLaunchTemplates`).
    init(specs: [PluginSpec], runtimeDirectory: RuntimeDirectory, endpoint: String, sandbox: PluginSandbox.Mode = .off,
         launchTemplates: Bool = true, logger: Logger, keepsSandboxes: Bool = false) {
        let stateChanges = ChangeCount()
        self.stateChanges = stateChanges
        plugins = specs.map { Plugin(spec: $0, stateChanges: stateChanges) }
        self.keepsSandboxes = keepsSandboxes
        self.runtimeDirectory = runtimeDirectory
        self.endpoint = endpoint
        self.sandbox = sandbox
        self.logger = logger
        templates = launchTemplates && sandbox != .off ? LaunchTemplates(logger: logger) : nil
    }

    func plugin(named name: String) -> Plugin? { plugins.first { $0.spec.name == name } }

    func log(of plugin: Plugin) -> PluginLog { PluginLog(path: runtimeDirectory.logsPath + "/\(plugin.spec.name).log") }

    /// Plugins that are running or about to restart: the bus is not quiet until they are connected. Lazy: the
    /// broker asks after every acknowledgement, and building a set of names each time was 3% of its CPU.
    var runningPlugins: LazyFilterSequence<[Plugin]> { plugins.lazy.filter(\.isRunning) }

    /// Plugins `bus.ready` waits for: all but those given up on or waiting for their storage.
    var expectedPluginNames: Set<String> {
        Set(plugins.filter {
            switch $0.state {
            case .failed, .waitingForStorage: return false
            case .running, .backingOff, .stopped: return true
            }
        }.map(\.spec.name))
    }

    func startAll() {
        try? FileManager.default.createDirectory(atPath: runtimeDirectory.logsPath, withIntermediateDirectories: true)
        if let kept, let templates {
            // Their /etc is where their sandboxes bound it: not gathered again.
            sandboxEtc = kept.sandboxEtc
            for (name, template) in kept.dayTemplates { templates.adopt(name, template) }
        } else if case .bubblewrap = sandbox {
            do {
                sandboxEtc = try SandboxEtc.make(in: runtimeDirectory.path, given: plugins.flatMap { $0.spec.files.readable + $0.spec.files.writable + $0.spec.files.own })
            } catch {
                logger.warning("cannot gather the sandboxes' /etc in the runtime folder; each file is mounted on its own", metadata: ["error": "\(error)"])
            }
        }
        // A short-lived extension launches at every callback, and a plugin the scenario launches again: their templates
        // start first, so that they load side by side, and each first launch waits for its own. Any other plugin's
        // first launch is a plain one (`LaunchTemplates`).
        if let templates {
            for plugin in plugins where plugin.spec.ephemeral || plugin.spec.launchedAgain { templates.prepare(plugin.spec.name, templateStart(plugin)) }
        }
        for plugin in plugins { start(plugin) }
    }

    /// The environment every launch of `plugin` has, but its credential.
    private func environment(of plugin: Plugin) -> [String: String] {
        var environment = inheritedEnvironment
        for (key, value) in plugin.spec.environment { environment[key] = value }
        environment["SHIELDBUS_ENDPOINT"] = endpoint
        environment["SHIELDBUS_RUNTIME_DIR"] = runtimeDirectory.path
        environment["SHIELDBUS_PLUGIN_NAME"] = plugin.spec.name
        environment["SHIELDBUS_PLUGIN_ROLE"] = plugin.spec.role.rawValue
        environment["SHIELDBUS_SUPERVISED"] = "1"
        // Lets the plugin see that its broker died before it could ask to die with it (its parent is then another).
        environment["SHIELDBUS_BROKER_PID"] = String(getpid())
        if plugin.spec.ephemeral { environment["SHIELDBUS_EPHEMERAL"] = "1" }
        // The sandbox dies with the process that started it (the broker; for a sandbox kept across explored days, the
        // worker's broker template, and a day's launches end at the next day's reset): inside its own pid namespace
        // the plugin could not watch the broker's pid anyway.
        if case .bubblewrap = sandbox { environment["SHIELDBUS_SANDBOX"] = "bubblewrap" }
        return environment
    }

    /// The sandbox `plugin` runs in; `tellingPID`: bwrap tells the program's pid (a template's launches tell their own).
    private func sandbox(of plugin: Plugin, tellingPID: Bool) -> ChildProcess.Sandbox? {
        guard case .bubblewrap(let path) = sandbox else { return nil }
        let plan = PluginSandbox.Plan(spec: plugin.spec, runtimeDirectory: runtimeDirectory.path, endpoint: endpoint,
                                      infoDescriptor: tellingPID ? ChildProcess.sandboxInfoDescriptor : nil,
                                      seccompDescriptor: ChildProcess.sandboxSeccompDescriptor, etc: sandboxEtc, isKeptAcrossDays: keepsSandboxes)
        return plan.sandbox(bubblewrap: path)
    }

    /// What `plugin`'s template starts from (only asked with a sandbox).
    func templateStart(_ plugin: Plugin) -> LaunchTemplates.Start {
        LaunchTemplates.Start(executable: plugin.spec.executable, arguments: plugin.spec.arguments, environment: environment(of: plugin),
                              logPath: log(of: plugin).path, sandbox: sandbox(of: plugin, tellingPID: false)!)
    }

    private func start(_ plugin: Plugin, announce: Bool = true) {
        plugin.restartAfterBye = nil
        var environment = environment(of: plugin)
        let credential = BusCredential.random()
        environment[BusCredential.environmentKey] = credential
        // The device's zone, which the plugin binds at its welcome: started in it, it has no system zone to reset then.
        if let zone = launchTimeZone?() { environment["TZ"] = zone }
        let log = log(of: plugin)
        plugin.logOffset = log.endOffset()
        plugin.killReason = nil
        plugin.refusal = nil
        do {
            let pid: pid_t
            if let inProcessLauncher {
                plugin.inProcess = try inProcessLauncher.start(plugin.spec, environment: environment, whenEnded: wakeLoop)
                nextInProcessPID += 1
                pid = nextInProcessPID
            } else {
                let launch = try templates?.launch(plugin.spec.name, environment: environment, { self.templateStart(plugin) })
                    ?? ChildProcess.spawn(executable: plugin.spec.executable, arguments: plugin.spec.arguments,
                                          environment: environment, logPath: log.path, sandbox: sandbox(of: plugin, tellingPID: true))
                pid = launch.pid
                plugin.launch = launch
            }
            plugin.pid = pid
            plugin.credential = credential
            plugin.connection = nil
            plugin.state = .running
            plugin.startedAt = monotonicMilliseconds()
            // Which kind of launch it was, so that a template that stopped serving shows in a run's log line by line.
            let kind = inProcessLauncher != nil ? "in-process" : plugin.launch?.templatePID != nil ? "forked" : "plain"
            logger.debug("started plugin", metadata: ["plugin": "\(plugin.spec.name)", "pid": "\(pid)", "launch": "\(kind)"])
            // No pid in the body: journals must not depend on it.
            if announce { onLifecycle?(plugin.spec.name, "started", ["restarts": .int(Int64(plugin.restarts))]) }
        } catch {
            plugin.lastError = "\(error)"
            recordFailure(plugin, reason: "\(error)")
        }
    }

    /// Whether reaping has news to take without a wake-up: a run hosted in this process (its end is only polled),
    /// or a template's ending read while the supervisor waited for something else.
    var hasNewsWithoutWake: Bool { inProcessLauncher != nil || templates?.haveNews == true }

    /// Reaps exited children, takes the ends its templates tell, and schedules restarts. Call when SIGCHLD arrives
    /// (or a template's channel wakes the loop), and at every pass of a loop that does not handle SIGCHLD.
    func reap() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            if pid <= 0 { break }
            // A template's own process (bwrap) is not a run: its channel tells that it ended.
            guard let plugin = plugins.first(where: { $0.pid == pid && $0.launch?.templatePID == nil }) else { continue }
            if case .bubblewrap = sandbox { status = PluginSandbox.programStatus(fromBubblewrap: status) }
            ended(plugin, status: status)
        }
        for plugin in plugins {
            if let status = plugin.inProcess?.waitStatus { ended(plugin, status: status) }
        }
        guard let templates else { return }
        for plugin in plugins {
            let (ended, templateGone) = templates.endings(of: plugin.spec.name)
            for ending in ended where plugin.launch?.templatePID == ending.templatePID { self.ended(plugin, status: ending.status) }
            if templateGone, plugin.pid != nil, plugin.launch?.templatePID != nil {
                // Its pid namespace ended with the template's process, and the run with it.
                plugin.killReason = plugin.killReason ?? "its launch template ended"
                self.ended(plugin, status: SIGKILL)
            }
        }
    }

    /// The current run of `plugin` ended with wait status `status`: told, and restarted by its policy.
    private func ended(_ plugin: Plugin, status: Int32) {
        let connectionOpen = plugin.connection
        plugin.pid = nil
        plugin.launch = nil
        plugin.inProcess = nil
        plugin.credential = nil  // a run that ended proves nothing any more
        plugin.connection = nil
        let how = ChildProcess.describe(waitStatus: status)
        plugin.lastExit = plugin.killReason.map { "\(how) (\($0))" } ?? how
        if plugin.state == .stopped { return }
        if case .failed = plugin.state { return }  // given up on already (a hello that never came)
        let clean = ChildProcess.isCleanExit(status)
        if clean && plugin.spec.ephemeral && plugin.refusal == nil {
            // An extension that ended after its callback: started again at once, quietly — nothing failed.
            plugin.restarts += 1
            if let connectionOpen {
                plugin.restartAfterBye = (connectionOpen, monotonicMilliseconds())
            } else {
                start(plugin, announce: false)
            }
            return
        }
        // What the run said last (its error, usually) makes the failure readable in `status`.
        let failure = clean ? how : [plugin.lastExit!, log(of: plugin).lastLine(since: plugin.logOffset)].compactMap { $0 }.joined(separator: ": ")
        onLifecycle?(plugin.spec.name, "exited", ["how": .string(how)])
        if !clean { plugin.lastError = failure }
        if let refusal = plugin.refusal {
            giveUp(plugin, why: "refused at start: \(refusal)")
        } else if ChildProcess.exitStatus(status) == SupervisedExitStatus.configurationError {
            giveUp(plugin, why: "configuration error (exit status \(SupervisedExitStatus.configurationError)), not restarted: \(failure)")
        } else if ChildProcess.exitStatus(status) == SupervisedExitStatus.storageUnavailable && plugin.spec.restart != .never {
            return waitForStorage(plugin, reason: failure)
        } else {
            switch plugin.spec.restart {
            case .never:
                plugin.state = .stopped
            case .onFailure where clean:
                plugin.state = .stopped
            default:
                recordFailure(plugin, reason: failure)
            }
        }
        plugin.storageWaits = 0  // a wait for storage ended some other way: the next one is said again
    }

    /// Marks `plugin` failed: it is not started again, and everything else goes on.
    private func giveUp(_ plugin: Plugin, why: String) {
        plugin.state = .failed(why)
        plugin.lastError = why
        logger.error("plugin failed; not restarting it", metadata: ["plugin": "\(plugin.spec.name)", "reason": "\(why)"])
        onLifecycle?(plugin.spec.name, "failed", ["reason": .string(why)])
    }

    /// Records that the broker refused a hello, when it came from a supervised plugin's current run
    /// (`frames`: the hello's kind and JSON frames, read leniently since they failed validation). A hello refused
    /// for a key written twice names its plugin only when both readings of it — first value kept, last kept —
    /// agree on its name and credential.
    func recordRefusedHello(_ frames: ArraySlice<[UInt8]>, _ error: BusProtocolError) {
        guard frames.count == 2, frames.first == Array(MessageKind.hello.rawValue.utf8) else { return }
        let json = frames[frames.startIndex + 1]
        guard let first = try? JSONValue(parsingLeniently: json, keeping: .firstKept),
              let last = try? JSONValue(parsingLeniently: json, keeping: .lastKept),
              let name = first["name"]?.stringValue, last["name"]?.stringValue == name,
              first["credential"] == last["credential"] else { return }
        recordRefusedHello(name: name, credential: first["credential"]?.stringValue, error)
    }

    /// Records that the broker refused the hello of plugin `name`, when it carries the current run's credential
    /// (anyone else's hello says nothing about the plugin): the refusal, with how to fix it, becomes the plugin's
    /// last error, and its exit is final — the same hello would be refused again.
    func recordRefusedHello(name: String, credential: String?, _ error: BusProtocolError) {
        guard let plugin = plugin(named: name), plugin.pid != nil, BusCredential.matches(credential, plugin.credential) else { return }
        let refusal = "\(error.description) — \(Self.fix(for: error))"
        plugin.refusal = refusal
        plugin.lastError = "hello refused: \(refusal)"
        logger.error("plugin refused at start", metadata: ["plugin": "\(name)", "code": "\(error.code)", "reason": "\(refusal)"])
    }

    /// How to fix a refused hello of a configured plugin.
    static func fix(for error: BusProtocolError) -> String {
        switch error {
        case .unsupportedVersion(_, let supported):
            return "fix: make the plugin send \"v\": \(supported.map(String.init).joined(separator: " or ")) (docs/protocol.md § 12.3), or use a broker that speaks its version"
        case .badHello:
            return "fix: have the plugin say hello with the name and role its configuration entry gives it (SHIELDBUS_PLUGIN_NAME, SHIELDBUS_PLUGIN_ROLE)"
        default:
            return "fix: correct the plugin's hello message (docs/protocol.md § 4)"
        }
    }

    /// The refusal for a hello whose role is not the one the plugin of that name is configured with, if it is not.
    func roleMismatch(_ hello: Hello) -> BusProtocolError? {
        guard let plugin = plugin(named: hello.name), plugin.spec.role != hello.role else { return nil }
        let configured = plugin.spec.role.rawValue, said = hello.role.rawValue
        return .badHello("plugin '\(hello.name)' is configured with role '\(configured)' but said hello as '\(said)'; "
            + "set `role: \(said)` in its configuration entry, or make the plugin play the role '\(configured)'")
    }

    private func recordFailure(_ plugin: Plugin, reason: String) {
        let failedAt = failureTime()
        plugin.recentFailures = plugin.recentFailures.filter { failedAt - $0 < Self.crashLoopWindowMilliseconds } + [failedAt]
        if plugin.recentFailures.count >= Self.crashLoopFailures {
            giveUp(plugin, why: "crash loop: \(plugin.recentFailures.count) failures within \(Self.crashLoopWindowMilliseconds / 1000) s; last: \(reason)")
            return
        }
        let now = monotonicMilliseconds()
        let exponent = min(plugin.recentFailures.count - 1, 10)
        let backoff = min(Self.initialBackoffMilliseconds << exponent, Self.maximumBackoffMilliseconds)
        plugin.state = .backingOff(until: now + backoff)
        logger.warning("plugin stopped; restarting", metadata: ["plugin": "\(plugin.spec.name)", "reason": "\(reason)", "in_ms": "\(backoff)"])
    }

    /// A plugin that could not use its storage (a full or read-only disk): started again, backing off as after a
    /// crash, for as long as it takes — not a crash loop, since only the machine can end the wait. Meanwhile it is
    /// out of action and the bus goes on without it. Logged when the wait begins; `status` shows it waiting, with why.
    private func waitForStorage(_ plugin: Plugin, reason: String) {
        let now = monotonicMilliseconds()
        if plugin.storageWaits == 0 {
            logger.warning("plugin cannot use its storage; starting it again until it can", metadata: ["plugin": "\(plugin.spec.name)", "reason": "\(reason)"])
            onLifecycle?(plugin.spec.name, "waiting-for-storage", ["reason": .string(reason)])
        }
        let backoff = min(Self.initialBackoffMilliseconds << min(plugin.storageWaits, 10), Self.maximumBackoffMilliseconds)
        plugin.storageWaits += 1
        plugin.state = .waitingForStorage(until: now + backoff, why: reason)
    }

    /// Restarts plugins whose backoff has passed.
    func tick() {
        let now = monotonicMilliseconds()
        for plugin in plugins {
            // A clean exit whose goodbye never came (the program exited without one): started again all the same.
            if let waiting = plugin.restartAfterBye, now - waiting.since >= Self.byeWaitMilliseconds { start(plugin, announce: false) }
            switch plugin.state {
            case .backingOff(let until), .waitingForStorage(let until, _):
                guard until <= now else { continue }
                plugin.restarts += 1
                start(plugin)
            case .running, .failed, .stopped:
                continue
            }
        }
    }

    /// The earliest pending restart, for the broker's poll timeout.
    var nextRestartDue: Int64? {
        plugins.compactMap { plugin in
            if let waiting = plugin.restartAfterBye { return waiting.since + Self.byeWaitMilliseconds }
            switch plugin.state {
            case .backingOff(let until), .waitingForStorage(let until, _): return until
            case .running, .failed, .stopped: return nil
            }
        }.min()
    }

    /// Kills a plugin that stopped responding; reaping then restarts it, telling `reason` with the exit.
    func killUnresponsive(name: String, reason: String) {
        guard let plugin = plugin(named: name), plugin.pid != nil else { return }
        plugin.killReason = reason
        logger.warning("killing unresponsive plugin", metadata: ["plugin": "\(name)", "reason": "\(reason)"])
        plugin.signal(SIGKILL)
    }

    /// Kills every running plugin and starts it again at once (a device restart), without counting failures.
    func restartAll(reason: String) {
        restart(plugins, reason: reason, revivingFailed: true)
    }

    /// Consecutive starts that never said hello, per plugin: three, and it is given up (a crash loop would not
    /// catch it, as each one takes the whole start-up limit).
    private var helloTimeouts: [String: Int] = [:]
    static let helloTimeoutsBeforeGivingUp = 3

    /// A started process did not say hello in time: killed, and after three in a row, given up.
    func helloTimedOut(name: String, after milliseconds: Int64) {
        guard let plugin = plugin(named: name) else { return }
        helloTimeouts[name, default: 0] += 1
        if helloTimeouts[name]! >= Self.helloTimeoutsBeforeGivingUp {
            plugin.signal(SIGKILL)
            giveUp(plugin, why: "\(helloTimeouts[name]!) starts in a row did not say hello within \(milliseconds) ms; see its log")
            return
        }
        killUnresponsive(name: name, reason: "did not say hello within \(milliseconds) ms of starting")
    }

    /// The broker did not run for `milliseconds`: a start in progress is timed from after it.
    func excuseStall(_ milliseconds: Int64) {
        for plugin in plugins where plugin.state == .running { plugin.startedAt += milliseconds }
    }

    /// Starts a plugin that ended for good (`restart: never`, a clean exit) again, as asked.
    func startStopped(named name: String) {
        guard let plugin = plugin(named: name), plugin.state == .stopped, plugin.pid == nil else { return }
        plugin.restarts += 1
        start(plugin)
    }

    /// The plugin said hello: its start succeeded.
    func saidHello(name: String, connection: [UInt8]) {
        helloTimeouts[name] = nil
        guard let plugin = plugin(named: name) else { return }
        plugin.connection = connection
        if plugin.storageWaits > 0 {
            // Said at the level its wait was, so that whoever saw the one sees the other.
            logger.warning("plugin can use its storage again", metadata: ["plugin": "\(name)", "starts": "\(plugin.storageWaits + 1)"])
            plugin.storageWaits = 0
        }
    }

    /// The current run of `name` said bye on `connection`: its credential admits nobody any more.
    func saidBye(name: String, connection: [UInt8]) {
        guard let plugin = plugin(named: name) else { return }
        if plugin.restartAfterBye?.connection == connection { return start(plugin, announce: false) }
        guard plugin.connection == connection else { return }
        plugin.credential = nil
        plugin.connection = nil
    }

    /// Kills one plugin and starts it again at once (an app force-quit by the person), without counting a failure.
    func restart(named name: String, reason: String, revivingFailed: Bool = false) {
        restart(plugins.filter { $0.spec.name == name }, reason: reason, revivingFailed: revivingFailed)
    }

    private func restart(_ candidates: [Plugin], reason: String, revivingFailed: Bool) {
        // What runs is killed and started again. With the whole device (`revivingFailed`), what was given up on, or
        // waits to restart, starts afresh too, as every process does when a phone restarts (its executable may have
        // been fixed meanwhile); a plugin stopped on purpose stays so.
        // (An extension whose next run waits for its last run's goodbye counts as running: it is started now.)
        let plugins = candidates.filter { $0.pid != nil || $0.restartAfterBye != nil }
        for plugin in candidates where revivingFailed && plugin.pid == nil && plugin.isFailedOrBackingOff {
            plugin.recentFailures = []
            plugin.storageWaits = 0
            helloTimeouts[plugin.spec.name] = nil
            plugin.restarts += 1
            logger.notice("starting a plugin again", metadata: ["plugin": "\(plugin.spec.name)", "reason": "\(reason)", "was": "\(plugin.state)"])
            start(plugin)
        }
        for plugin in plugins {
            plugin.state = .stopped  // so reaping does not count the kill as a crash
            plugin.signal(SIGKILL)
        }
        for plugin in plugins where plugin.state == .stopped && plugin.pid != nil {
            _ = awaitEnd(of: plugin)
            plugin.pid = nil
            plugin.launch = nil
            plugin.inProcess = nil
            plugin.credential = nil
            plugin.connection = nil
            plugin.lastExit = "killed by SIGKILL (\(reason))"
        }
        for plugin in plugins where plugin.state == .stopped {
            plugin.restarts += 1
            start(plugin)
        }
    }

    /// How many times the last `stopAll` looked for its plugins' ends: once, and once more after each wake.
    private(set) var closeLooks = 0

    /// Stops every plugin: SIGTERM, then SIGKILL for those still alive after `graceMilliseconds`. `unstarted`: the
    /// run could not start (why), so none is given time — each is killed at once, and the log says why. `meanwhile`
    /// runs once they are all asked, before any is waited for: work of the caller's own that need not wait for them.
    func stopAll(graceMilliseconds: Int64, unstarted: String? = nil, meanwhile: () -> Void = {}) {
        for plugin in plugins {
            plugin.state = .stopped
            plugin.restartAfterBye = nil
            plugin.signal(SIGTERM)
        }
        meanwhile()
        let deadline = monotonicMilliseconds() + graceMilliseconds
        let ends = ProcessEnds()
        closeLooks = 0
        while plugins.contains(where: { $0.pid != nil }) && monotonicMilliseconds() < deadline {
            reap()
            closeLooks += 1
            let left = plugins.filter { $0.pid != nil }
            guard !left.isEmpty else { break }
            // A child's end wakes the wait; a run hosted in this process or launched from a template (whose end its
            // channel tells) is looked for again every 5 ms.
            let children = left.filter { $0.inProcess == nil && $0.launch?.templatePID == nil }.compactMap(\.pid)
            let remaining = Int(max(0, deadline - monotonicMilliseconds()))
            let interval = children.count == left.count ? remaining : min(remaining, 5)
            if !ends.awaitAny(of: children, milliseconds: interval) { usleep(UInt32(min(remaining, 5)) * 1_000) }
        }
        ends.close()
        for plugin in plugins {
            if plugin.pid != nil {
                if let unstarted {
                    logger.warning("stopping plugin: the run could not start", metadata: ["plugin": "\(plugin.spec.name)", "reason": "\(unstarted)"])
                } else {
                    logger.warning("plugin ignored SIGTERM; killing it", metadata: ["plugin": "\(plugin.spec.name)"])
                }
                plugin.signal(SIGKILL)
                let status = awaitEnd(of: plugin)
                plugin.pid = nil
                plugin.launch = nil
                plugin.inProcess = nil
                plugin.lastExit = ChildProcess.describe(waitStatus: status)
            }
        }
        templates?.stopAll()
    }

    /// Waits for the current run of `plugin`, killed, to end: its wait status (SIGKILL's when its template went with it).
    private func awaitEnd(of plugin: Plugin) -> Int32 {
        if let inProcess = plugin.inProcess { return inProcess.awaitEnd() }
        if let templatePID = plugin.launch?.templatePID {
            return templates?.awaitEnding(of: plugin.spec.name, templatePID: templatePID) ?? SIGKILL
        }
        var status: Int32 = 0
        guard let pid = plugin.pid, waitpid(pid, &status, 0) == pid else { return SIGKILL }
        if case .bubblewrap = sandbox { status = PluginSandbox.programStatus(fromBubblewrap: status) }
        return status
    }
}
