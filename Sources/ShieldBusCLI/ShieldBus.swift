// ShieldBusCLI: the `shieldbus` command — run the broker, tap and poke the bus, inspect state.

import ArgumentParser
import Broker
import BusClient
import BusProtocol
import Foundation
import Logging
import RunPlanning

@main
struct ShieldBus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shieldbus",
        abstract: "Apple's Screen Time architecture on a local ZeroMQ message bus.",
        discussion: """
        The broker plays the device's operating system; plugins (shield renderer, action delegate, \
        activity monitor, notifier, report builder, companion app) are processes on the bus.

        Start a broker with `shieldbus run`, then watch it with `shieldbus tap` in another terminal.
        """,
        version: ShieldBus.version,
        subcommands: [Run.self, Tap.self, Send.self, Replay.self, Status.self, Do.self, Authorize.self, Pick.self, OSUpdate.self,
                      Notification.self, Clock.self, Check.self, ExploreCommand.self, State.self, Report.self, Plugin.self, Keys.self, StudioCommand.self,
                      BrokerTemplateCommand.self]
    )

    /// The release this build is (the bus protocol's version is in its `hello`, docs/protocol.md).
    static let version = "0.1.0"

    /// As ArgumentParser's, but a usage mistake a command finds itself (a `ValidationError` from its `run`, such as
    /// an unknown `do` action or a body that is not JSON) is shown with that command's usage, not the top level's.
    static func main() { main(arguments: nil) }

    /// `arguments`: the command line after the program's name (nil: this process's).
    static func main(arguments: [String]?) {
        do {
            var command = try parseAsRoot(arguments)
            try showingUsage(of: type(of: command)) { try command.run() }
        } catch {
            exit(withError: error)
        }
    }

    /// A day forked from explore's broker template: `runArguments` (those after `run`) read by `Run` itself, the
    /// parser of `shieldbus run`, rather than from the top level, whose reading of every command's options each day
    /// would pay again. `day` names the day (`the day of seed 7`); `loaded`: the configuration the template
    /// read; `kept`: the sandboxes and launch templates it keeps for its days; `read`: `Run` as the template read it
    /// from these same arguments (a worker's days all have its folder's), so that the day need not read them again.
    static func playDay(_ runArguments: [String], day: String, loaded: LoadedConfiguration, kept: KeptLaunchTemplates?, read: Run? = nil) {
        let run: Run
        do {
            run = try read ?? Run.parse(runArguments)
        } catch {
            // Explore wrote these arguments, not the person: say whose day it is, and that `shieldbus run` refused
            // them, rather than ArgumentParser's usage of a bare `run`.
            printError("shieldbus explore: \(day) (forked from the broker template) could not start: `shieldbus run` refused its arguments: "
                       + "\(Run.message(for: error)) (arguments: \(runArguments.joined(separator: " ")))")
            Foundation.exit(Run.exitCode(for: error).rawValue)
        }
        do {
            try showingUsage(of: Run.self) { try run.run(loaded: loaded, kept: kept) }
        } catch {
            exit(withError: error)
        }
    }

    /// Runs `body`, a usage mistake it finds (a `ValidationError`) shown with `command`'s usage.
    private static func showingUsage(of command: ParsableCommand.Type, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let mistake as ValidationError {
            FileHandle.standardError.write(Data("""
                Error: \(mistake.message)
                Usage: \(usageString(for: command))
                  See '\(commandPath(of: command)) --help' for more information.

                """.utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
    }

    /// "shieldbus state list": the command names from the top level down to `command`.
    private static func commandPath(of command: ParsableCommand.Type) -> String {
        func path(from parent: ParsableCommand.Type) -> [String]? {
            let name = parent.configuration.commandName ?? "\(parent)"
            if parent == command { return [name] }
            for child in parent.configuration.subcommands {
                if let rest = path(from: child) { return [name] + rest }
            }
            return nil
        }
        return (path(from: ShieldBus.self) ?? ["shieldbus"]).joined(separator: " ")
    }
}

/// Options every command that talks to a running broker shares.
struct BusOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The broker's runtime directory.", discussion: "Default: $SHIELDBUS_RUNTIME_DIR, else $XDG_RUNTIME_DIR/shieldbus, else /tmp/shieldbus-<uid>.", valueName: "dir"))
    var runtimeDir: String?

    @Option(name: .long, help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
    var logLevel: Logger.Level?
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Sets up swift-log once: human-readable lines on standard error.
func bootstrapLogging(_ level: Logger.Level?, default defaultLevel: Logger.Level = .info) {
    let chosen = level ?? ProcessEnvironment.value(of: "SHIELDBUS_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? defaultLevel
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = chosen
        return TerminalSafeLogHandler(handler)
    }
}

/// Logs quote what clients and plugins sent (names, reasons, the last line of a plugin's log): their control and
/// invisible characters are escaped before they reach the terminal.
struct TerminalSafeLogHandler: LogHandler {
    private var wrapped: StreamLogHandler

    init(_ wrapped: StreamLogHandler) { self.wrapped = wrapped }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var safe = event
        safe.message = "\(TerminalText.escaped(event.message.description))"
        safe.metadata = event.metadata?.mapValues { .string(TerminalText.escaped($0.description)) }
        wrapped.log(event: safe)
    }
}

/// A command that could not do its job, with the reason (printed without the usage text).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
