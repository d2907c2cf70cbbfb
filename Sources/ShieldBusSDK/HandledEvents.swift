import BusClient
import Foundation
import SQLite

/// The events this plugin has handled, kept across its processes in `<state dir>/cursors/<plugin>.sqlite`.
///
/// The broker delivers again whatever a plugin's process did not acknowledge before it ended (at least once);
/// a process can end after handling an event and before its acknowledgement arrives. Recording each handled
/// event before acknowledging it lets the next process skip it, so the plugin sees every event exactly once.
/// A set rather than a watermark: in virtual time an older event can arrive after a newer reply.
final class HandledEvents {
    /// How many recent sequence numbers are kept; older ones cannot be redelivered any more.
    private static let window: UInt64 = 1_000_000
    private let connection: SQLiteConnection
    private let insert: Statement
    private let lookup: Statement
    private var recorded = 0

    /// The record of a supervised plugin, or nil for a plugin without a state folder (run by hand).
    static func forSupervisedPlugin(named name: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> HandledEvents? {
        guard environment["SHIELDBUS_SUPERVISED"] == "1", let state = environment["SHIELDBUS_STATE_DIR"], !state.isEmpty else { return nil }
        let folder = state + "/" + StateFolder.pluginCursors
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return try HandledEvents(path: folder + "/\(name).sqlite")
    }

    init(path: String) throws {
        connection = try SQLiteConnection(path: path, flags: [.readWrite, .create])
        try connection.enableWAL()
        try connection.execute("CREATE TABLE IF NOT EXISTS handled (seq INTEGER PRIMARY KEY)")
        insert = try connection.prepare("INSERT OR IGNORE INTO handled (seq) VALUES (?)")
        lookup = try connection.prepare("SELECT 1 FROM handled WHERE seq = ?")
    }

    /// Whether an earlier process (or this one) already handled `seq`.
    func contains(_ seq: UInt64) throws -> Bool {
        defer { lookup.reset() }  // so no read stays open between events
        try lookup.bind(Int64(seq), at: 1)
        return try lookup.step()
    }

    func record(_ seq: UInt64) throws {
        insert.reset()
        try insert.bind(Int64(seq), at: 1)
        try insert.run()
        recorded += 1
        if recorded % 10_000 == 0, seq > Self.window {
            try connection.prepare("DELETE FROM handled WHERE seq < ?", bindings: [.integer(Int64(seq - Self.window))]).run()
        }
    }
}
