// The stored scalars and lists written as `ValueCoding` stores them, without `SortedJSONEncoder`'s containers.
import BusProtocol
import SortedJSON

// Flags, whole numbers, timestamps and strings are most of what the plugins write to the App Group, several at every
// callback of a monitor: an encoder set up per write, with its boxes and generic containers, costs more than the
// write's bytes. Each writes the encoder's very bytes (`StoredScalarWritingTests` compares the two).

extension Bool: StoredJSONWritable {
    public var storedJSON: [UInt8]? { Array((self ? "true" : "false").utf8) }
}

extension Int: StoredJSONWritable {
    public var storedJSON: [UInt8]? {
        var out: [UInt8] = []
        JSONWriter.writeInteger(Int64(self), into: &out)
        return out
    }
}

extension Double: StoredJSONWritable {
    /// nil for NaN and infinity: the encoder refuses them, and says so.
    public var storedJSON: [UInt8]? {
        var out: [UInt8] = []
        return SortedJSONEncoder.writeNumber(self, into: &out) ? out : nil
    }
}

extension String: StoredJSONWritable {
    public var storedJSON: [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 2)
        JSONWriter.writeString(self, into: &out)
        return out
    }
}

extension Array: StoredJSONWritable where Element: StoredJSONWritable {
    /// nil when an element leaves its text to the encoder.
    public var storedJSON: [UInt8]? {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, element) in enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard let text = element.storedJSON else { return nil }
            out.append(contentsOf: text)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}
