import Foundation

/// The tz-database lane: `SHIELDBUS_ZONES_FULL=1` (`make zones`) checks the date arithmetic on the transitions of every
/// zone the system has from 1970 to 2037, and plays the generated days in every zone whose transitions are unusual;
/// `make test` checks a slice (the zones Foundation lists, two years; a seeded few of the days), so it stays fast.
public enum ZonesLane {
    public static var isFull: Bool { ProcessInfo.processInfo.environment["SHIELDBUS_ZONES_FULL"] == "1" }

    /// The years whose transitions are checked.
    public static var years: ClosedRange<Int> { isFull ? 1970...2037 : 2026...2027 }

    /// Every zone name Foundation knows, the current names tzdata keeps only as links, and in the full lane every zone
    /// file of the system's tz database (`/usr/share/zoneinfo`, its `posix/` and `right/` copies aside), sorted.
    public static var zoneNames: [String] {
        var names = Set(TimeZone.knownTimeZoneIdentifiers + ["Asia/Kolkata", "Europe/Kyiv", "America/Nuuk"])
        if isFull { names.formUnion(tzDatabaseZoneNames()) }
        return names.filter { TimeZone(identifier: $0) != nil }.sorted()
    }

    /// The zones of `zoneNames`.
    public static var zones: [TimeZone] { zoneNames.compactMap(TimeZone.init(identifier:)) }

    /// The names of the zone files (TZif) under `root`.
    public static func tzDatabaseZoneNames(root: String = "/usr/share/zoneinfo") -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var names: [String] = []
        while let path = walker.nextObject() as? String {
            if path == "posix" || path == "right" { walker.skipDescendants(); continue }
            guard let handle = FileHandle(forReadingAtPath: root + "/" + path) else { continue }
            let magic = (try? handle.read(upToCount: 4)) ?? nil
            try? handle.close()
            if magic == Data("TZif".utf8) && path != "posixrules" && path != "localtime" { names.append(path) }
        }
        return names
    }

    /// A zone's transitions (any change of its offset, a daylight-saving one or not) in `years`, UTC years.
    public static func transitions(in zone: TimeZone, years: ClosedRange<Int> = years) -> [Date] {
        var from = span(years).start
        let end = span(years).end
        var found: [Date] = []
        while let next = zone.nextDaylightSavingTimeTransition(after: from), next < end {
            found.append(next)
            from = next
        }
        return found
    }

    /// From the first instant of the first year to the first of the year after the last (UTC).
    public static func span(_ years: ClosedRange<Int> = years) -> DateInterval {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        return DateInterval(start: utc.date(from: DateComponents(year: years.lowerBound, month: 1, day: 1))!,
                            end: utc.date(from: DateComponents(year: years.upperBound + 1, month: 1, day: 1))!)
    }
}
