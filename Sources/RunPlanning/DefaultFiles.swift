// DefaultFiles: where `shieldbus` finds what it is not told — the configuration, the catalog, the plugins' programs — and which
// files of a state folder make up the device.
import BusClient
import Configuration
import Foundation
import LockInvariant

/// The files of a state folder that make up the device: a fresh run removes them all.
public enum StateFiles {
    /// The broker's durable cursors, sequence number and bus time.
    public static let deliveryStore = "bus.sqlite"

    public static func isDeviceState(_ name: String) -> Bool {
        name.hasPrefix("device.sqlite") || name.hasPrefix(deliveryStore) || name == StateFolder.appGroups || name == StateFolder.pluginCursors
    }
}

/// Where the shipped files are: the default configuration, the catalog, and plugin executables built next to `shieldbus`.
public enum DefaultFiles {
    public struct NotFound: Error, CustomStringConvertible {
        public let description: String
    }

    /// The promise models a configuration may name: programs next to `shieldbus` first.
    public static var promiseModels: PromiseModels { PromiseModels(programFolder: executableDirectory.path) }

    /// The directory holding the running `shieldbus` executable (the build products directory).
    public static var executableDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The repository's Config folder, found from the working directory or from where `shieldbus` was built.
    public static func configFolderCandidates() -> [String] {
        [
            FileManager.default.currentDirectoryPath + "/Config",
            executableDirectory.appendingPathComponent("../../../Config").standardizedFileURL.path,
            executableDirectory.appendingPathComponent("../../Config").standardizedFileURL.path,
        ]
    }

    /// An explicit configuration path, or the default one (Config/default.yml).
    public static func configurationPath(_ explicit: String?) throws -> String {
        if let explicit { return explicit }
        let candidates = configFolderCandidates().map { $0 + "/default.yml" }
        guard let found = candidates.first(where: FileManager.default.fileExists(atPath:)) else {
            throw NotFound(description: "no default configuration found (looked for \(candidates.joined(separator: ", "))); pass --config FILE")
        }
        return found
    }

    /// The shipped catalog's app names, for shell completion (none when it cannot be read).
    public static func appNames() -> [String] {
        guard let path = shippedCatalogPath(), let catalog = try? AppCatalog.load(path: path) else { return [] }
        return catalog.apps.map(\.name).sorted()
    }

    /// The shipped catalog (`Config/catalog.yml`), if it can be found.
    public static func shippedCatalogPath() -> String? {
        configFolderCandidates().map { $0 + "/catalog.yml" }.first(where: FileManager.default.fileExists(atPath:))
    }

    /// The configuration's catalog: its `catalog:` file, else a `catalog.yml` next to it, added to the shipped catalog
    /// (a file with `standalone: true` stands alone); the shipped catalog when there is neither.
    public static func catalog(for configuration: ShieldBusConfiguration) throws -> AppCatalog {
        let beside = URL(fileURLWithPath: configuration.file).deletingLastPathComponent().appendingPathComponent("catalog.yml").path
        let own = try configuration.catalog.map(configuration.resolve) ?? (FileManager.default.fileExists(atPath: beside) ? beside : nil)
        let shipped = shippedCatalogPath()
        // The shipped catalog itself, or a copy of it (a project that copied `Config/`, another checkout's), is not an
        // extension: as one, each of its entries would be refused as listed twice.
        func same(_ a: String, _ b: String) -> Bool {
            URL(fileURLWithPath: a).resolvingSymlinksInPath().path == URL(fileURLWithPath: b).resolvingSymlinksInPath().path
                || FileManager.default.contentsEqual(atPath: a, andPath: b)
        }
        switch (own, shipped) {
        case let (own?, shipped?) where !same(own, shipped): return try AppCatalog.load(path: own, extending: AppCatalog.load(path: shipped))
        case let (own?, _): return try AppCatalog.load(path: own)
        case let (nil, shipped?): return try AppCatalog.load(path: shipped)
        case (nil, nil):
            throw NotFound(description: "no app catalog found (looked for \(beside) and \(configFolderCandidates().map { $0 + "/catalog.yml" }.joined(separator: ", "))); set `catalog:` in the configuration")
        }
    }

    /// A plugin's executable: a path as given, else a built product name next to `shieldbus`, else a
    /// program on PATH (e.g. `python3`).
    public static func executablePath(_ executable: String, for plugin: String) throws -> String {
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
