import ArgumentParser
import Broker
import Configuration
import CProcessControl
import Explore
import Foundation
import LockInvariant
import RunPlanning
#if canImport(Glibc)
import Glibc
#endif

extension ShieldBus {
    /// `shieldbus broker-template` (hidden): the process `shieldbus explore` forks each day's broker from
    /// (`BrokerTemplate` in Sources/Explore, docs/architecture.md § 8). Executed once per explore run, it reads and
    /// checks the configuration and its catalog and makes the first uses every day makes, then serves explore's
    /// channel (descriptor 3): each child plays its day as `shieldbus run ARG…` does from `main`.
    ///
    /// Until it forks it stays one thread holding nothing a day must not share: no logging set up (a child sets up its
    /// own), no Dispatch (a child of a process that used it may not), no libzmq context, no SQLite connection, no file
    /// but the channel (close-on-exec; every child closes it).
    struct BrokerTemplateCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "broker-template",
            abstract: "For `shieldbus explore`: fork each day's broker from one warmed process.",
            shouldDisplay: false
        )

        /// The channel `shieldbus_spawn_with_channel` gives the template.
        static let channel: Int32 = 3

        @Option(name: .long, help: ArgumentHelp("The configuration every day plays.", valueName: "file"))
        var config: String

        func run() throws {
            let loaded: LoadedConfiguration
            do {
                loaded = try LoadedConfiguration(path: config)
            } catch {
                printError("shieldbus broker-template: \(error)")
                throw ExitCode(2)
            }
            Self.warm(loaded)
            guard shieldbus_send_message(Self.channel, "ready", 5) == 5 else {
                printError("shieldbus broker-template: descriptor \(Self.channel) is not explore's channel: \(String(cString: strerror(errno)))")
                throw ExitCode(70)
            }
            var request: UnsafeMutablePointer<CChar>?
            var problem: Int32 = 0
            let length = shieldbus_serve_days(Self.channel, &request, &problem)
            // In the template: explore closed the channel, or the template cannot go on (said by the loop).
            guard length >= 0, let request else { throw ExitCode(problem == 0 ? 0 : 70) }
            // In a forked child: this day's `shieldbus` arguments.
            let arguments = UnsafeBufferPointer(start: UnsafeRawPointer(request).assumingMemoryBound(to: UInt8.self), count: length)
                .split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            free(request)
            guard arguments.first == "run" else {
                printError("shieldbus broker-template: a day is played by `run`, not '\(arguments.first ?? "")'")
                Foundation.exit(64)
            }
            ShieldBus.main(arguments: arguments, loaded: loaded)
            Foundation.exit(0)
        }

        /// First uses every day makes, made once here so that each child finds them done (the runtime's metadata and
        /// conformance look-ups, Foundation's time-zone data): ArgumentParser's reading of `run`'s options, and a
        /// generated day of each profile read as a scenario and judged by the products' promises, as a day's broker
        /// reads and judges its own; and the folders each plugin's sandbox shows of its program
        /// (`PluginSandbox.findProgramFolders`). Nothing here opens a file that stays open or starts a thread.
        static func warm(_ loaded: LoadedConfiguration) {
            _ = try? Run.parse(["--config", loaded.path, "--scenario", "day.yml", "--journal", "journal.jsonl", "--runtime-dir", "run",
                                "--state-dir", "state", "--quiet"])
            let (configuration, catalog) = (loaded.configuration, loaded.catalog)
            PluginSandbox.findProgramFolders(configuration.plugins.compactMap { declaration in
                (try? DefaultFiles.executablePath(declaration.executable, for: declaration.name)).map { ($0, declaration.arguments) }
            })
            guard let zone = TimeZone(identifier: configuration.timeZone) else { return }
            let generator = DayGenerator(surface: ProductSurface(configuration: configuration, catalog: catalog))
            let habits = OfferedHabits(configuration: configuration, catalog: catalog)
            for profile in ["faithful", "ios-realistic"] {
                let text = generator.day(seed: 1, profile: profile).scenarioText(name: "warm-up")
                guard let document = try? YAMLValue.parse(text, file: "warm-up"),
                      let scenario = try? Scenario.parse(document, catalog: catalog, habits: habits, defaultTimeZone: zone),
                      let checker = try? LockInvariantChecker(configuration: configuration, catalog: catalog, timeZone: scenario.resolvedTimeZone,
                                                              models: DefaultFiles.promiseModels) else { continue }
                _ = checker.reading()
            }
        }
    }
}
