import ArgumentParser
import Configuration
import Foundation
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
            the bus as they were at each instant.

            Examples:
              shieldbus studio                      then open http://127.0.0.1:8080
              shieldbus studio --journal run.jsonl --config Config/habit-lock.yml
            """
        )

        @OptionGroup var bus: BusOptions

        @Option(name: .long, help: ArgumentHelp("The port on 127.0.0.1 (0: any free port, printed at start).", valueName: "n"))
        var port = 8080

        @Option(name: .long, help: ArgumentHelp("Replay this recorded journal (JSON Lines) instead of following a broker.", valueName: "file"))
        var journal: String?

        @Option(name: .long, help: ArgumentHelp("With --journal: open it just after this event (a seq, as `shieldbus check` names a violation's).", valueName: "seq"))
        var at: UInt64?

        @Option(name: .long, help: ArgumentHelp("The configuration whose catalog is the home screen (and, for a journal, whose time zone applies). Default: Config/default.yml.", valueName: "file"))
        var config: String?

        @Option(name: .long, help: ArgumentHelp("How many of the newest live events the Studio keeps in memory (older ones leave the page's bus and scrubber; a journal is read from its file instead).", valueName: "n"))
        var keepEvents = StudioServer.defaultKeptEvents

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
            guard keepEvents > 0 else { throw ValidationError("--keep-events must be at least 1") }
            guard at == nil || journal != nil else { throw ValidationError("--at opens a recorded journal at an event: give --journal FILE too") }
        }

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let configuration = try ShieldBusConfiguration.load(path: try DefaultFiles.configurationPath(config))
            let catalog = try DefaultFiles.catalog(for: configuration)
            let source: StudioServer.Source = journal.map {
                .journal(path: $0, timeZone: TimeZone(identifier: configuration.timeZone) ?? TimeZone(identifier: "UTC")!)
            } ?? .live(runtimeDirectory: bus.runtimeDir)
            let server = try StudioServer(source: source, port: port, homeScreen: catalog.apps, iconDirectories: Self.pluginResourceFolders(),
                                          keptEvents: keepEvents, openAt: at) { read, size in
                printError("reading \(journal ?? "the journal"): \(size > 0 ? read * 100 / size : 0) % (\(read >> 20) of \(size >> 20) MB)")
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

        /// The resource folders of the plugins built next to `shieldbus` (where a shield's icon is, by name).
        static func pluginResourceFolders() -> [URL] {
            let directory = DefaultFiles.executableDirectory
            let bundles = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return bundles.filter { $0.hasSuffix(".resources") && !$0.hasSuffix("_Studio.resources") }.sorted()
                .map { directory.appendingPathComponent($0).appendingPathComponent("Resources") }
        }
    }
}
