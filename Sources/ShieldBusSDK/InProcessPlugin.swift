// InProcessPlugin: a plugin hosted on a thread of a test's process — for tests only; the product's plugins are processes.

import BusClient
import Foundation

/// A plugin run on a thread of this process with its own launch environment, runtime and device clock, instead of
/// in a process of its own. **A test facility only**: in the product every plugin is a real process, sandboxed and
/// supervised by the broker; a test hosts plugins in its own process to check logic over the broker's in-memory
/// transport (`memory://…` endpoints), which must journal what the real processes over libzmq journal.
///
/// While the plugin's code runs on its thread (and in tasks started from it) it sees its own `PluginRuntime.current`
/// and its own launch environment (its name, options file, app group and state folder: its own App-Group stores). Its
/// own device clock behind `Date()` is its thread's only: a task runs on a pool thread, which reads the process's
/// clock. What stays the process's: `TZ` (one device's plugins share its zone), `HOME` (Foundation's caches; the
/// SDK's `UserDefaults.standard` is each plugin's own, in its container), `ProcessInfo`'s environment (plugin code
/// reads its launch's through `PluginEnvironment`), signals, and work a plugin sends to the main queue or to a
/// detached task (which sees no plugin's runtime).
public final class InProcessPlugin: @unchecked Sendable {
    public let name: String
    private let ended = DispatchSemaphore(value: 0)
    private let state = LockedValue<(runtime: PluginRuntime?, error: Error?, hasEnded: Bool, stopRequested: Bool, killed: Bool)>((nil, nil, false, false, false))

    private init(name: String) { self.name = name }

    /// Starts the component made by `make` on a thread of its own, as `PluginHost.run` would in a process launched
    /// with `environment` (`SHIELDBUS_ENDPOINT` names the broker; its other variables are the plugin's launch's).
    public static func start(name: String, environment: [String: String], _ make: @escaping @Sendable () -> BusComponent) -> InProcessPlugin {
        start(name: name, environment: environment, PluginProgram { _ in make() })
    }

    /// Starts a launch of `program` with `arguments` on a thread of its own, as its `main` would run it in a process
    /// launched with `environment`. A component the program cannot make ends the launch with that error.
    /// `whenEnded` is called from its thread once its loop has ended (`hasEnded`), as SIGCHLD tells a process's parent.
    public static func start(name: String, environment: [String: String], arguments: [String] = [], _ program: PluginProgram,
                             whenEnded: (@Sendable () -> Void)? = nil) -> InProcessPlugin {
        let plugin = InProcessPlugin(name: name)
        let thread = Thread {
            plugin.run(environment: environment) { try program.component(arguments: arguments) }
            whenEnded?()
        }
        thread.name = "plugin \(name)"
        thread.stackSize = 8 << 20  // a process's main thread's, which plugin code is written for
        thread.start()
        return plugin
    }

    private func run(environment: [String: String], _ make: () throws -> BusComponent) {
        defer {
            state.withValue { $0.hasEnded = true }
            ended.signal()
        }
        LaunchEnvironment.hostsPlugins.withValue { $0 = true }
        LaunchEnvironment.$hosted.withValue(environment) {
            do {
                let component = try make()
                let runtime = try PluginHost.makeRuntime(named: name, for: component, hostedInProcess: true)
                // Asked to stop (or killed) while it was starting: its loop ends at once.
                let asked = state.withValue { $0.runtime = runtime; return ($0.stopRequested, $0.killed) }
                if asked.1 { runtime.cutConnection() }
                if asked.0 { runtime.requestStop() }
                try PluginRuntime.$bound.withValue(runtime) {
                    try runtime.run({ envelope in component.handle(envelope) }, onReady: { component.didStart() })
                }
            } catch {
                state.withValue { $0.error = error }
            }
        }
    }

    /// Why the plugin stopped on its own (it could not connect, its hello was refused), if it did.
    public var error: Error? { state.current.error }

    /// Whether its loop has ended.
    public var hasEnded: Bool { state.current.hasEnded }

    /// How its loop ended, as a process's exit status would say it (`PluginExitStatus`); nil while it runs.
    public var exitStatus: Int32? {
        let now = state.current
        guard now.hasEnded else { return nil }
        return now.error.map(PluginExitStatus.status(for:)) ?? 0
    }

    /// Asks the plugin to stop, as SIGTERM asks a process: its loop ends within a poll, saying goodbye.
    public func requestStop() {
        state.withValue { $0.stopRequested = true; return $0.runtime }?.requestStop()
    }

    /// Ends the plugin as SIGKILL ends a process, as far as a thread can be: its connection to an in-memory broker
    /// is cut at once — nothing it sends from now on arrives, its goodbye included, and nothing more reaches it —
    /// and its loop is asked to stop. Code it is running goes on until it next waits on the bus or for a completion
    /// handler (a thread cannot be stopped mid-instruction): that wait, its connect's included, ends at once, and
    /// nothing it does reaches the broker. Over libzmq, whose socket is its
    /// thread's alone, the connection cannot be cut from here: the plugin is asked to stop, and says goodbye.
    public func kill() {
        let runtime = state.withValue { $0.killed = true; $0.stopRequested = true; return $0.runtime }
        runtime?.cutConnection()
        runtime?.requestStop()
    }

    /// Whether it was killed (`kill`).
    public var wasKilled: Bool { state.current.killed }

    /// Asks the plugin to stop and waits at most `timeoutSeconds` for its loop to end. Whether it ended.
    @discardableResult
    public func stop(timeoutSeconds: Double = 10) -> Bool {
        requestStop()
        return awaitEnd(timeoutSeconds: timeoutSeconds)
    }

    /// Waits at most `timeoutSeconds` for its loop to end, without asking it to (after `kill`, say). Whether it ended.
    public func awaitEnd(timeoutSeconds: Double) -> Bool {
        guard ended.wait(timeout: .now() + timeoutSeconds) == .success else { return false }
        ended.signal()  // a second wait finds it ended too
        return true
    }
}
