// `shieldbus plugin new`: a new plugin from a template — its source, its test through the real broker, its targets —
// or a whole product (ProductScaffold).
import ArgumentParser
import BusClient
import BusProtocol
import BusTools
import Configuration
import Foundation
import RunPlanning

extension ShieldBus {
    struct Plugin: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "plugin", abstract: "Create new plugins; start a running one afresh.",
                                                        subcommands: [New.self, Restart.self])
    }
}

extension ShieldBus.Plugin {
    struct Restart: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restart",
            abstract: "Start a plugin of the running broker afresh — one the supervisor gave up on too — and wait until it is connected.",
            discussion: """
            The broker kills the plugin's process if one runs, forgets its failures and starts it again (a plugin that             crashed in a loop, or whose executable was missing, after you fixed it), as a device restart would for every             plugin. Exits 0 once the new process is connected; 1 if it fails again or does not connect in time, with             its last error and log.
            """)

        @Argument(help: "The plugin's name, as in the configuration.")
        var name: String

        @OptionGroup var bus: BusOptions

        @Option(name: .long, help: ArgumentHelp("How long to wait for it to connect, in seconds.", valueName: "s"))
        var waitSeconds: Double = 15

        @Flag(name: .long, help: "Print the outcome as JSON.")
        var json = false

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let answer = try BusTool.request(runtimeDir: bus.runtimeDir, tool: "plugin-restart", topic: Topic.pluginRestartRequest) { _ in ["name": .string(name)] }
            let was = answer["was"]?.stringValue ?? "?"
            let runtime = RuntimeDirectory.resolve(bus.runtimeDir)
            let connection = try BusConnection(endpoint: runtime.brokerEndpoint(), hello: Hello(name: BusTool.name("plugin-restart"), role: .tool, subscriptions: []), runtime: runtime)
            defer { connection.close() }
            let deadline = monotonicMilliseconds() + Int64(waitSeconds * 1000)
            var entry: JSONValue?
            var outcome = "timeout"
            while monotonicMilliseconds() < deadline {
                entry = try connection.status()["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == name }
                if entry?["connected"]?.boolValue == true { outcome = "connected"; break }
                if entry?["state"]?.stringValue == "failed" { outcome = "failed"; break }
                usleep(50_000)  // a poll interval; the deadline decides
            }
            let lastError = entry?["lastError"]?.stringValue ?? entry?["lastExit"]?.stringValue
            if json {
                var result: [String: JSONValue] = ["name": .string(name), "was": .string(was), "outcome": .string(outcome)]
                if let pid = entry?["pid"] { result["pid"] = pid }
                if outcome != "connected", let lastError { result["lastError"] = .string(lastError) }
                print(TerminalText.escapedJSON(JSONValue.object(result).jsonText))
            } else {
                switch outcome {
                case "connected":
                    print("restarted \(name) (it was \(was)): connected, pid \(entry?["pid"]?.intValue.map(String.init) ?? "?")")
                case "failed":
                    printError("restarted \(name) (it was \(was)), but it failed again: \(TerminalText.escaped(lastError ?? "no error recorded")); its log: \(entry?["log"]?.stringValue ?? runtime.logsPath)")
                default:
                    printError("restarted \(name) (it was \(was)), but it did not connect within \(waitSeconds) s\(lastError.map { " (last: \(TerminalText.escaped($0)))" } ?? ""); its log: \(entry?["log"]?.stringValue ?? runtime.logsPath)")
                }
            }
            if outcome != "connected" { throw ExitCode(1) }
        }
    }
}

extension PluginKind: ExpressibleByArgument {}

extension ShieldBus.Plugin {
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Create a working plugin of a kind, or a whole product, with what proves it.",
            usage: """
            shieldbus plugin new <name> --kind <kind> [--directory <dir>] [--package-path <dir>]
            shieldbus plugin new --product <name> [--package-path <dir>]
            """,
            discussion: """
            A plugin (NAME --kind KIND): writes <directory>/NAME/main.swift (a subclass of the SDK class for the kind) \
            and Tests/<Name>Tests/<Name>Tests.swift, adds both targets to Package.swift above the line \
            `\(PackageManifest.marker)`, and prints the configuration entry that runs the plugin. Kinds: monitor \
            (DeviceActivityMonitor), shield (ShieldConfigurationDataSource), action (ShieldActionDelegate), notifier and \
            report (BusPlugin in those roles), app (App), generic (BusPlugin).

            A product (--product NAME): a renamed copy of the shipped Bedtime to make your own — Plugins/<Name>Kit (what \
            the app and the extensions share), Plugins/<Name> (the monitor, shield, action and app in one executable), \
            Config/NAME.yml (App Group with slices, the store's owner, the pick, the promise), Config/NAME-apps.yml (its \
            app, added to the shipped catalog) and Config/scenarios/NAME-night.yml (two nights with probes); both \
            targets go into Package.swift. `swift build --product NAME` builds it all.
            """
        )

        @Argument(help: "The plugin's name: lowercase letters, digits and '-' (also its product and its hello name).")
        var name: String?

        @Option(name: .long, help: "monitor, shield, action, notifier, report, app or generic.")
        var kind: PluginKind?

        @Option(name: .long, help: ArgumentHelp("Create a whole product of this name instead (lowercase letters, digits and '-').", valueName: "name"))
        var product: String?

        @Option(name: .long, help: ArgumentHelp("The plugin's folder, relative to the package (default: Plugins; a product's is always Plugins).", valueName: "dir"))
        var directory: String?

        @Option(name: .long, help: ArgumentHelp("The package's folder (holding Package.swift).", valueName: "dir"))
        var packagePath = "."

        func validate() throws {
            if product != nil, directory != nil { throw ValidationError("--directory is for a plugin; a product's folders are always under Plugins") }
            switch (name, kind, product) {
            case (_?, _?, nil), (nil, nil, _?): return
            case (nil, _, nil): throw ValidationError("name the plugin (shieldbus plugin new NAME --kind KIND), or a product (--product NAME)")
            case (_?, nil, nil): throw ValidationError("say which kind of plugin with --kind (monitor, shield, action, notifier, report, app, generic)")
            default: throw ValidationError("--product makes a whole product: give it alone, without a plugin name or --kind")
            }
        }

        func run() throws {
            if let product {
                try makeProduct(ProductScaffold(name: try PluginName(product), packagePath: packagePath))
            } else if let name, let kind {
                try makePlugin(PluginScaffold(name: try PluginName(name), kind: kind, directory: directory ?? "Plugins"))
            }
        }

        private func makePlugin(_ scaffold: PluginScaffold) throws {
            var manifest = try PackageManifest(packagePath: packagePath)
            for target in [scaffold.name.name, scaffold.name.testName] where manifest.declaresTarget(target) {
                throw PluginScaffoldError.targetExists(name: target, manifest: manifest.path)
            }
            let folders = [(scaffold.sourcePath as NSString).deletingLastPathComponent, (scaffold.testPath as NSString).deletingLastPathComponent]
            try refuseExisting(folders)
            try manifest.insertAboveMarker(scaffold.packageTargets)  // checked before anything is written
            try write(scaffold.files, manifest: manifest)
            print(scaffold.nextSteps)
        }

        private func makeProduct(_ scaffold: ProductScaffold) throws {
            var manifest = try PackageManifest(packagePath: packagePath)
            for target in [scaffold.name.name, scaffold.libraryName] where manifest.declaresTarget(target) {
                throw PluginScaffoldError.targetExists(name: target, manifest: manifest.path)
            }
            try refuseExisting(scaffold.folders + [scaffold.configurationPath, scaffold.catalogPath, scaffold.scenarioPath])
            let packageCatalog = packagePath + "/Config/catalog.yml"
            if let shipped = FileManager.default.fileExists(atPath: packageCatalog) ? packageCatalog : DefaultFiles.shippedCatalogPath(),
               let catalog = try? AppCatalog.load(path: shipped),
               catalog.app(named: scaffold.displayName) != nil || catalog.app(named: scaffold.bundleIdentifier) != nil {
                throw PluginScaffoldError.appExists(name: scaffold.displayName, catalog: shipped)
            }
            let files = try scaffold.files()  // read and renamed before anything is written
            try manifest.insertAboveMarker(scaffold.packageTargets)
            try write(files, manifest: manifest)
            print(scaffold.nextSteps)
        }

        private func refuseExisting(_ paths: [String]) throws {
            for path in paths where FileManager.default.fileExists(atPath: packagePath + "/" + path) {
                throw PluginScaffoldError.alreadyExists(path: path)
            }
        }

        private func write(_ files: [(path: String, contents: String)], manifest: PackageManifest) throws {
            for file in files {
                let path = packagePath + "/" + file.path
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try file.contents.write(toFile: path, atomically: true, encoding: .utf8)
            }
            try manifest.write()
        }
    }
}
