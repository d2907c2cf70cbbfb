import BusProtocol
import DeviceAPI
import Foundation

/// What `shieldbus plugin new` can make: one kind per extension point, each built on its SDK class.
enum PluginKind: String, CaseIterable {
    case monitor, shield, action, notifier, report, app, generic

    /// The role the plugin plays on the bus (the kinds are named after the roles).
    var role: Role { Role(rawValue: rawValue) }

    /// Topic prefixes worth tapping to watch a plugin of this kind work.
    func tapPrefixes(name: String) -> String {
        switch self {
        case .monitor: return "deviceactivity."
        case .shield: return "shield."
        case .action: return "shield.action."
        case .notifier: return "deviceactivity.interval-did-end notification."
        case .report: return "activity.app.opened report."
        case .app: return "app. familycontrols."
        case .generic: return "app.\(name)."
        }
    }
}

/// Why a plugin could not be created.
enum PluginScaffoldError: Error, CustomStringConvertible {
    case invalidName(String, reason: String)
    case alreadyExists(path: String)
    case targetExists(name: String, manifest: String)
    case noManifest(path: String)
    case noMarker(manifest: String, marker: String)
    case noTemplate(path: String, package: String)
    case templateChanged(what: String)
    case appExists(name: String, catalog: String)

    var description: String {
        switch self {
        case let .invalidName(name, reason):
            return "'\(name)' cannot name a plugin: \(reason). Use lowercase letters, digits and '-', starting with a letter (e.g. focus-shield)."
        case let .alreadyExists(path):
            return "\(path) already exists; choose another name, or remove it first"
        case let .targetExists(name, manifest):
            return "\(manifest) already has a target named '\(name)'; choose another name"
        case let .noManifest(path):
            return "no Package.swift in \(path): run this in the ShieldBus package, or pass --package-path"
        case let .noMarker(manifest, marker):
            return "\(manifest) has no line `\(marker)` in its targets list; add it before the list's closing `]`, then run this again"
        case let .noTemplate(path, package):
            return "\(package)/\(path) is missing: a product is made from the shipped Bedtime; run this in the ShieldBus package, or pass --package-path"
        case let .templateChanged(what):
            return "the shipped Bedtime no longer reads as the template expects (\(what)); report this as a bug"
        case let .appExists(name, catalog):
            return "\(catalog) already has an app named '\(name)' (the product's companion app); choose another name"
        }
    }
}

/// A new plugin's name, checked, and the Swift names derived from it.
struct PluginName {
    let name: String

    /// Names that would shadow the SDK's types, beyond the bus's own reserved names.
    static let reserved: Set<String> = BusName.reserved.union(BusTable.screenTime.sourceNames).union(["bus", "shieldbus"])

    init(_ name: String) throws {
        if let problem = BusTable.screenTime.nameProblem(with: name), case .badName(_, let reason) = problem {
            throw PluginScaffoldError.invalidName(name, reason: "it \(reason)")
        }
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else {
            throw PluginScaffoldError.invalidName(name, reason: "it must start with a lowercase letter")
        }
        guard !name.hasSuffix("-"), !name.contains("--") else {
            throw PluginScaffoldError.invalidName(name, reason: "its '-' must separate words")
        }
        guard !Self.reserved.contains(name) else {
            throw PluginScaffoldError.invalidName(name, reason: "it is reserved (\(Self.reserved.sorted().joined(separator: ", ")))")
        }
        self.name = name
    }

    /// `focus-shield` → `FocusShield`: the stem of the plugin's type names and its test target's name.
    var typeStem: String { name.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined() }
    /// The plugin's class.
    var className: String { typeStem + "Plugin" }
    /// The test target, its folder and its test class.
    var testName: String { typeStem + "Tests" }
}

/// The files of a new plugin, where they go, and how to add it to the package and to a configuration.
struct PluginScaffold {
    let name: PluginName
    let kind: PluginKind
    /// The plugins' folder, relative to the package root (`Plugins`).
    let directory: String

    var sourcePath: String { "\(directory)/\(name.name)/main.swift" }
    var testPath: String { "Tests/\(name.testName)/\(name.testName).swift" }

    /// Relative path → contents.
    var files: [(path: String, contents: String)] {
        [(sourcePath, PluginTemplates.main(name: name, kind: kind)), (testPath, PluginTemplates.test(name: name, kind: kind))]
    }

    /// The targets to add to Package.swift: the plugin and its test.
    var packageTargets: [String] {
        [
            #".executableTarget(name: "\#(name.name)", dependencies: [\#(PluginTemplates.dependencies.map { "\"\($0)\"" }.joined(separator: ", "))], path: "\#(directory)/\#(name.name)", \#(PluginTemplates.swiftSettings)),"#,
            #".testTarget(name: "\#(name.testName)", dependencies: ["BusProtocol", "ShieldBusTestSupport", "\#(name.name)"], path: "Tests/\#(name.testName)"),"#,
        ]
    }

    /// The entry that runs the plugin, for a configuration's `plugins:` list.
    var configurationSnippet: String {
        """
        plugins:
          - name: \(name.name)
            executable: \(name.name)      # the built product, found next to shieldbus
            role: \(kind.role.rawValue)
        """
    }

    /// What to do next, printed after the files are written.
    var nextSteps: String {
        """
        Created the \(kind.rawValue) plugin \(name.name):
          \(sourcePath)
          \(testPath)
          Package.swift: the targets \(name.name) and \(name.testName)

        Build it and run its test:
          swift build --product \(name.name)
          swift build --build-tests && swift test --skip-build --filter \(name.testName)

        Add it to a configuration (Config/default.yml, or your own):

        \(configurationSnippet)

        Run the broker with it and watch the bus:
          .build/debug/shieldbus run --config Config/default.yml --no-scenario    # real time, until Ctrl-C
          .build/debug/shieldbus tap \(kind.tapPrefixes(name: name.name))
        """
    }
}
