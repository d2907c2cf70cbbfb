import Foundation

/// What a plugin program makes at each launch: the component its launch environment (its principal class, its
/// options) and its arguments ask for. A program's `main` runs it as a process (`PluginHost.run(_:)`); a test hosts
/// the same program on a thread of its own process (`InProcessPlugin`), so a plugin's logic lives in a library that
/// both reach and its executable is a thin `main`.
public struct PluginProgram: Sendable {
    private let make: @Sendable (_ arguments: [String]) throws -> BusComponent

    /// A program that makes its component from its arguments (those after the program's name); what it throws
    /// ends the launch, with the error said and its exit status (`PluginExitStatus`).
    public init(_ make: @escaping @Sendable (_ arguments: [String]) throws -> BusComponent) {
        self.make = make
    }

    /// The component of one launch with `arguments`: read while the launch's environment is in force.
    public func component(arguments: [String] = []) throws -> BusComponent {
        try make(arguments)
    }

    /// A program holding several extensions: the configuration names the one a launch runs (`principalClass:`, as
    /// an extension's Info.plist names its `NSExtensionPrincipalClass`), or, when it names none, the only one given.
    public static func principalClasses(_ classes: KeyValuePairs<String, @Sendable () -> BusComponent>) -> PluginProgram {
        let classes = classes.map { (name: $0.key, make: $0.value) }
        return PluginProgram { _ in
            let names = classes.map(\.name)
            if let named = LaunchEnvironment["SHIELDBUS_PRINCIPAL_CLASS"].flatMap({ $0.isEmpty ? nil : $0 }) {
                guard let found = classes.first(where: { $0.name == named }) else {
                    throw PluginError.configuration("the configuration's principalClass '\(named)' is not one of this program's: \(names.joined(separator: ", "))")
                }
                return found.make()
            }
            guard classes.count == 1, let only = classes.first else {
                throw PluginError.configuration("this program holds several extensions (\(names.joined(separator: ", "))): name one with `principalClass:` in the plugin's configuration entry")
            }
            return only.make()
        }
    }

    /// A program whose component is made from the plugin's options (the configuration's `plugins[].options`,
    /// decoded as `Options`). Options that do not decode, or an app group they name that cannot be opened, are a
    /// configuration error (`PluginExitStatus.configurationError`), before the plugin connects.
    public static func options<Options: Decodable>(_ type: Options.Type, _ make: @escaping @Sendable (Options) -> BusComponent) -> PluginProgram {
        PluginProgram { _ in
            make(try checked({ try PluginRuntime.launchOptions(as: type) }, appGroup: { ($0 as? AppGroupOptions)?.appGroup }))
        }
    }

    /// A program whose component is made from the plugin's options read from their JSON (`JSONReadableOptions`,
    /// no `Codable`), refused as `options(_:_:)` refuses them.
    public static func options<Options: JSONReadableOptions>(_ type: Options.Type, _ make: @escaping @Sendable (Options) -> BusComponent) -> PluginProgram {
        PluginProgram { _ in make(try checked({ try PluginRuntime.launchOptions(as: type) }, appGroup: { _ in nil })) }
    }

    /// A program whose component is made from options read from their JSON that name its app group, opened as
    /// `options(_:_:)` opens it. Known by its type rather than found by a cast, which would scan the program's
    /// conformance records at every launch.
    public static func options<Options: JSONReadableOptions & AppGroupOptions>(_ type: Options.Type, _ make: @escaping @Sendable (Options) -> BusComponent) -> PluginProgram {
        PluginProgram { _ in make(try checked({ try PluginRuntime.launchOptions(as: type) }, appGroup: { $0.appGroup })) }
    }

    /// The options `read` gives, once the app group they name (`appGroup`) is checked; what fails is a
    /// configuration error, or `storageUnavailable` for a group whose storage refuses now.
    private static func checked<Options>(_ read: () throws -> Options, appGroup: (Options) -> String?) throws -> Options {
        do {
            let options = try read()
            if let named = appGroup(options), let loss = try PluginAppGroup.verify(named, keeping: true) {
                PluginAppGroup.lossesAtLaunch.withValue { $0.append(loss) }
            }
            return options
        } catch let error as PluginError {
            throw error
        } catch {
            throw PluginError.configuration("\(error)")
        }
    }
}

extension PluginHost {
    /// Runs `program` as this process: its component for the process's arguments, hosted as `run(_:)` hosts one.
    /// A component that cannot be made says why on standard error (the plugin's log) and ends the process with the
    /// status that tells the broker whether starting it again can help.
    public static func run(_ program: PluginProgram) -> Never {
        let component: BusComponent
        do {
            component = try program.component(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(PluginExitStatus.status(for: error))
        }
        // Named as `run(_:)` names a component started outside the broker: by its type.
        run(name: LaunchEnvironment["SHIELDBUS_PLUGIN_NAME"] ?? String(describing: type(of: component)).lowercased()) { AnyComponent(component) }
    }
}

/// The running plugin's launch environment: the process's, or, for a plugin hosted in a test's process
/// (`InProcessPlugin`), its own. What plugin code reads instead of `ProcessInfo.processInfo.environment`, which is
/// the process's alone.
public enum PluginEnvironment {
    /// The variable `name` of the running plugin's launch, if set.
    public static subscript(_ name: String) -> String? { LaunchEnvironment[name] }
}
