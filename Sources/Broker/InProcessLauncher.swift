// InProcessLauncher: configured plugins started on threads of the broker's process — for tests only.

/// Starts a configured plugin on a thread of the broker's process instead of as a process of its own. **For tests
/// only**: in the product every plugin is a real process, sandboxed and supervised; a test that runs the broker on
/// its in-memory transport hosts the configured plugins beside it (the SDK's `InProcessPlugin`) to play a day wholly
/// in one process, which must journal what the processes over libzmq journal. The broker never imports the SDK: the
/// test's launcher joins them.
public protocol InProcessLauncher: AnyObject {
    /// Starts `spec`'s plugin with `environment`, its launch's as a process would have it (its credential included).
    /// `whenEnded` is called from the run's thread once it has ended, to wake the broker's loop to reap it, as
    /// SIGCHLD wakes it for a process.
    func start(_ spec: PluginSpec, environment: [String: String], whenEnded: @escaping @Sendable () -> Void) throws -> InProcessRun
}

/// One run of a plugin hosted in the broker's process: what the supervisor knows of a process, for a thread.
public protocol InProcessRun: AnyObject {
    /// How the run ended, as a wait status (0: a clean end; exit status `n`: `n << 8`); nil while it runs.
    var waitStatus: Int32? { get }
    /// Asks the run to stop, as SIGTERM asks a process.
    func requestStop()
    /// Ends the run as SIGKILL ends a process: its connection cut at once (nothing it sends later arrives, no
    /// goodbye), its thread asked to stop; its wait status then says SIGKILL.
    func kill()
    /// Waits for the run, asked to stop, to end: its wait status.
    func awaitEnd() -> Int32
}

extension Broker {
    /// Runs as `run` does, but on an in-memory transport (`memory://…`) with the configured plugins started by
    /// `launcher` on threads of this process instead of as processes, and no signal handling. **For tests only**: it
    /// plays a configuration's day wholly in one process, to be compared with the same day over libzmq.
    public func runInMemory(hostingPluginsWith launcher: InProcessLauncher, lock: RuntimeLock) throws {
        defer { lock.release() }
        inProcessLauncher = launcher
        try open(lock: lock, handlingSignals: false) { InMemoryTransport(waits: true) }
        defer { close() }
        while !isStopping { try serveOnce() }
        shutDown()
    }
}
