import Foundation
import ShieldBusSDK

/// Setting up a reference plugin from its configuration.
public enum ReferencePlugin {
    /// This plugin's product options and App-Group store; exits with a clear message when either is wrong
    /// (a wrong app group lists the groups that exist — iOS would silently hand back nil).
    public static func setUp() -> (ProductOptions, SharedDefaults) {
        do {
            let options = try ProductOptions.current()
            return (options, try SharedDefaults.forPlugin(suiteName: options.appGroup))
        } catch {
            let name = ProcessInfo.processInfo.environment["SHIELDBUS_PLUGIN_NAME"] ?? CommandLine.arguments[0]
            FileHandle.standardError.write(Data("\(name): cannot start: \(error)\n".utf8))
            exit(78)  // EX_CONFIG: the configuration is wrong, restarting will not help
        }
    }
}
