import DeviceAPI
import Foundation
import SQLite

/// The device's own persistent state — tokens, authorization, ManagedSettings stores, monitored activities —
/// in one SQLite file, so it survives a broker (device) restart.
final class DeviceStateStore {
    private let connection: SQLiteConnection
    let path: String

    init(path: String) throws {
        self.path = path
        connection = try SQLiteConnection(path: path, flags: [.readWrite, .create])
        try connection.enableWAL()
        try connection.execute("CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, json TEXT NOT NULL) WITHOUT ROWID")
    }

    /// A stored value, or nil. A value that no longer decodes is an error, never silently dropped.
    func load<T: Decodable>(_ type: T.Type, key: String) throws -> T? {
        let statement = try connection.prepare("SELECT json FROM state WHERE key = ?", bindings: [.text(key)])
        guard try statement.step(), let json = try statement.string(at: 0) else { return nil }
        return try DeviceAPICoding.decode(type, from: Array(json.utf8))
    }

    func save<T: Encodable>(_ value: T, key: String) throws {
        let json = String(decoding: DeviceAPICoding.encode(value), as: UTF8.self)
        try connection.prepare("INSERT INTO state (key, json) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET json = excluded.json",
                               bindings: [.text(key), .text(json)]).run()
    }

    /// Removes everything (a fresh device).
    func erase() throws {
        try connection.execute("DELETE FROM state")
    }
}
