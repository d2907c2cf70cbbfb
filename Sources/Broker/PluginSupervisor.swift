import BusClient
import BusProtocol
import Foundation
import Logging

/// Starts the configured plugins as child processes and keeps them alive: restarts after a crash with
/// exponential backoff, kills and restarts a plugin that stops heartbeating, and marks a plugin that crashes
/// in a loop as failed, with its last exit, while everything else goes on.
final class PluginSupervisor {
    enum State: Equatable {
        case running
        /// Waiting to restart at this monotonic time.
        case backingOff(until: Int64)
        /// Given up: crashed too often.
        case failed(String)
        case stopped
    }

    final class Plugin {
        let spec: PluginSpec
        var pid: pid_t?
        var state: State = .stopped
        var restarts = 0
        var startedAt: Int64 = 0
        var lastExit: String?
        var lastError: String?
        /// Monotonic times of recent failures, for crash-loop detection.
        var recentFailures: [Int64] = []
        init(spec: PluginSpec) { self.spec = spec }
    }

    /// Failures within this window count towards a crash loop.
    static let crashLoopWindowMilliseconds: Int64 = 30_000
    /// This many failures within the window mark the plugin failed.
    static let crashLoopFailures = 5
    static let initialBackoffMilliseconds: Int64 = 100
    static let maximumBackoffMilliseconds: Int64 = 5_000

    private(set) var plugins: [Plugin]
    private let runtimeDirectory: RuntimeDirectory
    private let endpoint: String
    private let logger: Logger
    /// Told about plugin lifecycle changes (name, what happened, details) so the broker can publish them.
    var onLifecycle: ((String, String, JSONValue) -> Void)?

    init(specs: [PluginSpec], runtimeDirectory: RuntimeDirectory, endpoint: String, logger: Logger) {
        plugins = specs.map(Plugin.init)
        self.runtimeDirectory = runtimeDirectory
        self.endpoint = endpoint
        self.logger = logger
    }

    func plugin(named name: String) -> Plugin? { plugins.first { $0.spec.name == name } }

    /// Plugins that are running or about to restart: the bus is not quiet until they are connected.
    var runningPluginNames: Set<String> {
        Set(plugins.filter { plugin in
            switch plugin.state {
            case .running, .backingOff: return true
            case .failed, .stopped: return false
            }
        }.map(\.spec.name))
    }

    /// Plugins `bus.ready` waits for: all but those given up on.
    var expectedPluginNames: Set<String> {
        Set(plugins.filter { if case .failed = $0.state { return false } else { return true } }.map(\.spec.name))
    }

    func startAll() {
        try? FileManager.default.createDirectory(atPath: runtimeDirectory.logsPath, withIntermediateDirectories: true)
        for plugin in plugins { start(plugin) }
    }

    private func start(_ plugin: Plugin) {
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in plugin.spec.environment { environment[key] = value }
        environment["SHIELDBUS_ENDPOINT"] = endpoint
        environment["SHIELDBUS_RUNTIME_DIR"] = runtimeDirectory.path
        environment["SHIELDBUS_PLUGIN_NAME"] = plugin.spec.name
        environment["SHIELDBUS_PLUGIN_ROLE"] = plugin.spec.role.rawValue
        environment["SHIELDBUS_SUPERVISED"] = "1"
        do {
            let pid = try ChildProcess.spawn(executable: plugin.spec.executable, arguments: plugin.spec.arguments,
                                             environment: environment,
                                             logPath: runtimeDirectory.logsPath + "/\(plugin.spec.name).log")
            plugin.pid = pid
            plugin.state = .running
            plugin.startedAt = monotonicMilliseconds()
            logger.debug("started plugin", metadata: ["plugin": "\(plugin.spec.name)", "pid": "\(pid)"])
            onLifecycle?(plugin.spec.name, "started", ["restarts": .int(Int64(plugin.restarts))])  // no pid: journals must not depend on it
        } catch {
            plugin.lastError = "\(error)"
            recordFailure(plugin, reason: "\(error)")
        }
    }

    /// Reaps exited children and schedules restarts. Call when SIGCHLD arrives and periodically.
    func reap() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            if pid <= 0 { return }
            guard let plugin = plugins.first(where: { $0.pid == pid }) else { continue }
            plugin.pid = nil
            let how = ChildProcess.describe(waitStatus: status)
            plugin.lastExit = how
            if plugin.state == .stopped { continue }
            let clean = ChildProcess.isCleanExit(status)
            onLifecycle?(plugin.spec.name, "exited", ["how": .string(how)])
            switch plugin.spec.restart {
            case .never:
                plugin.state = .stopped
            case .onFailure where clean:
                plugin.state = .stopped
            default:
                if !clean { plugin.lastError = how }
                recordFailure(plugin, reason: how)
            }
        }
    }

    private func recordFailure(_ plugin: Plugin, reason: String) {
        let now = monotonicMilliseconds()
        plugin.recentFailures = plugin.recentFailures.filter { now - $0 < Self.crashLoopWindowMilliseconds } + [now]
        if plugin.recentFailures.count >= Self.crashLoopFailures {
            let why = "crash loop: \(plugin.recentFailures.count) failures within \(Self.crashLoopWindowMilliseconds / 1000) s; last: \(reason)"
            plugin.state = .failed(why)
            logger.error("plugin failed; not restarting it", metadata: ["plugin": "\(plugin.spec.name)", "reason": "\(why)"])
            onLifecycle?(plugin.spec.name, "failed", ["reason": .string(why)])
            return
        }
        let exponent = min(plugin.recentFailures.count - 1, 10)
        let backoff = min(Self.initialBackoffMilliseconds << exponent, Self.maximumBackoffMilliseconds)
        plugin.state = .backingOff(until: now + backoff)
        logger.warning("plugin stopped; restarting", metadata: ["plugin": "\(plugin.spec.name)", "reason": "\(reason)", "in_ms": "\(backoff)"])
    }

    /// Restarts plugins whose backoff has passed.
    func tick() {
        let now = monotonicMilliseconds()
        for plugin in plugins {
            if case .backingOff(let until) = plugin.state, until <= now {
                plugin.restarts += 1
                start(plugin)
            }
        }
    }

    /// The earliest pending restart, for the broker's poll timeout.
    var nextRestartDue: Int64? {
        plugins.compactMap { if case .backingOff(let until) = $0.state { return until } else { return nil } }.min()
    }

    /// Kills a plugin that stopped responding; reaping then restarts it.
    func killUnresponsive(name: String, reason: String) {
        guard let plugin = plugin(named: name), let pid = plugin.pid else { return }
        plugin.lastError = reason
        logger.warning("killing unresponsive plugin", metadata: ["plugin": "\(name)", "reason": "\(reason)"])
        kill(pid, SIGKILL)
    }

    /// Kills every running plugin and starts it again at once (a device restart), without counting failures.
    func restartAll(reason: String) {
        for plugin in plugins where plugin.pid != nil {
            plugin.state = .stopped  // so reaping does not count the kill as a crash
            kill(plugin.pid!, SIGKILL)
        }
        for plugin in plugins where plugin.state == .stopped && plugin.pid != nil {
            var status: Int32 = 0
            waitpid(plugin.pid!, &status, 0)
            plugin.pid = nil
            plugin.lastExit = "killed by SIGKILL (\(reason))"
        }
        for plugin in plugins where plugin.state == .stopped {
            plugin.restarts += 1
            start(plugin)
        }
    }

    /// Stops every plugin: SIGTERM, then SIGKILL for those still alive after `graceMilliseconds`.
    func stopAll(graceMilliseconds: Int64) {
        for plugin in plugins {
            plugin.state = .stopped
            if let pid = plugin.pid { kill(pid, SIGTERM) }
        }
        let deadline = monotonicMilliseconds() + graceMilliseconds
        while plugins.contains(where: { $0.pid != nil }) && monotonicMilliseconds() < deadline {
            reap()
            if plugins.contains(where: { $0.pid != nil }) { usleep(5_000) }
        }
        for plugin in plugins {
            if let pid = plugin.pid {
                logger.warning("plugin ignored SIGTERM; killing it", metadata: ["plugin": "\(plugin.spec.name)"])
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                plugin.pid = nil
                plugin.lastExit = ChildProcess.describe(waitStatus: status)
            }
        }
    }
}
