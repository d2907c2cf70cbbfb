import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

// A monitored activity's registration is saved again at every interval start and every threshold callback, on the
// broker's loop. Its schedule and events (date components, sets of tokens) are most of its encoding and change only
// with a new registration: they are encoded once and kept (`Forms`), the rest written byte by byte around them — the
// very bytes `DeviceAPICoding.encode` writes for the whole (keys sorted, absent optionals left out, dates in
// milliseconds), which `DevicePartsTests` checks over many values.

extension DeviceActivityService.Registration {
    /// The encodings of a registration's schedule and events, with the values they encode.
    struct Forms {
        let schedule: DeviceActivitySchedule
        let events: [DeviceActivityEvent.Name: DeviceActivityEvent]
        let scheduleJSON: [UInt8]
        let eventsJSON: [UInt8]

        init(_ registration: DeviceActivityService.Registration) {
            schedule = registration.schedule
            events = registration.events
            scheduleJSON = DeviceAPICoding.encode(schedule)
            eventsJSON = DeviceAPICoding.encode(events)
        }

        /// Whether these are the encodings of `registration`'s schedule and events.
        func encode(_ registration: DeviceActivityService.Registration) -> Bool {
            registration.schedule == schedule && registration.events == events
        }
    }

    /// `DeviceAPICoding.encode(self)`'s bytes, its schedule and events taken from `forms` (made for equal values).
    func json(_ forms: Forms) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(forms.scheduleJSON.count + forms.eventsJSON.count + 256)
        out.append(contentsOf: #"{"activity":"#.utf8)
        JSONWriter.writeString(activity.rawValue, into: &out)
        if let deliveredCrossings {
            out.append(contentsOf: #","deliveredCrossings":["#.utf8)
            for (index, crossing) in deliveredCrossings.enumerated() {
                out.append(contentsOf: (index == 0 ? #"{"callback":"# : #",{"callback":"#).utf8)
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
        out.append(contentsOf: forms.eventsJSON)
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
        out.append(contentsOf: forms.scheduleJSON)
        if let startedInterval {
            out.append(contentsOf: #","startedInterval":"#.utf8)
            JSONWriter.writeInteger(busTime(startedInterval), into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
