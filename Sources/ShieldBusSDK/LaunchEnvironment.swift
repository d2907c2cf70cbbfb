import BusClient
import CLaunchTemplate

/// The environment the broker started this plugin process with, read once: `ProcessInfo.environment` builds a
/// new dictionary on every read, which a short-lived extension (ios-realistic) would pay several times per launch
/// and once per event (docs/benchmarks.md, "Extension launches"); read from `environ` directly (`ProcessEnvironment`).
/// A process launched from its plugin's template (`CLaunchTemplate`) has its launch's environment by the time `main`
/// runs, so this is the same either way.
enum LaunchEnvironment {
    static let variables = ProcessEnvironment.current

    static subscript(_ key: String) -> String? { variables[key] }

    /// Whether the broker launched this process from its plugin's template rather than by executing it.
    static let isFromTemplate = shieldbus_launched_from_template() != 0
}
