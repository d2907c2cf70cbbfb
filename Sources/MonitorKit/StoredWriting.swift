// The monitor's stored state written byte by byte: the check chain's plans and the OS's day.
import AppGroupStore
import BusProtocol
import Foundation
import SortedJSON

// A chained check writes the checks planned at its instant, the calls planned and the OS's day at nearly every
// callback, and a new monitor process would first instantiate `SortedJSONEncoder`'s generic containers for each. Each
// writes the encoder's very bytes, keys sorted, dates as seconds (`MonitorStoredWritingTests` compares the two).

extension CheckChain.PlannedChecks: StoredJSONWritable {
    public var storedJSON: [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(64 + 24 * times.count)
        out.append(contentsOf: #"{"plannedAt":"#.utf8)
        guard SortedJSONEncoder.writeNumber(plannedAt, into: &out) else { return nil }
        out.append(contentsOf: #","times":"#.utf8)
        SortedJSONEncoder.writeObject(times, into: &out) { JSONWriter.writeInteger(Int64($0), into: &$1) }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension CheckChain.PlannedCall: StoredJSONWritable {
    public var storedJSON: [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(48 + activity.utf8.count)
        out.append(contentsOf: #"{"activity":"#.utf8)
        JSONWriter.writeString(activity, into: &out)
        out.append(contentsOf: #","at":"#.utf8)
        guard SortedJSONEncoder.writeNumber(at, into: &out) else { return nil }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension OSDay: StoredJSONWritable {
    public var storedJSON: [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(160)
        out.append(contentsOf: #"{"date":"#.utf8)
        JSONWriter.writeInteger(Int64(date), into: &out)
        out.append(contentsOf: #","end":"#.utf8)
        guard SortedJSONEncoder.writeNumber(end.timeIntervalSince1970, into: &out) else { return nil }
        out.append(contentsOf: #","key":"#.utf8)
        JSONWriter.writeString(key, into: &out)
        out.append(contentsOf: #","offsetMs":"#.utf8)
        JSONWriter.writeInteger(offsetMs, into: &out)
        out.append(contentsOf: #","start":"#.utf8)
        guard SortedJSONEncoder.writeNumber(start.timeIntervalSince1970, into: &out) else { return nil }
        out.append(contentsOf: #","zone":"#.utf8)
        JSONWriter.writeString(zone, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
