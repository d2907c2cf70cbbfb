import ArgumentParser
import BusProtocol
import Configuration
import Foundation
import LockInvariant
import RunPlanning
import Studio

extension ShieldBus {
    struct StudioCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "studio",
            abstract: "ShieldBus Studio: the simulated phone, its timeline, bus and state, live in a browser.",
            discussion: """
            Serves a web page on 127.0.0.1 (loopback only) that follows the running broker as `shieldbus tap` does: \
            the phone (the app on screen, or the shield over it as the renderer configured it), the day's timeline, \
            the bus (filter by topic prefix and plugin; click an event for its JSON), the App-Group keys, \
            ManagedSettings stores and DeviceActivity schedules, and each plugin's status. Its buttons act as the \
            person through the same requests as `shieldbus do`.

            With --journal it replays a recorded journal instead: a time slider shows the phone, the state and \
            the bus as they were at each instant. The journal is checked against the promise of each product \
            the configuration declares (as `shieldbus check` does): the checker's account stands beside the phone, \
            and the page opens at the first violation. With --scenario the Studio first plays a scenario (an \
            explore failure, explore-failures/*.yml) through `shieldbus run` and replays its journal so.

            Examples:
              shieldbus studio                      then open http://127.0.0.1:8080
              shieldbus studio --journal run.jsonl --config Config/habit-lock.yml
              shieldbus studio --scenario explore-failures/habit-lock-seed17.yml --config Config/naive-habit-lock.yml
            """
        )

        @OptionGroup var bus: BusOptions

        @Option(name: .long, help: ArgumentHelp("The port on 127.0.0.1 (0: any free port, printed at start).", valueName: "n"))
        var port = 8080

        @Option(name: .long, help: ArgumentHelp("Replay this recorded journal (JSON Lines) instead of following a broker.", valueName: "file"))
        var journal: String?

        @Option(name: .long, help: ArgumentHelp("Play this scenario (an explore failure) through `shieldbus run`, then replay its journal, opened at its first violation.", valueName: "file"))
        var scenario: String?

        @Option(name: .long, help: ArgumentHelp("With --journal: open it just after this event (a seq, as `shieldbus check` names a violation's; default: the first violation's, else the end).", valueName: "seq"))
        var at: UInt64?

        @Option(name: .long, help: ArgumentHelp("The configuration whose catalog is the home screen (and, for a journal, whose time zone applies). Default: Config/default.yml.", valueName: "file"))
        var config: String?

        @Option(name: .long, help: ArgumentHelp("How many of the newest live events the Studio keeps in memory (older ones leave the page's bus and scrubber; a journal is read from its file instead).", valueName: "n"))
        var keepEvents = StudioServer.defaultKeptEvents

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
            guard keepEvents > 0 else { throw ValidationError("--keep-events must be at least 1") }
            guard at == nil || journal != nil || scenario != nil else { throw ValidationError("--at opens a recorded journal at an event: give --journal FILE too") }
            guard journal == nil || scenario == nil else { throw ValidationError("--journal replays a journal and --scenario plays one first: choose one") }
        }

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let configurationPath = try DefaultFiles.configurationPath(config)
            let configuration = try ShieldBusConfiguration.load(path: configurationPath)
            let catalog = try DefaultFiles.catalog(for: configuration)
            let configuredZone = TimeZone(identifier: configuration.timeZone) ?? TimeZone(identifier: "UTC")!
            // A scenario's own zone, when it names one, is the device's when its journal begins.
            let scenarioZone = try scenario.map {
                try Scenario.load(path: $0, catalog: catalog, habits: OfferedHabits(configuration: configuration, catalog: catalog), defaultTimeZone: configuredZone).resolvedTimeZone
            }
            let replayed = try scenario.map { try Self.play(scenario: $0, configurationPath: configurationPath) } ?? journal
            let zone = scenarioZone ?? configuredZone
            var account: JSONValue?
            var openAt = at
            if let replayed {
                let checker = try LockInvariantChecker(configuration: configuration, catalog: catalog, timeZone: zone, models: DefaultFiles.promiseModels)
                if !checker.products.isEmpty {
                    let judged = try JournalVerdicts(journal: replayed, checker: checker)
                    account = judged.studioAccount
                    printError(Self.summary(judged.verdicts))
                    openAt = openAt ?? judged.violationSeqs.compactMap { $0 }.first
                } else if scenario != nil {
                    printError("note: \(LockReport.noPromise(configuration)); the day is replayed unjudged")
                }
            }
            let source: StudioServer.Source = replayed.map { .journal(path: $0, timeZone: zone) } ?? .live(runtimeDirectory: bus.runtimeDir)
            let server = try StudioServer(source: source, port: port, homeScreen: catalog.apps,
                                          appControls: AppControl.all(in: configuration), habits: AppControl.habits(in: configuration), iconDirectories: Self.pluginResourceFolders(),
                                          keptEvents: keepEvents, openAt: openAt, account: account, timeZone: zone) { read, size in
                printError("reading \(replayed ?? "the journal"): \(size > 0 ? read * 100 / size : 0) % (\(read >> 20) of \(size >> 20) MB)")
            }
            let finished = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var failure: Error?
            Task {
                do {
                    try await server.run { address in
                        print("ShieldBus Studio on \(address)")
                        fflush(nil)
                    }
                } catch {
                    failure = error
                }
                finished.signal()
            }
            finished.wait()
            if let failure { throw CommandFailure("the Studio stopped: \(failure)") }
        }

        /// The verdicts for the terminal, as `check` prints them but for at most a few violations of each product (a
        /// long journal may have thousands: the page lists every one).
        static func summary(_ verdicts: [ProductVerdict], listing most: Int = 5) -> String {
            var lines: [String] = []
            var listed = 0, unlisted = 0
            func tellUnlisted() {
                if unlisted > 0 { lines.append("    … and \(unlisted) more (the Studio's page lists every one)") }
                listed = 0
                unlisted = 0
            }
            for line in LockReport.text(verdicts).split(separator: "\n", omittingEmptySubsequences: false) {
                guard line.hasPrefix("    - ") else {
                    tellUnlisted()
                    lines.append(String(line))
                    continue
                }
                listed += 1
                if listed <= most { lines.append(String(line)) } else { unlisted += 1 }
            }
            tellUnlisted()
            return lines.joined(separator: "\n")
        }

        /// Plays `scenario` through `shieldbus run` (as explore plays a day: a fresh state, virtual time) and returns its
        /// journal, kept in a folder of its own for the Studio's session (its export, a second look).
        static func play(scenario: String, configurationPath: String) throws -> String {
            guard let executable = Bundle.main.executablePath else { throw CommandFailure("cannot find the shieldbus executable to play the scenario with") }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shieldbus-studio-\(getpid())").path
            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let journal = folder + "/journal.jsonl", errors = folder + "/run.log"
            printError("playing \(scenario) through `shieldbus run --config \(configurationPath)`…")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["run", "--config", configurationPath, "--scenario", scenario, "--journal", journal,
                                 "--runtime-dir", folder + "/run", "--state-dir", folder + "/state", "--quiet"]
            process.standardOutput = FileHandle.nullDevice
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: errors) ?? FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            // 3: played, and a promise was broken — the failure the Studio is to show.
            guard process.terminationStatus == 0 || process.terminationStatus == 3 else {
                let said = ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "").split(separator: "\n").suffix(5).joined(separator: "\n")
                throw CommandFailure("the scenario could not be played (shieldbus run exited with status \(process.terminationStatus)):\n\(said)")
            }
            printError("played: its journal is \(journal)")
            return journal
        }

        /// The resource folders of the plugins built next to `shieldbus` (where a shield's icon is, by name).
        static func pluginResourceFolders() -> [URL] {
            let directory = DefaultFiles.executableDirectory
            let bundles = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return bundles.filter { $0.hasSuffix(".resources") && !$0.hasSuffix("_Studio.resources") }.sorted()
                .map { directory.appendingPathComponent($0).appendingPathComponent("Resources") }
        }
    }
}
