import AppGroupStore
import BusProtocol
import Foundation

extension SharedDefaults {
    /// The App-Group store `suiteName` — by default the plugin's own (`appGroup:` in its configuration entry) —
    /// writable in this plugin's slice, announcing every change on the bus (`state.changed`). A wrong name is an
    /// error that lists the groups that exist — never a silent nil. It may be opened before the plugin connects.
    public static func forPlugin(suiteName: String? = nil, slices: SliceEnforcement = .strict) throws -> SharedDefaults {
        let environment = LaunchEnvironment.variables
        guard let writer = PluginRuntime.current?.name ?? environment["SHIELDBUS_PLUGIN_NAME"] else {
            throw PluginError.configuration("SHIELDBUS_PLUGIN_NAME is not set: the broker sets it for the plugins it starts")
        }
        guard let suite = suiteName ?? PluginAppGroup.configured else {
            throw PluginError.configuration("no suiteName given and no app group configured for plugin \(writer): add `appGroup: NAME` to its configuration entry, or pass suiteName:")
        }
        let defaults = try SharedDefaults(suiteName: suite, container: PluginAppGroup.container(), writer: writer, slices: slices, clock: { BusClock.now })
        defaults.onChange = { changes in
            for change in changes {
                try? PluginRuntime.current?.publish("state.changed", json: [
                    "group": .string(suite), "key": .string(change.key), "writer": .string(change.writer),
                    "version": .int(change.version), "removed": .bool(change.removed),
                ])
            }
        }
        return defaults
    }
}

/// The app group a plugin's configuration entry gives it (`appGroup:`, handed over as SHIELDBUS_APP_GROUP),
/// like the app-group entitlement of an iOS extension.
enum PluginAppGroup {
    /// The configured group's name, if any.
    static var configured: String? {
        LaunchEnvironment["SHIELDBUS_APP_GROUP"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The folder of the device's app groups.
    static func container() throws -> AppGroupContainer {
        guard let stateDirectory = LaunchEnvironment["SHIELDBUS_STATE_DIR"] else {
            throw PluginError.configuration("SHIELDBUS_STATE_DIR is not set: the broker sets it for the plugins it starts")
        }
        return AppGroupContainer(rootPath: stateDirectory + "/appgroups")
    }

    /// Checks at start that the configured group exists, so that a wrong name stops the plugin at once, with
    /// the groups that do exist, instead of at its first read or write.
    static func verify(_ named: String? = configured) throws {
        guard let group = named else { return }
        do {
            _ = try SharedDefaults(suiteName: group, container: container())
        } catch let error as AppGroupStoreError {
            throw PluginError.configuration("the app group of this plugin's configuration entry (appGroup: \(group)) cannot be opened: \(error)")
        }
    }
}
