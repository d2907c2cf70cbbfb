import BusClient
import Foundation
import SQLite

/// The plugins' records of handled events in a state folder (`StateFolder.handledEventsRecord`).
enum HandledEventsRecords {
    /// Moves records kept as `cursors/<plugin>.sqlite` (with their `-wal`, `-shm` and `-committed` files) into the
    /// plugin's folder, so that a state folder kept from before each plugin had a folder of its own is read, not
    /// taken for plugins that handled nothing (which would handle every redelivered event again).
    static func moveFlatRecordsIntoPluginFolders(in stateDirectory: String) throws {
        let folder = stateDirectory + "/" + StateFolder.pluginCursors
        for plugin in StoreFiles.stores(in: folder, fileExtension: ".sqlite") {
            do {
                try StoreFiles.move(folder + "/" + plugin + ".sqlite", to: stateDirectory + "/" + StateFolder.handledEventsRecord(plugin: plugin))
            } catch let twice as StoreFiles.FoundTwice {
                throw RunPlan.Problem(description: "plugin '\(plugin)' has two records of handled events: \(twice)")
            }
        }
    }
}
