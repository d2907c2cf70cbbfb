import BusProtocol
import Foundation
import ScreenTime

// `deviceactivity.start-monitoring.request` written by the plugins and read by the OS without `Codable`: apps and
// monitors start their schedules at every launch, so the request's encoding and its decoding in the broker's loop are
// paid many times a day, most of it in the generic containers. The writer writes the very bytes
// `DeviceAPICoding.encode` writes (keys sorted, token sets sorted as their type orders them, `warningTime` left out
// when nil); the reader reads what `JSONDecoder` decodes and nil from anything else, which then goes to
// `JSONDecoder`. `MonitoringBodiesTests` checks both against `Codable`.

extension StartMonitoring: JSONWritableRequest {
    /// `DeviceAPICoding.encode(self)`'s bytes. A field the compact form refuses goes to the encoder, which refuses it.
    public var requestBody: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        out.append(contentsOf: #"{"activity":"#.utf8)
        JSONWriter.writeString(activity.rawValue, into: &out)
        out.append(contentsOf: #","events":"#.utf8)
        guard DeviceActivityEvent.writeJSON(events, into: &out) else { return DeviceAPICoding.encode(self) }
        out.append(contentsOf: #","schedule":"#.utf8)
        guard schedule.writeJSON(into: &out) else { return DeviceAPICoding.encode(self) }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

extension StartMonitoring {
    /// The request as `JSONDecoder` decodes it, or nil (a time zone in the schedule's components among what is left
    /// to it).
    public init?(body: JSONValue) {
        guard case .string(let activity)? = body["activity"], let schedule = body["schedule"].flatMap(DeviceActivitySchedule.init(json:)),
              case .object(let members)? = body["events"] else { return nil }
        var events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:]
        for (name, value) in members {
            guard let event = DeviceActivityEvent(json: value) else { return nil }
            events[DeviceActivityEvent.Name(rawValue: name)] = event
        }
        self.init(activity: DeviceActivityName(rawValue: activity), schedule: schedule, events: events)
    }
}

extension DeviceActivitySchedule {
    /// The schedule as `JSONDecoder` decodes it, or nil (a time zone in its components among what is left to it).
    public init?(json: JSONValue) {
        guard case .object = json, let start = json["intervalStart"].flatMap(DateComponents.init(compactJSON:)),
              let end = json["intervalEnd"].flatMap(DateComponents.init(compactJSON:)), case .bool(let repeats)? = json["repeats"],
              let warningTime = ReplyReading.optional(json["warningTime"], DateComponents.init(compactJSON:)) else { return nil }
        self.init(intervalStart: start, intervalEnd: end, repeats: repeats, warningTime: warningTime)
    }

    /// Writes the schedule as it encodes itself; false when a field of its components is one the compact form refuses.
    public func writeJSON(into out: inout [UInt8]) -> Bool {
        out.append(contentsOf: #"{"intervalEnd":"#.utf8)
        guard intervalEnd.writeCompactJSON(into: &out) else { return false }
        out.append(contentsOf: #","intervalStart":"#.utf8)
        guard intervalStart.writeCompactJSON(into: &out) else { return false }
        out.append(contentsOf: (repeats ? #","repeats":true"# : #","repeats":false"#).utf8)
        if let warningTime {
            out.append(contentsOf: #","warningTime":"#.utf8)
            guard warningTime.writeCompactJSON(into: &out) else { return false }
        }
        out.append(UInt8(ascii: "}"))
        return true
    }
}

extension DeviceActivityEvent {
    /// Writes events by name as the encoder writes the dictionary: an object, its keys sorted by their UTF-8 bytes;
    /// false when a threshold has a field the compact form refuses.
    public static func writeJSON(_ events: [Name: DeviceActivityEvent], into out: inout [UInt8]) -> Bool {
        out.append(UInt8(ascii: "{"))
        let names = events.keys.sorted { $0.rawValue.utf8.lexicographicallyPrecedes($1.rawValue.utf8) }
        for (index, name) in names.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(name.rawValue, into: &out)
            out.append(UInt8(ascii: ":"))
            guard events[name]!.writeJSON(into: &out) else { return false }
        }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// Writes the event as it encodes itself; false when a field of its threshold is one the compact form refuses.
    func writeJSON(into out: inout [UInt8]) -> Bool {
        out.append(contentsOf: #"{"applications":"#.utf8)
        Self.writeSorted(applications, into: &out)
        out.append(contentsOf: #","categories":"#.utf8)
        Self.writeSorted(categories, into: &out)
        out.append(contentsOf: (includesPastActivity ? #","includesPastActivity":true"# : #","includesPastActivity":false"#).utf8)
        out.append(contentsOf: #","threshold":"#.utf8)
        guard threshold.writeCompactJSON(into: &out) else { return false }
        out.append(contentsOf: #","webDomains":"#.utf8)
        Self.writeSorted(webDomains, into: &out)
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// A token set as `encodeSorted` writes it: sorted as the token type orders itself.
    private static func writeSorted<Token: StringIdentifier>(_ tokens: Set<Token>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, token) in tokens.sorted().enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(token.rawValue, into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}

extension DateComponents {
    /// The compact form as `CompactDateComponents.decode` reads it, or nil; a time zone is left to it.
    init?(compactJSON json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        var components = DateComponents()
        for (name, value) in members {
            guard case .int(let number) = value, components.setCompactField(name, to: Int(number)) else { return nil }
        }
        self = components
    }

    /// Writes the compact form as `CompactDateComponents.encode` does, its keys sorted; false when a field it refuses is set.
    func writeCompactJSON(into out: inout [UInt8]) -> Bool {
        guard var fields = compactFields.map({ $0.map { (key: $0.name, value: JSONValue.int(Int64($0.value))) } }) else { return false }
        if let zone = timeZone { fields.append((Self.compactTimeZoneKey, .string(zone.identifier))) }
        fields.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        out.append(UInt8(ascii: "{"))
        for (index, field) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(field.key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(field.value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return true
    }
}

/// `familycontrols.authorization.request`, which the companion app makes at every launch: written as the encoder writes
/// it, read as `JSONDecoder` reads it (nil from anything else).
extension AuthorizationRequest: JSONWritableRequest {
    public var requestBody: [UInt8] {
        var out = Array(#"{"member":"#.utf8)
        JSONWriter.writeString(member.rawValue, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    public init?(body: JSONValue) {
        guard case .string(let name)? = body["member"], let member = FamilyControlsMember(rawValue: name) else { return nil }
        self.init(member: member)
    }
}
