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
/// clock. What stays the process's: `TZ` (one device's plugins share its zone), `HOME`
/// (`UserDefaults.standard` and caches are shared), signals, and work a plugin sends to the main queue or to a
/// detached task (which sees no plugin's runtime).
public final class InProcessPlugin: @unchecked Sendable {
    public let name: String
    private let ended = DispatchSemaphore(value: 0)
    private let state = LockedValue<(runtime: PluginRuntime?, error: Error?, hasEnded: Bool, stopRequested: Bool)>((nil, nil, false, false))

    private init(name: String) { self.name = name }

    /// Starts the component made by `make` on a thread of its own, as `PluginHost.run` would in a process launched
    /// with `environment` (`SHIELDBUS_ENDPOINT` names the broker; its other variables are the plugin's launch's).
    public static func start(name: String, environment: [String: String], _ make: @escaping @Sendable () -> BusComponent) -> InProcessPlugin {
        let plugin = InProcessPlugin(name: name)
        let thread = Thread { plugin.run(environment: environment, make) }
        thread.name = "plugin \(name)"
        thread.stackSize = 8 << 20  // a process's main thread's, which plugin code is written for
        thread.start()
        return plugin
    }

    private func run(environment: [String: String], _ make: () -> BusComponent) {
        defer {
            state.withValue { $0.hasEnded = true }
            ended.signal()
        }
        LaunchEnvironment.hostsPlugins.withValue { $0 = true }
        LaunchEnvironment.$hosted.withValue(environment) {
            do {
                let component = make()
                let runtime = try PluginHost.makeRuntime(named: name, for: component, hostedInProcess: true)
                // Asked to stop while it was starting: its loop ends at once.
                if state.withValue({ $0.runtime = runtime; return $0.stopRequested }) { runtime.requestStop() }
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

    /// Asks the plugin to stop and waits at most `timeoutSeconds` for its loop to end. Whether it ended.
    @discardableResult
    public func stop(timeoutSeconds: Double = 10) -> Bool {
        requestStop()
        guard ended.wait(timeout: .now() + timeoutSeconds) == .success else { return false }
        ended.signal()  // a second stop finds it ended too
        return true
    }
}
