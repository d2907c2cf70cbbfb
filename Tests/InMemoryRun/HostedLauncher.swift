// HostedLauncher: the broker's configured plugins started as their programs on threads of the test's process.

import Broker
import Foundation
import ShieldBusSDK

/// Starts each configured plugin as a launch of its program (`PluginProgram`) on a thread of this process
/// (`InProcessPlugin`) instead of executing it: the broker's `InProcessLauncher` for a day played in memory. A
/// plugin's program is found by its executable's name (the configured `executable:`'s last path component), and gets
/// the arguments and the launch environment its process would have.
public final class HostedLauncher: InProcessLauncher {
    private let programs: [String: PluginProgram]
    /// The name of every launch, in order (an ios-realistic extension is launched once per callback).
    public private(set) var started: [String] = []
    /// Each plugin's `TZ` at its last launch.
    public private(set) var zones: [String: String] = [:]

    public init(programs: [String: PluginProgram]) {
        self.programs = programs
    }

    public func start(_ spec: PluginSpec, environment: [String: String], whenEnded: @escaping @Sendable () -> Void) throws -> InProcessRun {
        let executable = URL(fileURLWithPath: spec.executable).lastPathComponent
        guard let program = programs[executable] else {
            throw HostingError(description: "plugin '\(spec.name)' runs \(executable), which has no hostable program here (hostable: \(programs.keys.sorted().joined(separator: ", ")))")
        }
        started.append(spec.name)
        zones[spec.name] = environment["TZ"]
        // What a plugin process logs goes to its log file; a hosted one's would go to the test's output.
        var environment = environment
        if environment["SHIELDBUS_LOG_LEVEL"] == nil { environment["SHIELDBUS_LOG_LEVEL"] = "warning" }
        return HostedRun(InProcessPlugin.start(name: spec.name, environment: environment, arguments: spec.arguments, program, whenEnded: whenEnded))
    }
}

/// A plugin that cannot be hosted.
public struct HostingError: Error, CustomStringConvertible {
    public let description: String
}

/// A hosted launch as the supervisor sees a run: its end as a wait status.
final class HostedRun: InProcessRun {
    private let plugin: InProcessPlugin

    init(_ plugin: InProcessPlugin) { self.plugin = plugin }

    /// A killed launch ended by SIGKILL, whatever its loop did after; any other as its exit status would say.
    var waitStatus: Int32? {
        guard plugin.hasEnded else { return nil }
        return plugin.wasKilled ? SIGKILL : plugin.exitStatus.map { $0 << 8 }
    }

    func requestStop() { plugin.requestStop() }

    func kill() { plugin.kill() }

    func awaitEnd() -> Int32 {
        guard plugin.stop() else { return SIGKILL }  // a thread that never ends is reported as a process killed
        return waitStatus ?? SIGKILL
    }
}
