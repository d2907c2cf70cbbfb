// Configuration: reading the files users write — the broker configuration — with errors that name file, line and key.

import BusProtocol
import Foundation

/// A ShieldBus configuration file: the bus settings and the plugins to run.
public struct ShieldBusConfiguration {
    /// The file it was read from.
    public var file: String
    /// A short name for the product this configuration runs.
    public var name: String
    public var bus = BusSection()
    /// Where the journal goes (relative paths are relative to the working directory), if anywhere.
    public var journal: String?
    public var plugins: [PluginDeclaration] = []

    /// Settings of the bus itself.
    public struct BusSection: Equatable {
        public var maxBodyBytes = defaultMaximumBodyBytes
        public var heartbeatMs: Int64 = 1000
        public var sessionTimeoutMs: Int64 = 5000
        public var highWaterMark: Int32 = 100_000
    }

    /// A plugin to start and supervise.
    public struct PluginDeclaration: Equatable {
        public var name: String
        /// A built product name (looked up next to `shieldbus`), or a path.
        public var executable: String
        public var arguments: [String] = []
        public var environment: [String: String] = [:]
        public var role: Role
        public var restart: String = "on-failure"
        public var line: Int
    }

    public static let restartPolicies = ["never", "on-failure", "always"]

    /// Reads and validates a configuration file.
    public static func load(path: String) throws -> ShieldBusConfiguration {
        try parse(YAMLValue.load(path: path))
    }

    /// Validates a parsed configuration document.
    public static func parse(_ document: YAMLValue) throws -> ShieldBusConfiguration {
        let top = try document.mapping(allowed: ["name", "bus", "journal", "plugins"])
        var configuration = ShieldBusConfiguration(file: document.file, name: try top["name"]?.string() ?? "shieldbus")
        if let bus = top["bus"] {
            let fields = try bus.mapping(allowed: ["maxBodyBytes", "heartbeatMs", "sessionTimeoutMs", "highWaterMark"])
            if let value = fields["maxBodyBytes"] { configuration.bus.maxBodyBytes = try positive(value) }
            if let value = fields["heartbeatMs"] { configuration.bus.heartbeatMs = Int64(try positive(value)) }
            if let value = fields["sessionTimeoutMs"] { configuration.bus.sessionTimeoutMs = Int64(try positive(value)) }
            if let value = fields["highWaterMark"] { configuration.bus.highWaterMark = Int32(try positive(value)) }
            if configuration.bus.sessionTimeoutMs <= configuration.bus.heartbeatMs * 2 {
                throw (fields["sessionTimeoutMs"] ?? bus).error("must be more than twice heartbeatMs (\(configuration.bus.heartbeatMs)) so one late heartbeat is not a timeout")
            }
        }
        configuration.journal = try top["journal"]?.string()
        var names = Set<String>()
        for entry in try top["plugins"]?.list() ?? [] {
            let fields = try entry.mapping(allowed: ["name", "executable", "arguments", "environment", "role", "restart"])
            guard let nameValue = fields["name"] else { throw entry.error("a plugin needs a 'name'") }
            let name = try nameValue.string()
            guard !names.contains(name) else { throw nameValue.error("the plugin name '\(name)' is used twice") }
            names.insert(name)
            guard let executable = fields["executable"] else { throw entry.error("plugin '\(name)' needs an 'executable' (a built product name or a path)") }
            guard let roleValue = fields["role"] else {
                throw entry.error("plugin '\(name)' needs a 'role' (one of \(Role.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            var plugin = PluginDeclaration(name: name, executable: try executable.string(), role: try roleValue.oneOf(Role.self), line: entry.line)
            plugin.arguments = try fields["arguments"]?.stringList() ?? []
            plugin.environment = try fields["environment"]?.stringMap() ?? [:]
            if let restart = fields["restart"] {
                let word = try restart.string()
                guard restartPolicies.contains(word) else {
                    throw restart.error("expected one of \(restartPolicies.joined(separator: ", ")), got '\(word)'")
                }
                plugin.restart = word
            }
            configuration.plugins.append(plugin)
        }
        return configuration
    }

    private static func positive(_ value: YAMLValue) throws -> Int {
        let number = try value.int()
        guard number > 0 else { throw value.error("must be a positive number, got \(number)") }
        return number
    }
}
