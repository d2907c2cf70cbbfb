// RegistrationReading: the stored DeviceActivity registrations read without `JSONDecoder`, as a broker that restarts reads them.
import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime

extension DeviceActivityService.Registration {
    /// The registration as `JSONDecoder` decodes `DeviceAPICoding.encode(self)`'s bytes, or nil: a broker crashed or
    /// restarted in a scenario reads every registration back, and `Codable`'s generic containers cost most of that.
    /// Nil from anything it does not read exactly as the decoder does (a time zone in a schedule's components, a
    /// date that is not whole milliseconds, a value of another type), which then goes to the decoder.
    /// `RegistrationWritingTests` compares it with the decoder.
    init?(json: JSONValue) {
        guard case .string(let activity)? = json["activity"], let schedule = json["schedule"].flatMap(DeviceActivitySchedule.init(json:)),
              case .object(let members)? = json["events"], let registeredAt = Self.date(json["registeredAt"]),
              let startedInterval = Self.optional(json["startedInterval"], Self.date), let pendingStart = Self.optional(json["pendingStart"], Self.date),
              let product = Self.optional(json["product"], { $0.stringValue }),
              let deliveredCrossings = Self.optional(json["deliveredCrossings"], Self.crossings) else { return nil }
        var events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:]
        for (name, value) in members {
            guard let event = DeviceActivityEvent(json: value) else { return nil }
            events[DeviceActivityEvent.Name(rawValue: name)] = event
        }
        self.init(activity: DeviceActivityName(rawValue: activity), schedule: schedule, events: events, registeredAt: registeredAt,
                  startedInterval: startedInterval, pendingStart: pendingStart, product: product, deliveredCrossings: deliveredCrossings)
    }

    /// The registrations stored under `key` (a JSON array of them), each read as `init(json:)` reads it; when one is not,
    /// all of them as `state.load` decodes them (the same bytes), with its errors.
    static func load(from state: DeviceStateStore, key: String) throws -> [Self] {
        guard let bytes = try state.storedJSON(key: key) else { return [] }
        if case .array(let elements)? = try? JSONValue(parsing: bytes) {
            let read = elements.compactMap(Self.init(json:))
            if read.count == elements.count { return read }
        }
        return try state.decode([Self].self, json: bytes, key: key)
    }

    /// A date as `DeviceAPICoding`'s decoder reads it: whole milliseconds since 1970.
    private static func date(_ value: JSONValue?) -> Date? {
        guard case .int(let milliseconds)? = value else { return nil }
        return DeviceAPI.date(busTime: milliseconds)
    }

    private static func crossings(_ value: JSONValue) -> [ThresholdCrossing]? {
        guard case .array(let elements) = value else { return nil }
        var crossings: [ThresholdCrossing] = []
        crossings.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let event)? = element["event"], case .string(let callback)? = element["callback"],
                  let kind = ThresholdCrossing.Callback(rawValue: callback), let date = date(element["date"]) else { return nil }
            crossings.append(ThresholdCrossing(event: DeviceActivityEvent.Name(rawValue: event), callback: kind, date: date))
        }
        return crossings
    }

    /// An optional member as `decodeIfPresent` reads it: absent or null is nil, anything else must read as `read` reads it.
    private static func optional<T>(_ value: JSONValue?, _ read: (JSONValue) -> T?) -> T?? {
        switch value {
        case nil, .null?: return .some(nil)
        case let present?: return read(present).map { .some($0) }
        }
    }
}
