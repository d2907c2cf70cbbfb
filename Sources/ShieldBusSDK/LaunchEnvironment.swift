import BusClient
import CLaunchTemplate

/// The environment the broker started this plugin with, read once: `ProcessInfo.environment` builds a
/// new dictionary on every read, which a short-lived extension (ios-realistic) would pay several times per launch
/// and once per event (docs/benchmarks.md, "Explore and launches"); read from `environ` directly
/// (`ProcessEnvironment`).
/// A process launched from its plugin's template (`CLaunchTemplate`) has its launch's environment by the time `main`
/// runs, so this is the same either way. A plugin hosted in a test's process (`InProcessPlugin`) has its own, bound
/// while its code runs.
enum LaunchEnvironment {
    /// The running plugin's variables: a hosted plugin's own, else the process's.
    static var variables: [String: String] { hostsPlugins.current ? hosted ?? process : process }

    /// Whether a plugin was ever hosted in this process (a test's). A launched plugin never reads `hosted`: the first
    /// use of its type checks `[String: String]`'s requirements at run time, a scan of the program's conformance records.
    static let hostsPlugins = LockedValue(false)

    /// The process's variables, read once.
    static let process = ProcessEnvironment.current

    /// The environment of the plugin hosted on this thread (or in a task it started), when it is not the process's.
    @TaskLocal static var hosted: [String: String]?

    static subscript(_ key: String) -> String? { variables[key] }

    /// Whether the broker launched this process from its plugin's template rather than by executing it.
    static let isFromTemplate = shieldbus_launched_from_template() != 0
}
