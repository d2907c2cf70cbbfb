import Foundation

/// The DateComponents fields a schedule, a threshold or a warning time may use, in JSON order.
enum ScheduleComponent: String, CaseIterable, CodingKey {
    case year, month, day, weekday, hour, minute, second

    func value(in components: DateComponents) -> Int? {
        switch self {
        case .year: return components.year
        case .month: return components.month
        case .day: return components.day
        case .weekday: return components.weekday
        case .hour: return components.hour
        case .minute: return components.minute
        case .second: return components.second
        }
    }

    func set(_ value: Int, in components: inout DateComponents) {
        switch self {
        case .year: components.year = value
        case .month: components.month = value
        case .day: components.day = value
        case .weekday: components.weekday = value
        case .hour: components.hour = value
        case .minute: components.minute = value
        case .second: components.second = value
        }
    }

    /// The values each field may take in a schedule.
    var validRange: ClosedRange<Int> {
        switch self {
        case .year: return 1...9999
        case .month: return 1...12
        case .day: return 1...31
        case .weekday: return 1...7
        case .hour: return 0...23
        case .minute, .second: return 0...59
        }
    }
}

extension DateComponents {
    /// The supported fields that are set, in JSON order.
    var scheduleComponentsSet: [ScheduleComponent] {
        ScheduleComponent.allCases.filter { $0.value(in: self) != nil }
    }

    /// The names of set fields outside the supported seven and the time zone, which the compact form can't carry.
    var unsupportedComponentNames: [String] {
        var names: [String] = []
        if calendar != nil { names.append("calendar") }
        if era != nil { names.append("era") }
        if quarter != nil { names.append("quarter") }
        if weekOfMonth != nil { names.append("weekOfMonth") }
        if weekOfYear != nil { names.append("weekOfYear") }
        if yearForWeekOfYear != nil { names.append("yearForWeekOfYear") }
        if weekdayOrdinal != nil { names.append("weekdayOrdinal") }
        if nanosecond != nil { names.append("nanosecond") }
        return names
    }

    /// The fields that make no sense in a length of time (a threshold or a warning time).
    var nonDurationComponentNames: [String] {
        unsupportedComponentNames + (timeZone == nil ? [] : ["timeZone"]) + [ScheduleComponent.year, .month, .weekday]
            .filter { $0.value(in: self) != nil }
            .map(\.rawValue)
    }

    /// The length of time these components describe (days of 24 hours), in seconds.
    ///
    /// Usage thresholds and warning times are amounts of time, not calendar dates, so a day
    /// here is always 86,400 s, even across a daylight saving change.
    public var durationInSeconds: TimeInterval {
        let days = day ?? 0, hours = hour ?? 0, minutes = minute ?? 0, seconds = second ?? 0
        return TimeInterval(((days * 24 + hours) * 60 + minutes) * 60 + seconds)
    }
}

/// Encodes DateComponents compactly as `{"hour":9,"minute":0}`: only the fields that are set.
///
/// Foundation's own encoding carries every field (and the calendar); this one keeps the JSON
/// readable and refuses fields it can't carry rather than dropping them silently.
enum CompactDateComponents {
    static func encode(_ components: DateComponents, to encoder: Encoder) throws {
        if let unsupported = components.unsupportedComponentNames.first {
            throw EncodingError.invalidValue(components, EncodingError.Context(
                codingPath: encoder.codingPath,
                debugDescription: "DateComponents field '\(unsupported)' can't be encoded: use only year, month, day, weekday, hour, minute and second."
            ))
        }
        var container = encoder.container(keyedBy: StringCodingKey.self)
        for component in ScheduleComponent.allCases {
            try container.encodeIfPresent(component.value(in: components), forKey: StringCodingKey(component.rawValue))
        }
        try container.encodeIfPresent(components.timeZone?.identifier, forKey: StringCodingKey(timeZoneKey))
    }

    /// The key of a time zone, by its IANA name (`"timeZone":"Europe/Paris"`).
    static let timeZoneKey = "timeZone"

    static func decode(from decoder: Decoder) throws -> DateComponents {
        let container = try decoder.container(keyedBy: StringCodingKey.self)
        var components = DateComponents()
        for key in container.allKeys {
            if key.stringValue == timeZoneKey {
                let name = try container.decode(String.self, forKey: key)
                guard let zone = TimeZone(identifier: name) else {
                    throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "Unknown time zone '\(name)': use an IANA name such as Europe/Paris.")
                }
                components.timeZone = zone
                continue
            }
            guard let component = ScheduleComponent(stringValue: key.stringValue) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "Unknown date component '\(key.stringValue)': use only year, month, day, weekday, hour, minute, second and timeZone."
                )
            }
            component.set(try container.decode(Int.self, forKey: key), in: &components)
        }
        return components
    }
}

extension DateComponents {
    /// Sets the field the compact form names `name` (`year` … `second`) as `CompactDateComponents.decode` does; false
    /// for any other name (the time zone included), which is left to the decoder. For readers of the compact form
    /// that do not go through `Codable`.
    public mutating func setCompactField(_ name: String, to value: Int) -> Bool {
        guard let component = ScheduleComponent(rawValue: name) else { return false }
        component.set(value, in: &self)
        return true
    }
}

extension DateComponents {
    /// The number fields the compact form writes (`year` … `second`, those set), or nil when a field it refuses is set.
    /// For writers of the compact form that do not go through `Codable`; the time zone is `timeZone?.identifier`.
    public var compactFields: [(name: String, value: Int)]? {
        guard unsupportedComponentNames.isEmpty else { return nil }
        var fields: [(name: String, value: Int)] = []
        for component in ScheduleComponent.allCases {
            if let value = component.value(in: self) { fields.append((component.rawValue, value)) }
        }
        return fields
    }

    /// The compact form's key of a time zone, whose value is its IANA name.
    public static var compactTimeZoneKey: String { CompactDateComponents.timeZoneKey }
}

extension KeyedEncodingContainer {
    /// Encodes DateComponents in the compact form.
    mutating func encodeCompact(_ components: DateComponents, forKey key: Key) throws {
        try CompactDateComponents.encode(components, to: superEncoder(forKey: key))
    }
}

extension KeyedDecodingContainer {
    /// Decodes DateComponents from the compact form.
    func decodeCompact(forKey key: Key) throws -> DateComponents {
        try CompactDateComponents.decode(from: superDecoder(forKey: key))
    }

    /// Decodes DateComponents from the compact form, or nil when the key is missing or null.
    func decodeCompactIfPresent(forKey key: Key) throws -> DateComponents? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeCompact(forKey: key)
    }
}
