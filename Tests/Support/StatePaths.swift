import AppGroupStore
import BusClient
import Foundation

/// Where a device's state folder keeps what tests read and damage directly.
public enum StatePaths {
    /// The device's App Groups in state folder `state`.
    public static func appGroups(in state: String) -> AppGroupContainer {
        AppGroupContainer(rootPath: state + "/" + StateFolder.appGroups)
    }

    /// The store of App Group `group` in state folder `state`.
    public static func appGroupStore(_ group: String, in state: String) -> String {
        try! appGroups(in: state).storeURL(forGroup: group).path
    }

    /// Plugin `plugin`'s record of handled events in state folder `state`.
    public static func handledEventsRecord(_ plugin: String, in state: String) -> String {
        state + "/" + StateFolder.handledEventsRecord(plugin: plugin)
    }
}
