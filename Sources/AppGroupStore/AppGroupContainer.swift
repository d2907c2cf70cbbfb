// Crash-safe, multi-process shared state standing in for iOS App-Group UserDefaults: the folder of app groups.
import Foundation
import SQLite

/// A folder holding one SQLite store per app group, in WAL mode.
///
/// Stands in for the App-Group containers that iOS shares between an app and its extensions: each group is a folder
/// of its own, `<root>/<group>/` (what `containerURL(forSecurityApplicationGroupIdentifier:)` gives), with its
/// defaults where iOS keeps a suite's, `Library/Preferences/<group>.sqlite`. One folder per group is what lets a
/// sandbox show a plugin its own groups and nothing of the others: a store's write-ahead log and shared-memory
/// files come and go beside it, so a store cannot be shown file by file.
/// Groups exist only once created (by the broker, from configuration), so a misspelled
/// suite name is an error instead of iOS's silent nil.
public struct AppGroupContainer: Sendable {
    /// Where the stores are in the root folder.
    public enum Layout: Sendable {
        /// `<root>/<group>/Library/Preferences/<group>.sqlite`: the device's App Groups.
        case groupContainers
        /// `<root>/<name>.sqlite`: stores that need no container of their own (a plugin's `UserDefaults.standard`,
        /// already in its container's `Library/Preferences`).
        case flat
    }

    /// The folder holding the stores, as a path: the stores' paths are joined from it as text (`URL`'s
    /// `appendingPathComponent` and `path` weigh on a short-lived extension's launch).
    public let rootPath: String
    /// The folder holding the stores.
    public var root: URL { URL(fileURLWithPath: rootPath) }
    /// How long an operation waits for another writer's lock before `AppGroupStoreError.busy`.
    public let busyTimeout: TimeInterval
    public let layout: Layout

    /// A container at the folder `rootPath` (created with the first group).
    public init(rootPath: String, layout: Layout = .groupContainers, busyTimeout: TimeInterval = 5) {
        self.rootPath = rootPath
        self.layout = layout
        self.busyTimeout = busyTimeout
    }

    /// A container at `root` (created with the first group).
    public init(root: URL, layout: Layout = .groupContainers, busyTimeout: TimeInterval = 5) {
        self.init(rootPath: root.path, layout: layout, busyTimeout: busyTimeout)
    }

    /// The folder of app group `name`: its container, which holds its store (the root itself in the flat layout).
    public func groupFolder(_ name: String) throws -> String {
        try GroupName.validate(name)
        switch layout {
        case .groupContainers: return rootPath + "/" + name
        case .flat: return rootPath
        }
    }

    /// The store file of app group `name`.
    public func storeURL(forGroup name: String) throws -> URL {
        URL(fileURLWithPath: try storePath(forGroup: name))
    }

    /// The store file's path.
    func storePath(forGroup name: String) throws -> String {
        try GroupName.validate(name)
        switch layout {
        case .groupContainers: return rootPath + "/" + name + Self.preferencesFolder + "/" + name + Self.fileExtension
        case .flat: return rootPath + "/" + name + Self.fileExtension
        }
    }

    /// Creates app group `name`, or does nothing if it exists; a damaged existing store throws `corruptStore`.
    /// Returns what an existing store lost to the machine's restart (a power cut), which the caller says: nil when
    /// it lost nothing. Only the first opener after the restart learns it (the note is brought down to the store).
    @discardableResult
    public func createGroup(_ name: String) throws -> String? {
        let path = try storePath(forGroup: name)
        // The group's folders are the owner's alone, as the root is (their names say which groups exist).
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        return try GroupDatabase(group: name, path: path, busyTimeout: busyTimeout, create: true).restartLoss
    }

    /// The names of the existing app groups, sorted.
    public func groups() throws -> [String] {
        guard FileManager.default.fileExists(atPath: rootPath) else { return [] }
        let names = try FileManager.default.contentsOfDirectory(atPath: rootPath)
        switch layout {
        case .groupContainers:
            return names.filter { (try? GroupName.validate($0)) != nil && FileManager.default.fileExists(atPath: (try? storePath(forGroup: $0)) ?? "") }.sorted()
        case .flat:
            return names.filter { $0.hasSuffix(Self.fileExtension) }
                .map { String($0.dropLast(Self.fileExtension.count)) }
                .filter { (try? GroupName.validate($0)) != nil }
                .sorted()
        }
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

    /// Moves stores kept in the flat layout (`<root>/<group>.sqlite` with its `-wal`, `-shm` and `-committed` files,
    /// and the group's files in `<root>/<group>.container/`) into their groups' folders, so that a state folder kept
    /// from before groups had folders of their own is read, not taken for new groups. Returns the groups moved.
    /// Call it before any process opens the stores.
    @discardableResult
    public func moveFlatStoresIntoGroupFolders() throws -> [String] {
        precondition(layout == .groupContainers, "only the device's App Groups have folders of their own")
        let files = FileManager.default
        guard files.fileExists(atPath: rootPath) else { return [] }
        let flat = AppGroupContainer(rootPath: rootPath, layout: .flat, busyTimeout: busyTimeout)
        var moved: [String] = []
        for group in try flat.groups() {
            let from = try flat.storePath(forGroup: group), to = try storePath(forGroup: group)
            guard !files.fileExists(atPath: to) else {
                throw AppGroupStoreError.corruptStore(path: from, detail: "the group's store is also at \(to): keep the one that is the device's and remove the other")
            }
            try files.createDirectory(atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try StoreFiles.move(from, to: to)
            let oldContainer = rootPath + "/" + group + ".container"
            for name in (try? files.contentsOfDirectory(atPath: oldContainer)) ?? [] {
                try files.moveItem(atPath: oldContainer + "/" + name, toPath: rootPath + "/" + group + "/" + name)
            }
            if files.fileExists(atPath: oldContainer) { try files.removeItem(atPath: oldContainer) }
            moved.append(group)
        }
        return moved
    }

    private static let fileExtension = ".sqlite"
    private static let preferencesFolder = "/Library/Preferences"
}
