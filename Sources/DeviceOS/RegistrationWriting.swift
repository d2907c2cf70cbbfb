import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

extension DeviceActivityService.Registration {
    /// `DeviceAPICoding.encode(self)`'s bytes, written byte by byte: a registration is written again whenever its
    /// interval starts or ends or a threshold is delivered, and `Codable`'s generic containers cost most of that. Keys
    /// sorted, absent optionals left out, dates in whole milliseconds; a schedule or threshold with a field the compact
    /// form refuses goes to the encoder. `RegistrationWritingTests` compares it with the encoder.
    var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        out.append(contentsOf: #"{"activity":"#.utf8)
        JSONWriter.writeString(activity.rawValue, into: &out)
        if let deliveredCrossings {
            out.append(contentsOf: #","deliveredCrossings":["#.utf8)
            for (index, crossing) in deliveredCrossings.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: #"{"callback":"#.utf8)
                JSONWriter.writeString(crossing.callback.rawValue, into: &out)
                out.append(contentsOf: #","date":"#.utf8)
                JSONWriter.writeInteger(busTime(crossing.date), into: &out)
                out.append(contentsOf: #","event":"#.utf8)
                JSONWriter.writeString(crossing.event.rawValue, into: &out)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(contentsOf: #","events":"#.utf8)
        guard DeviceActivityEvent.writeJSON(events, into: &out) else { return DeviceAPICoding.encode(self) }
        if let pendingStart {
            out.append(contentsOf: #","pendingStart":"#.utf8)
            JSONWriter.writeInteger(busTime(pendingStart), into: &out)
        }
        if let product {
            out.append(contentsOf: #","product":"#.utf8)
            JSONWriter.writeString(product, into: &out)
        }
        out.append(contentsOf: #","registeredAt":"#.utf8)
        JSONWriter.writeInteger(busTime(registeredAt), into: &out)
        out.append(contentsOf: #","schedule":"#.utf8)
        guard schedule.writeJSON(into: &out) else { return DeviceAPICoding.encode(self) }
        if let startedInterval {
            out.append(contentsOf: #","startedInterval":"#.utf8)
            JSONWriter.writeInteger(busTime(startedInterval), into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
