import AppGroupStore
import BusProtocol
import Foundation

extension SharedDefaults {
    /// The App-Group store `suiteName`, writable in this plugin's slice, announcing every change on the bus
    /// (`state.changed`). A wrong name is an error that lists the groups that exist — never a silent nil.
    /// It may be opened before the plugin connects (when the plugin object is made).
    public static func forPlugin(suiteName: String) throws -> SharedDefaults {
        let environment = ProcessInfo.processInfo.environment
        guard let stateDirectory = environment["SHIELDBUS_STATE_DIR"] else {
            throw PluginError.configuration("SHIELDBUS_STATE_DIR is not set: the broker sets it for the plugins it starts")
        }
        guard let writer = PluginRuntime.current?.name ?? environment["SHIELDBUS_PLUGIN_NAME"] else {
            throw PluginError.configuration("SHIELDBUS_PLUGIN_NAME is not set: the broker sets it for the plugins it starts")
        }
        let container = AppGroupContainer(root: URL(fileURLWithPath: stateDirectory + "/appgroups"))
        let defaults = try SharedDefaults(suiteName: suiteName, container: container, writer: writer, clock: { BusClock.now })
        defaults.onChange = { changes in
            for change in changes {
                try? PluginRuntime.current?.publish("state.changed", json: [
                    "group": .string(suiteName), "key": .string(change.key), "writer": .string(change.writer),
                    "version": .int(change.version), "removed": .bool(change.removed),
                ])
            }
        }
        return defaults
    }
}
