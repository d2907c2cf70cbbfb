/// The folder of one explore worker whose broker template keeps its plugins' sandboxes across days
/// (`KeptLaunchTemplates`): every day it plays is played here, on the same runtime and state folders and bus socket,
/// which each day empties rather than makes anew (a sandbox binds what exists when it is made).
public struct WorkerFolder: Sendable, Equatable {
    public let path: String

    public init(path: String) { self.path = path }

    public var runtimeDirectory: String { path + "/run" }
    public var stateDirectory: String { path + "/state" }
    /// The bus socket, in a folder of its own that the sandboxes show (`PluginSandbox.Plan.isKeptAcrossDays`).
    public var busFolder: String { runtimeDirectory + "/bus" }
    public var endpoint: String { "ipc://" + busFolder + "/bus.sock" }
}
