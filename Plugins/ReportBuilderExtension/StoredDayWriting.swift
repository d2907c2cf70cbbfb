import BusProtocol
import Foundation
import ShieldBusSDK
import SortedJSON
import UsageReports

// The stored day written byte by byte: the report builder writes the touched day at every event it records, where
// `SortedJSONEncoder`'s generic containers cost more than the rest of its handling. The bytes are the encoder's, keys
// sorted, absent optionals left out, dates as seconds (`StoredDayWritingTests` compares the two over many days).

extension DayUsage: StoredJSONWritable {
    public var storedJSON: [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(1_536)
        out.append(contentsOf: #"{"appCategories":"#.utf8)
        SortedJSONEncoder.writeObject(appCategories, into: &out) { JSONWriter.writeString($0, into: &$1) }
        out.append(contentsOf: #","appSeconds":"#.utf8)
        guard StoredJSON.writeNumbers(appSeconds, into: &out) else { return nil }
        out.append(contentsOf: #","categorySeconds":"#.utf8)
        guard StoredJSON.writeNumbers(categorySeconds, into: &out) else { return nil }
        out.append(contentsOf: #","day":"#.utf8)
        JSONWriter.writeString(day.description, into: &out)
        if let firstPickup {
            out.append(contentsOf: #","firstPickup":{"app":"#.utf8)
            JSONWriter.writeString(firstPickup.app, into: &out)
            out.append(contentsOf: #","at":"#.utf8)
            guard SortedJSONEncoder.writeNumber(firstPickup.at.timeIntervalSince1970, into: &out) else { return nil }
            out.append(contentsOf: #","clockTime":"#.utf8)
            JSONWriter.writeString(firstPickup.clockTime, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #","gracePassesUsed":"#.utf8)
        JSONWriter.writeInteger(Int64(gracePassesUsed), into: &out)
        out.append(contentsOf: #","hourlySeconds":["#.utf8)
        for (index, seconds) in hourlySeconds.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard SortedJSONEncoder.writeNumber(seconds, into: &out) else { return nil }
        }
        out.append(contentsOf: #"],"notifications":"#.utf8)
        StoredJSON.writeCounts(notifications, into: &out)
        out.append(contentsOf: #","nudgesUsed":"#.utf8)
        JSONWriter.writeInteger(Int64(nudgesUsed), into: &out)
        out.append(contentsOf: #","pickups":"#.utf8)
        StoredJSON.writeCounts(pickups, into: &out)
        out.append(contentsOf: #","shieldEncounters":"#.utf8)
        StoredJSON.writeCounts(shieldEncounters, into: &out)
        out.append(contentsOf: #","timeZoneIdentifier":"#.utf8)
        JSONWriter.writeString(timeZoneIdentifier, into: &out)
        out.append(contentsOf: #","webDomainSeconds":"#.utf8)
        guard StoredJSON.writeNumbers(webDomainSeconds, into: &out) else { return nil }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// The pieces the stored values are written from, as `SortedJSONEncoder` writes them.
enum StoredJSON {
    /// False when a value is NaN or infinite, which the encoder refuses.
    static func writeNumbers(_ members: [String: Double], into out: inout [UInt8]) -> Bool {
        var finite = true
        SortedJSONEncoder.writeObject(members, into: &out) { finite = SortedJSONEncoder.writeNumber($0, into: &$1) && finite }
        return finite
    }

    static func writeCounts(_ members: [String: Int], into out: inout [UInt8]) {
        SortedJSONEncoder.writeObject(members, into: &out) { JSONWriter.writeInteger(Int64($0), into: &$1) }
    }
}
