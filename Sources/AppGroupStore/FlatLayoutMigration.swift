import Foundation
import SQLite

extension AppGroupContainer {
    /// Moves groups kept in the flat layout — `<root>/<group>.sqlite` with its `-wal`, `-shm` and `-committed` files,
    /// and the group's own files in `<root>/<group>.container/` — into their groups' folders, so that a state folder
    /// kept from before groups had folders of their own is read, not taken for new groups. Returns the groups moved.
    /// Call it before any process opens the stores.
    ///
    /// The old container becomes the group's folder in one rename, then the store moves into it: cut short anywhere,
    /// what is left is found and moved at the next call, and nothing is moved over anything (a name found at both
    /// places is refused, naming both).
    @discardableResult
    public func moveFlatStoresIntoGroupFolders() throws -> [String] {
        precondition(layout == .groupContainers, "only the device's App Groups have folders of their own")
        let files = FileManager.default
        guard files.fileExists(atPath: rootPath) else { return [] }
        let flat = AppGroupContainer(rootPath: rootPath, layout: .flat, busyTimeout: busyTimeout)
        let oldContainers = ((try? files.contentsOfDirectory(atPath: rootPath)) ?? [])
            .filter { $0.hasSuffix(Self.oldContainerExtension) && StoreFiles.isFolder(rootPath + "/" + $0) }
            .map { String($0.dropLast(Self.oldContainerExtension.count)) }
        var moved: [String] = []
        for group in Set(try flat.groups() + oldContainers.filter { (try? GroupName.validate($0)) != nil }).sorted() {
            let folder = try groupFolder(group), oldContainer = rootPath + "/" + group + Self.oldContainerExtension
            if StoreFiles.isFolder(oldContainer) {
                if files.fileExists(atPath: folder) {
                    for name in try files.contentsOfDirectory(atPath: oldContainer) {
                        guard !files.fileExists(atPath: folder + "/" + name) else {
                            throw AppGroupStoreError.corruptStore(path: oldContainer + "/" + name, detail: "the group's folder \(folder) holds \(name) too: keep the one that is the device's and remove the other")
                        }
                        try files.moveItem(atPath: oldContainer + "/" + name, toPath: folder + "/" + name)
                    }
                    try files.removeItem(atPath: oldContainer)
                } else {
                    try files.moveItem(atPath: oldContainer, toPath: folder)
                }
            }
            if StoreFiles.isRegularFile(try flat.storePath(forGroup: group)) {
                do {
                    try StoreFiles.move(try flat.storePath(forGroup: group), to: try storePath(forGroup: group))
                } catch let twice as StoreFiles.FoundTwice {
                    throw AppGroupStoreError.corruptStore(path: twice.old, detail: twice.description)
                }
            }
            moved.append(group)
        }
        return moved
    }

    private static let oldContainerExtension = ".container"
}
