import AppGroupStore
import ArgumentParser
import Broker
import BusClient
import Configuration
import CProcessControl
import DeviceOS
import Explore
import Foundation
import LockInvariant
import RunPlanning
#if canImport(Glibc)
import Glibc
#endif

extension ShieldBus {
    /// `shieldbus broker-template` (hidden): the process `shieldbus explore` forks each day's broker from
    /// (`BrokerTemplate` in Sources/Explore, docs/architecture.md § 8). Executed once per explore worker, it reads and
    /// checks the configuration and its catalog, makes the first uses every day makes and starts the worker's kept
    /// sandboxes (`KeptLaunchTemplates`), then serves explore's channel (descriptor 3): each child plays its day as
    /// `shieldbus run ARG…` does from `main`, launching its plugins from the kept templates (one that ended is started
    /// again before the next day is forked).
    ///
    /// Until it forks it stays one thread holding nothing a day must not share: no logging set up (a child sets up its
    /// own), no Dispatch thread (libdispatch makes the queues of a child of a process where it started one unusable, and
    /// such a template forks no day), no libzmq context, no SQLite connection open (the stores it builds once,
    /// `rememberStores`, are closed and removed), no file
    /// but the channel (close-on-exec; every child closes it) and the kept templates' channels and process descriptors
    /// (close-on-exec; each day inherits them, and the worker's days are played one at a time).
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

        @Option(name: .customLong("worker-dir"), help: ArgumentHelp("The folder of the explore worker whose days this template plays: its plugins' sandboxes and launch templates are kept across them.", valueName: "folder"))
        var workerDirectory: String?

        func run() throws {
            let loaded: LoadedConfiguration
            do {
                loaded = try LoadedConfiguration(path: config)
            } catch {
                printError("shieldbus broker-template: \(error)")
                throw ExitCode(2)
            }
            Self.warm(loaded)
            // Kept sandboxes when they can be made; otherwise the days start their own, as a run does.
            let kept = workerDirectory.flatMap { Self.keep(loaded, in: WorkerFolder(path: $0)) }
            // Every day of a worker whose sandboxes are kept is played with the same arguments (its folder's): read once
            // here rather than by each day, which is given them only when its own are those.
            let read = kept == nil ? nil : workerDirectory.flatMap { Self.readDayArguments(config: config, worker: WorkerFolder(path: $0)) }
            if let workerDirectory { Self.rememberStores(in: workerDirectory) }
            let ready = kept == nil ? "ready" : "ready kept"
            guard shieldbus_send_message(Self.channel, ready, UInt(ready.utf8.count)) == ready.utf8.count else {
                printError("shieldbus broker-template: descriptor \(Self.channel) is not explore's channel: \(String(cString: strerror(errno)))")
                throw ExitCode(70)
            }
            var request: UnsafeMutablePointer<CChar>?
            var problem: Int32 = 0
            // Before each fork, a kept template that ended is started again, so that the day launches from it.
            let restartEnded: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
                guard let context else { return }
                Unmanaged<KeptLaunchTemplates>.fromOpaque(context).takeUnretainedValue().restartEnded()
            }
            let length = shieldbus_serve_days(Self.channel, &request, &problem, kept == nil ? nil : restartEnded,
                                              kept.map { Unmanaged.passUnretained($0).toOpaque() })
            // In the template: explore closed the channel, or the template cannot go on (said by the loop).
            guard length >= 0, let request else {
                kept?.end()
                throw ExitCode(problem == 0 ? 0 : 70)
            }
            // In a forked child: which day it is, then this day's `shieldbus` arguments.
            let words = Self.words(of: UnsafeBufferPointer(start: UnsafeRawPointer(request).assumingMemoryBound(to: UInt8.self), count: length))
            free(request)
            let (day, arguments) = (words.first ?? "", words.dropFirst())
            guard arguments.first == "run" else {
                printError("shieldbus broker-template: \(day) is played by `run`, not '\(arguments.first ?? "")'")
                Foundation.exit(64)
            }
            ShieldBus.playDay(Array(arguments.dropFirst()), day: day, loaded: loaded, kept: kept,
                              read: read.flatMap { $0.arguments == Array(arguments) ? $0.run : nil })
            Foundation.exit(0)
        }

        /// A day's request, its words each ended by a zero byte but the last (an empty word kept). Read as strings
        /// straight from the bytes: an array of slices would be a generic type whose metadata each forked day would make
        /// at its first use.
        static func words(of request: UnsafeBufferPointer<UInt8>) -> [String] {
            var words: [String] = []
            var start = 0
            for end in 0...request.count where end == request.count || request[end] == 0 {
                words.append(String(decoding: UnsafeBufferPointer(rebasing: request[start..<end]), as: UTF8.self))
                start = end + 1
            }
            return words
        }

        /// The `run` arguments explore gives each day played in `worker` (`DayRunner.runArguments`), and `run` read
        /// from them; nil when they are refused (each day then reads them, and says why).
        static func readDayArguments(config: String, worker: WorkerFolder) -> (arguments: [String], run: Run)? {
            let arguments = DayRunner.runArguments(configurationPath: config, directory: worker.path, endpoint: worker.endpoint)
            return (try? Run.parse(Array(arguments.dropFirst()))).map { (arguments, $0) }
        }

        /// The stores every day makes fresh (the device's, the delivery store, each App Group's), each built once at a
        /// scratch name in `folder` and removed: a day writes its own from the bytes (`StoreCreation.remember`), the
        /// same file SQLite would build. One that cannot be is built by each day, as a run builds it. The connections
        /// are closed before the template forks.
        static func rememberStores(in folder: String) {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            for remember in [BrokerWarmUp.rememberStores, DeviceOSWarmUp.rememberStores, AppGroupContainer.rememberStoreCreation] {
                try? remember(folder)
            }
        }

        /// Makes the worker's folders and starts its plugins' sandboxes and launch templates in them, planned as each
        /// day plans them; nil (said on standard error) when they cannot be, or a day would not launch from them
        /// (`SHIELDBUS_PLAIN_LAUNCHES=1`).
        static func keep(_ loaded: LoadedConfiguration, in worker: WorkerFolder) -> KeptLaunchTemplates? {
            guard ProcessInfo.processInfo.environment["SHIELDBUS_PLAIN_LAUNCHES"] != "1", !loaded.configuration.plugins.isEmpty else { return nil }
            do {
                let runtime = RuntimeDirectory(path: worker.runtimeDirectory)
                for folder in [worker.path, worker.runtimeDirectory, worker.stateDirectory, worker.busFolder] {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                }
                // Makes every folder a sandbox binds in them, as each day's plan does.
                let specs = try RunPlan.pluginSpecs(configuration: loaded.configuration, stateDirectory: worker.stateDirectory, runtime: runtime,
                                                    shortLivedExtensions: false)
                return try KeptLaunchTemplates(specs: specs, runtimeDirectory: runtime, stateDirectory: worker.stateDirectory,
                                               endpoint: worker.endpoint, bubblewrap: try PluginSandbox.locateBubblewrap())
            } catch {
                printError("shieldbus broker-template: the plugins' sandboxes are not kept across days: \(error)")
                return nil
            }
        }

        /// First uses every day makes, made once here so that each child finds them done (the runtime's metadata and
        /// conformance look-ups, Foundation's time-zone data): ArgumentParser's reading of `run`'s options, and a
        /// generated day of each profile read as a scenario and the products' promises' checker built for it, as a day's
        /// plan reads and builds its own (explore judges each journal itself: the day's broker judges nothing,
        /// `--no-check`); and the folders each plugin's sandbox shows of its program (`PluginSandbox.findProgramFolders`); the serving loop's collections (`BrokerWarmUp`), the bodies the day's
        /// device OS reads and writes, coded once (`DeviceOSWarmUp`), and the summary's number formatting
        /// (`String(format:)`, its arguments' casts). Nothing here opens a file that stays open or starts a thread.
        static func warm(_ loaded: LoadedConfiguration) {
            BrokerWarmUp.run()
            DeviceOSWarmUp.run(catalog: loaded.catalog)
            _ = String(format: "%.2f", 0.0)
            _ = try? Run.parse(["--config", loaded.path, "--scenario", "day.yml", "--journal", "journal.jsonl", "--runtime-dir", "run",
                                "--state-dir", "state", "--quiet", "--no-check"])
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
                      let scenario = try? Scenario.parse(document, catalog: catalog, habits: habits, defaultTimeZone: zone) else { continue }
                _ = try? LockInvariantChecker(configuration: configuration, catalog: catalog, timeZone: scenario.resolvedTimeZone, models: DefaultFiles.promiseModels)
            }
        }
    }
}
