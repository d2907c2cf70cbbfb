import BusClient
import Foundation
import SQLite

/// The plugins' records of handled events in a state folder (`StateFolder.handledEventsRecord`).
enum HandledEventsRecords {
    /// Moves records kept as `cursors/<plugin>.sqlite` (with their `-wal`, `-shm` and `-committed` files) into the
    /// plugin's folder, so that a state folder kept from before each plugin had a folder of its own is read, not
    /// taken for plugins that handled nothing (which would handle every redelivered event again).
    static func moveFlatRecordsIntoPluginFolders(in stateDirectory: String) throws {
        let files = FileManager.default, folder = stateDirectory + "/" + StateFolder.pluginCursors
        for name in (try? files.contentsOfDirectory(atPath: folder)) ?? [] where name.hasSuffix(".sqlite") {
            let plugin = String(name.dropLast(".sqlite".count))
            let from = folder + "/" + name, to = stateDirectory + "/" + StateFolder.handledEventsRecord(plugin: plugin)
            guard !files.fileExists(atPath: to) else {
                throw RunPlan.Problem(description: "plugin '\(plugin)' has two records of handled events, \(from) and \(to): keep the one that is the device's and remove the other")
            }
            try files.createDirectory(atPath: stateDirectory + "/" + StateFolder.cursorFolder(plugin: plugin), withIntermediateDirectories: true,
                                      attributes: [.posixPermissions: 0o700])
            try StoreFiles.move(from, to: to)
        }
    }
}
