import AppGroupStore
import BusClient
import BusProtocol
import Foundation

/// The values behind `state.changed` events, which carry a key's writer and version but not its value: read from the
/// device's App-Group stores (as `shieldbus state get` reads them) while the version announced is still the one
/// stored. A live Studio only; a recorded journal has no values.
final class StoredValues {
    private let container: AppGroupContainer
    private var stores: [String: SharedDefaults] = [:]

    init(stateDirectory: String) {
        container = AppGroupContainer(rootPath: stateDirectory + "/" + StateFolder.appGroups)
    }

    /// The value `envelope` (a `state.changed`) announced, if the store still holds that version; nil otherwise.
    func value(announcedBy envelope: Envelope) -> JSONValue? {
        guard envelope.topic == "state.changed" else { return nil }
        let body = envelope.bodyValue
        guard body["removed"]?.boolValue != true, let group = body["group"]?.stringValue, let key = body["key"]?.stringValue,
              let version = body["version"]?.intValue,
              let entry = try? store(group)?.entry(forKey: key), entry.version == version else { return nil }
        return (try? JSONValue(parsing: entry.rawJSON)) ?? .string(entry.rawJSON)
    }

    /// The group's store, opened read-only once (nil when there is no such group).
    private func store(_ group: String) -> SharedDefaults? {
        if let open = stores[group] { return open }
        let opened = try? SharedDefaults(suiteName: group, container: container)
        stores[group] = opened
        return opened
    }
}
