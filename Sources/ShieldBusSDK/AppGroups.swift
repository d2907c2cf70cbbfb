import AppGroupStore
import BusClient
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
        guard PluginAppGroup.isEntitled(to: suite) else { throw PluginError.configuration(PluginAppGroup.notEntitled(suite)) }
        let container = try PluginAppGroup.container()
        let defaults: SharedDefaults
        if let checked = PluginAppGroup.takeChecked(suite, in: container) {
            // Its restart loss was said as the launch's (`PluginAppGroup.verify`).
            defaults = SharedDefaults(continuing: checked, writer: writer, slices: slices, clock: { BusClock.now })
            defaults.onNoteFailure = { StoreReports.noteFailed($0) }
        } else {
            defaults = try SharedDefaults(suiteName: suite, container: container, writer: writer, slices: slices, clock: { BusClock.now })
            StoreReports.watch(defaults, openedBy: "UserDefaults(suiteName: \"\(suite)\")")
        }
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

    /// The groups the plugin is in (SHIELDBUS_APP_GROUPS, from its configuration: its `appGroup:`, its options'
    /// `appGroup`, its product's group, the groups whose slices name it), like an extension's App Group entitlements;
    /// nil for a plugin the broker did not start, which may open any group that exists.
    static var entitled: [String]? {
        LaunchEnvironment["SHIELDBUS_APP_GROUPS"].map { $0.split(separator: ",").map(String.init) }
    }

    /// Whether the plugin may open group `name`: one of its groups (iOS: an App Group entitlement; a sandbox shows it
    /// no other group's folder).
    static func isEntitled(to name: String) -> Bool {
        entitled.map { $0.contains(name) } ?? true
    }

    /// Why the plugin may not open group `name`, and what to change.
    static func notEntitled(_ name: String) -> String {
        let groups = entitled ?? []
        let has = groups.isEmpty ? "it is in no App Group" : "its App Groups: \(groups.joined(separator: ", "))"
        return "this plugin is not in the App Group '\(name)' (\(has)); put it in the group with `appGroup: \(name)` in its configuration entry, or by naming it in the group's slices or its product's plugins"
    }

    /// The folder of the device's app groups.
    static func container() throws -> AppGroupContainer {
        guard let stateDirectory = LaunchEnvironment["SHIELDBUS_STATE_DIR"] else {
            throw PluginError.configuration("SHIELDBUS_STATE_DIR is not set: the broker sets it for the plugins it starts")
        }
        return AppGroupContainer(rootPath: stateDirectory + "/" + StateFolder.appGroups)
    }

    /// What a power cut took from the group named by the plugin's options, found before the runtime existed.
    static let lossesAtLaunch = LockedValue<[(call: String, message: String)]>([])

    /// The stores `verify` opened, by `checkedKey`: the plugin's own open of the same group (`SharedDefaults.forPlugin`)
    /// takes its store from here, or from its runtime, which holds them from its start (`PluginHost.makeRuntime`),
    /// instead of opening and checking the file a second time in one launch.
    static let checkedAtLaunch = LockedValue<[String: SharedDefaults]>([:])

    /// Where the store of `group` in `container` is, as `checkedAtLaunch` knows it.
    static func checkedKey(_ group: String, in container: AppGroupContainer) -> String {
        container.rootPath + "/" + group
    }

    /// The store of `group` that this launch checked and nothing has taken yet, if any: taken, for one owner.
    static func takeChecked(_ group: String, in container: AppGroupContainer) -> SharedDefaults? {
        let key = checkedKey(group, in: container)
        if let runtime = PluginRuntime.current, let held = runtime.appGroupsCheckedAtLaunch.withValue({ $0.removeValue(forKey: key) }) {
            return held
        }
        return checkedAtLaunch.withValue { $0.removeValue(forKey: key) }
    }

    /// Checks at start that the configured group exists, so that a wrong name stops the plugin at once, with
    /// the groups that do exist, instead of at its first read or write; a group that exists but whose storage refuses
    /// now (a full disk) is `storageUnavailable`, which the broker retries. Gives what a power cut took from it, as the
    /// failure of the call that opened it, for the runtime to say once it is connected. `keeping`: the plugin works
    /// in the group (it names it in its options, `AppGroupOptions`), so the store stays open for its own open
    /// (`checkedAtLaunch`); otherwise it is closed, and a plugin that never opens its group holds nothing of it.
    /// A group this launch already checked and keeps (its options and its entry's `appGroup:` name the same group) is
    /// not opened again: its loss was said by that check.
    static func verify(_ named: String? = configured, keeping: Bool = false) throws -> (call: String, message: String)? {
        guard let group = named else { return nil }
        do {
            let groups = try container()
            if checkedAtLaunch.withValue({ $0[checkedKey(group, in: groups)] != nil }) { return nil }
            let opened = try SharedDefaults(suiteName: group, container: groups)
            if keeping { checkedAtLaunch.withValue { $0[checkedKey(group, in: groups)] = opened } }
            return opened.restartLoss.map { ("UserDefaults(suiteName: \"\(group)\")", $0) }
        } catch let error as AppGroupStoreError where error.isStorageUnavailable {
            throw PluginError.storageUnavailable("the app group of this plugin's configuration entry (appGroup: \(group)) cannot be opened now: \(error)")
        } catch let error as AppGroupStoreError {
            throw PluginError.configuration("the app group of this plugin's configuration entry (appGroup: \(group)) cannot be opened: \(error)")
        }
    }
}

/// What a plugin's stores say that iOS keeps to itself: a store a power cut set back, a commit that could not be noted.
enum StoreReports {
    /// Says what a store lost to the machine's restart (nil: nothing) as the failure of the call that opened it: in
    /// the plugin's log and on the bus (`state.call-failed`, which the device counts in `status`).
    static func restartLoss(_ loss: String?, openedBy call: String) {
        if let loss { SilentCall.reportFailure(call, loss) }
    }

    /// Says `defaults`' restart loss, and logs it when its commits can no longer be noted.
    static func watch(_ defaults: SharedDefaults, openedBy call: String) {
        restartLoss(defaults.restartLoss, openedBy: call)
        defaults.onNoteFailure = { noteFailed($0) }
    }

    /// Logs a store whose commits can no longer be noted or flushed (`CommitFollowUp`).
    static func noteFailed(_ message: String) {
        guard let runtime = PluginRuntime.current else {
            return FileHandle.standardError.write(Data("cannot note a commit of \(message)\n".utf8))
        }
        runtime.logger.error("cannot note a commit of \(message)")
    }
}
