import BusClient

/// The environment the broker started this plugin process with, read once: `ProcessInfo.environment` builds a
/// new dictionary on every read, which a short-lived extension (ios-realistic) would pay several times per launch
/// and once per event (docs/benchmarks.md, "Extension launches"); read from `environ` directly (`ProcessEnvironment`).
enum LaunchEnvironment {
    static let variables = ProcessEnvironment.current

    static subscript(_ key: String) -> String? { variables[key] }
}
