// Crash-safe, multi-process shared state standing in for iOS App-Group UserDefaults: the folder of app groups.
import Foundation

/// A folder holding one SQLite store per app group: `<root>/<group>.sqlite`, in WAL mode.
///
/// Stands in for the App-Group containers that iOS shares between an app and its extensions.
/// Groups exist only once created (by the broker, from configuration), so a misspelled
/// suite name is an error instead of iOS's silent nil.
public struct AppGroupContainer: Sendable {
    /// The folder holding the stores, as a path: the stores' paths are joined from it as text (`URL`'s
    /// `appendingPathComponent` and `path` weigh on a short-lived extension's launch).
    public let rootPath: String
    /// The folder holding the stores.
    public var root: URL { URL(fileURLWithPath: rootPath) }
    /// How long an operation waits for another writer's lock before `AppGroupStoreError.busy`.
    public let busyTimeout: TimeInterval

    /// A container at the folder `rootPath` (created with the first group).
    public init(rootPath: String, busyTimeout: TimeInterval = 5) {
        self.rootPath = rootPath
        self.busyTimeout = busyTimeout
    }

    /// A container at `root` (created with the first group).
    public init(root: URL, busyTimeout: TimeInterval = 5) {
        self.init(rootPath: root.path, busyTimeout: busyTimeout)
    }

    /// The store file of app group `name`.
    public func storeURL(forGroup name: String) throws -> URL {
        URL(fileURLWithPath: try storePath(forGroup: name))
    }

    /// The store file's path.
    func storePath(forGroup name: String) throws -> String {
        try GroupName.validate(name)
        return rootPath + "/" + name + Self.fileExtension
    }

    /// Creates app group `name`, or does nothing if it exists; a damaged existing store throws `corruptStore`.
    /// Returns what an existing store lost to the machine's restart (a power cut), which the caller says: nil when
    /// it lost nothing. Only the first opener after the restart learns it (the note is brought down to the store).
    @discardableResult
    public func createGroup(_ name: String) throws -> String? {
        let path = try storePath(forGroup: name)
        try FileManager.default.createDirectory(atPath: rootPath, withIntermediateDirectories: true)
        return try GroupDatabase(group: name, path: path, busyTimeout: busyTimeout, create: true).restartLoss
    }

    /// The names of the existing app groups, sorted.
    public func groups() throws -> [String] {
        guard FileManager.default.fileExists(atPath: rootPath) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: rootPath)
            .filter { $0.hasSuffix(Self.fileExtension) }
            .map { String($0.dropLast(Self.fileExtension.count)) }
            .filter { (try? GroupName.validate($0)) != nil }
            .sorted()
    }

    /// Replaces the slice declarations of app group `group`: writer -> key patterns
    /// (an exact key, or a prefix ending in `*`).
    ///
    /// Slices of different writers may not overlap, and `SharedDefaults.administrator` needs none.
    /// The broker calls this at start from configuration; writers see the new slices on their next write.
    public func declareSlices(group: String, _ slices: [String: [String]]) throws {
        let table = try SliceTable(declaring: slices)
        let database = try openGroup(group)
        try database.writeTransaction { try database.replaceSlices(table) }
    }

    /// The slice declarations of app group `group`: writer -> sorted patterns.
    public func slices(group: String) throws -> [String: [String]] {
        let database = try openGroup(group)
        return try database.read { try database.slices().declarations }
    }

    /// Opens an existing group's store; `unknownSuite` (listing the groups) when it does not exist.
    func openGroup(_ name: String) throws -> GroupDatabase {
        let path = try storePath(forGroup: name)
        guard FileManager.default.fileExists(atPath: path) else {
            throw AppGroupStoreError.unknownSuite(name: name, existing: try groups())
        }
        return try GroupDatabase(group: name, path: path, busyTimeout: busyTimeout, create: false)
    }

    private static let fileExtension = ".sqlite"
}
