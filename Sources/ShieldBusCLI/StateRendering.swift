import AppGroupStore
import BusProtocol
import DeviceAPI
import Foundation

/// App-Group entries and changes as people read them (aligned text) and as programs read them (JSON).
enum StateRendering {
    /// A stored value as a JSON value (the store keeps JSON text).
    static func value(of entry: StoredEntry) -> JSONValue {
        (try? JSONValue(parsing: entry.rawJSON)) ?? .string(entry.rawJSON)
    }

    /// An entry with its bookkeeping, for `--json`.
    static func json(_ entry: StoredEntry) -> JSONValue {
        [
            "key": .string(entry.key), "type": .string(entry.typeTag), "version": .int(entry.version),
            "writer": .string(entry.writer), "updatedAt": .int(busTime(entry.updatedAt)), "value": value(of: entry),
        ]
    }

    /// A change from the change log, for `--json`; `entry` is the key's entry now, whose value is shown only
    /// when it is still the one this change wrote.
    static func json(_ change: StoreChange, now entry: StoredEntry?) -> JSONValue {
        var object: [String: JSONValue] = [
            "group": .string(change.group), "change": .int(change.sequence), "key": .string(change.key),
            "writer": .string(change.writer), "version": .int(change.version), "removed": .bool(change.removed),
            "time": .int(busTime(change.timestamp)),
        ]
        if let entry, entry.version == change.version { object["value"] = value(of: entry) }
        return .object(object)
    }

    /// One group's entries as a table.
    /// A key written by several plugins is marked, and listed with its writers after the table.
    static func table(group: String, entries: [StoredEntry], writers: [String: [String]] = [:], in zone: TimeZone) -> [String] {
        var lines = ["\(group) (\(entries.count) key\(entries.count == 1 ? "" : "s"))"]
        guard !entries.isEmpty else { return lines }
        let rows = [["KEY", "TYPE", "VERSION", "WRITER", "UPDATED", "VALUE"]] + entries.map { entry in
            [entry.key, entry.typeTag, String(entry.version), entry.writer + ((writers[entry.key]?.count ?? 0) > 1 ? " *" : ""),
             timestamp(entry.updatedAt, in: zone), shortened(entry.rawJSON)]
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max()! + 2 }
        for row in rows {
            lines.append("  " + zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined() + row[5])
        }
        let shared = entries.filter { (writers[$0.key]?.count ?? 0) > 1 }
        if !shared.isEmpty {
            lines.append("  * written by several plugins (allowed, as on iOS; declare such keys under the group's `shared:` if that is meant):")
            lines += shared.map { "    \($0.key): \(writers[$0.key]!.joined(separator: ", "))" }
        }
        return lines
    }

    /// One change as a line: time, group, key, version, writer, and the value it wrote (when still current).
    static func line(_ change: StoreChange, now entry: StoredEntry?, in zone: TimeZone) -> String {
        let what: String
        if change.removed {
            what = "removed"
        } else if let entry, entry.version == change.version {
            what = "= " + shortened(entry.rawJSON)
        } else {
            what = "(overwritten since)"
        }
        return "\(timestamp(change.timestamp, in: zone))  \(change.group)  \(change.key)  v\(change.version) by \(change.writer)  \(what)"
    }

    /// A store time (bus time for plugins' writes) as ISO 8601 in the device's zone, with its offset, to the millisecond.
    static func timestamp(_ date: Date, in zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    private static func shortened(_ text: String, limit: Int = 80) -> String {
        text.count > limit ? String(text.prefix(limit - 1)) + "…" : text
    }
}
