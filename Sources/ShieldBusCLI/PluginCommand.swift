// `shieldbus plugin new`: a new plugin from a template — its source, its test through the real broker, its targets.
import ArgumentParser
import Foundation

extension ShieldBus {
    struct Plugin: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "plugin", abstract: "Create new plugins.", subcommands: [New.self])
    }
}

extension PluginKind: ExpressibleByArgument {}

extension ShieldBus.Plugin {
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Create a working plugin of a kind, with a test that runs it against the real broker.",
            discussion: """
            Writes <directory>/NAME/main.swift (a subclass of the SDK class for the kind) and \
            Tests/<Name>Tests/<Name>Tests.swift, adds both targets to Package.swift above the line \
            `\(PackageManifest.marker)`, and prints the configuration entry that runs the plugin.

            Kinds: monitor (DeviceActivityMonitor), shield (ShieldConfigurationDataSource), action \
            (ShieldActionDelegate), notifier and report (BusPlugin in those roles), app (App), generic (BusPlugin).
            """
        )

        @Argument(help: "The plugin's name: lowercase letters, digits and '-' (also its product and its hello name).")
        var name: String

        @Option(name: .long, help: "monitor, shield, action, notifier, report, app or generic.")
        var kind: PluginKind

        @Option(name: .long, help: ArgumentHelp("The plugins' folder, relative to the package.", valueName: "dir"))
        var directory = "Plugins"

        @Option(name: .long, help: ArgumentHelp("The package's folder (holding Package.swift).", valueName: "dir"))
        var packagePath = "."

        func run() throws {
            let scaffold = PluginScaffold(name: try PluginName(name), kind: kind, directory: directory)
            var manifest = try PackageManifest(packagePath: packagePath)
            for target in [name, scaffold.name.testName] where manifest.declaresTarget(target) {
                throw PluginScaffoldError.targetExists(name: target, manifest: manifest.path)
            }
            let files = FileManager.default
            for folder in [(scaffold.sourcePath as NSString).deletingLastPathComponent, (scaffold.testPath as NSString).deletingLastPathComponent]
                where files.fileExists(atPath: packagePath + "/" + folder) {
                throw PluginScaffoldError.alreadyExists(path: folder)
            }
            try manifest.insertAboveMarker(scaffold.packageTargets)  // checked before anything is written
            for file in scaffold.files {
                let path = packagePath + "/" + file.path
                try files.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try file.contents.write(toFile: path, atomically: true, encoding: .utf8)
            }
            try manifest.write()
            print(scaffold.nextSteps)
        }
    }
}
