import Foundation

/// The environment the broker started this plugin process with, read once: `ProcessInfo.environment` builds a
/// new dictionary on every read, which a short-lived extension (ios-realistic) paid a dozen times per launch and
/// once per event (docs/benchmarks.md, "Extension launches").
enum LaunchEnvironment {
    static let variables = ProcessInfo.processInfo.environment

    static subscript(_ key: String) -> String? { variables[key] }
}
