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
    /// Where the stores are in `rootPath`.
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

    /// A new group's store, built once at a scratch name in `folder` and removed: every group created later in this
    /// process has its store written from its bytes (`StoreCreation.remember`), the same file SQLite would build.
    public static func rememberStoreCreation(in folder: String) throws {
        try StoreCreation.remember(schema: GroupDatabase.schema, in: folder)
    }

    /// Creates app group `name`, or does nothing if it exists; a damaged existing store throws `corruptStore`.
    /// `slices`: its slice declarations, replaced as `declareSlices` does, while the store is open (a second open
    /// and close would cost the store's files and flushes again).
    /// Returns what an existing store lost to the machine's restart (a power cut), which the caller says: nil when
    /// it lost nothing. Only the first opener after the restart learns it (the note is brought down to the store).
    @discardableResult
    public func createGroup(_ name: String, slices: [String: [String]]? = nil) throws -> String? {
        let path = try storePath(forGroup: name)
        let table = try slices.map(SliceTable.init(declaring:))
        try refuseSymbolicLinks(group: name)
        // The group's folders are the owner's alone, as the root is (their names say which groups exist).
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let database = try GroupDatabase(group: name, path: path, busyTimeout: busyTimeout, create: true)
        if let table { try database.writeTransaction { try database.replaceSlices(table) } }
        return database.restartLoss
    }

    /// The names of the existing app groups, sorted.
    public func groups() throws -> [String] {
        guard FileManager.default.fileExists(atPath: rootPath) else { return [] }
        switch layout {
        case .groupContainers:
            return try FileManager.default.contentsOfDirectory(atPath: rootPath).filter { (try? GroupName.validate($0)) != nil && FileManager.default.fileExists(atPath: (try? storePath(forGroup: $0)) ?? "") }.sorted()
        case .flat:
            return StoreFiles.stores(in: rootPath, fileExtension: Self.fileExtension).filter { (try? GroupName.validate($0)) != nil }.sorted()
        }
    }

    /// Replaces the slice declarations of app group `group`: writer -> key patterns
    /// (an exact key, or a prefix ending in `*`).
    ///
    /// Slices of different writers may not overlap, and `SharedDefaults.administrator` needs none.
    /// The broker declares them at start from configuration, as it creates the group (`createGroup(_:slices:)`);
    /// writers see the new slices on their next write.
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
        guard try refuseSymbolicLinks(group: name) else {
            throw AppGroupStoreError.unknownSuite(name: name, existing: try groups())
        }
        return try GroupDatabase(group: name, path: path, busyTimeout: busyTimeout, create: false)
    }

    /// Throws `corruptStore` if a part of the group's store (its folders, the store or its companion files) is a
    /// symbolic link. Every process of a group may write in its folder, and a sandbox shows a plugin no other group's:
    /// a link planted there would lead a process that sees them all (the broker, the command line) to another group's
    /// store, or to any file of the user's. Returns whether the store file is there.
    /// Asked of the group's folders at once (`FolderEntries`: no link followed below the root, one read of the
    /// store's folder), and part by part when that cannot tell or finds a link, to name the first one.
    @discardableResult
    public func refuseSymbolicLinks(group name: String) throws -> Bool {
        let store = try storePath(forGroup: name)
        let fileName = name + Self.fileExtension
        let below = layout == .groupContainers ? name + Self.preferencesFolder : ""
        switch FolderEntries.find(StoreFiles.suffixes.map { fileName + $0 }, in: below, under: rootPath) {
        case .found(let found) where !found.hasSymbolicLink:
            return found.isThere(StoreFiles.suffixes.firstIndex(of: "")!)
        case .noFolder:
            return false
        case .found, .cannotTell:
            break
        }
        var parts = StoreFiles.suffixes.map { store + $0 }
        if layout == .groupContainers {
            parts += [rootPath + "/" + name, rootPath + "/" + name + "/Library", rootPath + "/" + name + Self.preferencesFolder]
        }
        if let link = parts.first(where: StoreFiles.isSymbolicLink) {
            throw AppGroupStoreError.corruptStore(path: store, detail: "\(link) is a symbolic link, which no part of a store is: a process of the group may have put it there to reach another store; remove it")
        }
        // By `stat`, as `FileManager.fileExists` asks, without `FileManager.default`'s first use in a launch.
        return FileSize.of(store) != nil
    }

    static let fileExtension = ".sqlite"
    private static let preferencesFolder = "/Library/Preferences"
}
