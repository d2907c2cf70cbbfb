import ArgumentParser
import Broker
import BusClient
import BusProtocol
import Configuration
import Foundation
import Logging

extension ShieldBus {
    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the broker and the plugins its configuration names.",
            discussion: """
            Binds the bus in a private runtime directory (mode 0700), starts each configured plugin as a \
            child process, and serves until SIGINT or SIGTERM, then stops the plugins and removes its sockets.

            Without --config, the default configuration is used (Config/default.yml).
            """
        )

        @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
        var config: String?

        @OptionGroup var bus: BusOptions

        @Option(name: .long, help: ArgumentHelp("Listen here instead of ipc://<runtime dir>/bus.sock, e.g. tcp://127.0.0.1:5560.", valueName: "endpoint"))
        var endpoint: String?

        @Option(name: .long, help: ArgumentHelp("Write every event to this journal file (JSON Lines).", valueName: "file"))
        var journal: String?

        func run() throws {
            bootstrapLogging(bus.logLevel)
            let logger = Logger(label: "shieldbus")
            let configuration: ShieldBusConfiguration
            do {
                configuration = try ShieldBusConfiguration.load(path: try DefaultFiles.configurationPath(config))
            } catch let error as ConfigurationError {
                printError("error: \(error)")
                throw ExitCode(2)
            }
            if let endpoint, !(endpoint.hasPrefix("tcp://127.") || endpoint.hasPrefix("tcp://localhost") || endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("tcp://[::1]")) {
                printError("error: --endpoint must be on this machine (ipc://… or tcp://127.0.0.1:PORT); got \(endpoint)")
                throw ExitCode(2)
            }
            var settings = BrokerSettings(runtimeDirectory: RuntimeDirectory.resolve(bus.runtimeDir), endpoint: endpoint)
            settings.maximumBodyBytes = configuration.bus.maxBodyBytes
            settings.heartbeatMilliseconds = configuration.bus.heartbeatMs
            settings.sessionTimeoutMilliseconds = configuration.bus.sessionTimeoutMs
            settings.deliveryHighWaterMark = configuration.bus.highWaterMark
            settings.journalPath = journal ?? configuration.journal
            settings.settingsForPlugins = ["timeZone": "UTC", "configuration": .string(configuration.name)]
            settings.plugins = try configuration.plugins.map { declaration in
                PluginSpec(name: declaration.name, executable: try DefaultFiles.executablePath(declaration.executable, for: declaration.name),
                           arguments: declaration.arguments, environment: declaration.environment, role: declaration.role,
                           restart: RestartPolicy(rawValue: declaration.restart) ?? .onFailure)
            }
            let broker = Broker(settings: settings, logger: logger)
            do {
                try broker.run()
            } catch let error as RuntimeDirectoryError {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }
}

/// Where the shipped files are: the default configuration, and plugin executables built next to `shieldbus`.
enum DefaultFiles {
    struct NotFound: Error, CustomStringConvertible {
        let description: String
    }

    /// The directory holding the running `shieldbus` executable (the build products directory).
    static var executableDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// An explicit configuration path, or the default one: ./Config/default.yml, else the one in the source
    /// tree this `shieldbus` was built from.
    static func configurationPath(_ explicit: String?) throws -> String {
        if let explicit { return explicit }
        let candidates = [
            FileManager.default.currentDirectoryPath + "/Config/default.yml",
            executableDirectory.appendingPathComponent("../../../Config/default.yml").standardizedFileURL.path,
            executableDirectory.appendingPathComponent("../../Config/default.yml").standardizedFileURL.path,
        ]
        guard let found = candidates.first(where: FileManager.default.fileExists(atPath:)) else {
            throw NotFound(description: "no default configuration found (looked for \(candidates.joined(separator: ", "))); pass --config FILE")
        }
        return found
    }

    /// A plugin's executable: a path as given, else a built product name next to `shieldbus`, else a
    /// program on PATH (e.g. `python3`).
    static func executablePath(_ executable: String, for plugin: String) throws -> String {
        if executable.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: executable) else {
                throw NotFound(description: "plugin '\(plugin)': \(executable) is not an executable file")
            }
            return executable
        }
        let beside = executableDirectory.appendingPathComponent(executable).path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/\(executable)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw NotFound(description: "plugin '\(plugin)': no built product '\(executable)' next to shieldbus (\(beside)) and none on PATH; build it with `swift build --product \(executable)` or give a path")
    }
}
