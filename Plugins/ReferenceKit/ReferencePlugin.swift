import Foundation
import ShieldBusSDK

/// Setting up a reference plugin from its configuration, and the reference plugins' programs: each executable's
/// `main` runs one (`PluginHost.run`), and a test hosts the same program in its own process (`InProcessPlugin`).
public enum ReferencePlugin {
    /// This plugin's product options and App-Group store; exits with a clear message when either is wrong
    /// (a wrong app group lists the groups that exist — iOS would silently hand back nil).
    public static func setUp() -> (ProductOptions, SharedDefaults) {
        do {
            return try load()
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(PluginExitStatus.configurationError)  // the configuration is wrong, restarting will not help
        }
    }

    /// This plugin's product options and App-Group store, or a configuration error that says which is wrong.
    public static func load() throws -> (ProductOptions, SharedDefaults) {
        do {
            let options = try ProductOptions.current()
            return (options, try SharedDefaults.forPlugin(suiteName: options.appGroup))
        } catch {
            let name = PluginEnvironment["SHIELDBUS_PLUGIN_NAME"] ?? CommandLine.arguments[0]
            throw PluginError.configuration("\(name): cannot start: \(error)")
        }
    }

    /// `activity-monitor`: the DeviceActivity monitor — owner of the shields, chained re-checks, passes, nudges.
    public static let monitor = PluginProgram { _ in
        let (options, defaults) = try load()
        return ReferenceMonitor.make(options: options, defaults: defaults)
    }

    /// `action-delegate`: the shield action delegate — what the buttons do; records passes and nudges.
    public static let actionDelegate = PluginProgram { _ in
        let (options, defaults) = try load()
        return ReferenceActionDelegate.make(options: options, defaults: defaults)
    }

    /// `companion-app`: the main app — authorization, the selection, schedules, unlocks, the foreground check.
    public static let companionApp = PluginProgram { _ in
        let (options, defaults) = try load()
        return ReferenceCompanionApp.make(options: options, defaults: defaults)
    }
}
