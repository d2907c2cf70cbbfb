import AppGroupStore
import BusClient
import DeviceOS
import Foundation

/// Where `shieldbus state` finds the device's app groups (`<state dir>/appgroups`), and which of them a
/// command means.
struct AppGroupStores {
    /// The state folder given, else the one the last broker of the runtime directory used (`<runtime dir>/state` by default).
    let stateDirectory: String
    let container: AppGroupContainer

    init(stateDirectory: String?, runtimeDirectory: String?) {
        self.stateDirectory = stateDirectory ?? RuntimeDirectory.resolve(runtimeDirectory).stateDirectory()
        container = AppGroupContainer(rootPath: self.stateDirectory + "/" + StateFolder.appGroups)
    }

    /// The device's time zone, as its state last ran in (a store's times are shown in it), else UTC (no device known).
    var deviceTimeZone: TimeZone {
        ((try? DeviceOS.timeZone(statePath: stateDirectory + "/device.sqlite")) ?? nil) ?? TimeZone(identifier: "UTC")!
    }

    /// The groups a command about many groups means: the one named (which must exist), else every group.
    func groups(named name: String?) throws -> [String] {
        if let name {
            _ = try open(name)  // the store's error lists the groups that exist
            return [name]
        }
        let all = try container.groups()
        guard !all.isEmpty else { throw CommandFailure(noGroupsMessage) }
        return all
    }

    /// The group a command about one group means: the one named, else the only one there is.
    func group(named name: String?) throws -> String {
        let candidates = try groups(named: name)
        guard candidates.count == 1 else {
            throw CommandFailure("there are \(candidates.count) app groups (\(candidates.joined(separator: ", "))); choose one with --group")
        }
        return candidates[0]
    }

    /// Opens `group`, read-only unless a writer is given.
    func open(_ group: String, writer: String? = nil, clock: @escaping () -> Date = Date.init) throws -> SharedDefaults {
        try SharedDefaults(suiteName: group, container: container, writer: writer, clock: clock)
    }

    /// What to do about groups kept as an older ShieldBus kept them (one file each, which this one does not read), if any.
    var olderLayoutHint: String? {
        let flat = (try? AppGroupContainer(rootPath: container.rootPath, layout: .flat).groups()) ?? []
        guard !flat.isEmpty else { return nil }
        return "the app groups in \(container.rootPath) (\(flat.joined(separator: ", "))) are kept as an older ShieldBus kept them, one file per group: "
            + "start the broker once on this state folder (shieldbus run --keep-state) and it moves each into a folder of its own"
    }

    private var noGroupsMessage: String {
        if let olderLayoutHint { return olderLayoutHint }
        return "no app groups in \(container.rootPath): the broker creates them from the configuration's `appGroups:` when it starts; "
            + "if it keeps its state elsewhere, pass --state-dir (or --runtime-dir)"
    }
}
