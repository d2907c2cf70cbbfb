// Scenario: a simulated user's days (Config/scenarios/*.yml), read and resolved to bus-clock instants for the broker to play.

import Foundation

/// One step of a scenario: an action at an instant.
public struct ScenarioStep: Equatable, Sendable {
    /// When it happens.
    public let time: Date
    /// The line of the step in its file, for messages about it.
    public let line: Int
    public let action: ScenarioAction

    public init(time: Date, line: Int, action: ScenarioAction) {
        self.time = time
        self.line = line
        self.action = action
    }
}

/// A scenario: a user's days, played by the broker on the bus clock.
///
/// ```yaml
/// name: habit-lock-day
/// start: 2026-11-23T06:30        # local, in timeZone; seconds optional
/// timeZone: Europe/Berlin        # optional; default: the configuration's
/// profile: faithful              # optional: faithful | ios-realistic
/// ios: 26.3.1                    # optional: an iOS release whose bugs the device reproduces (IOSRelease)
/// seed: 42                       # optional
/// end: day 1 23:00               # optional (or `after 45m`: after the last step); default: 1 minute after it
/// steps:
///   - {at: "07:05", open: Instagram}
///   - {after: 10m, close: Instagram}
/// ```
///
/// Step times are `at: HH:MM[:SS]` (on the start day), `at: day N HH:MM[:SS]` (day 1 is the start day),
/// `at: YYYY-MM-DDTHH:MM[:SS]`, or `after: <duration>` (`90s`, `10m`, `1h30m`) from the previous step
/// (from `start` for the first). Wall-clock times are resolved by `LocalDateTime.resolve(in:)`: a time skipped
/// when clocks spring forward becomes the instant of the change, a repeated one its first occurrence — or its
/// second with a trailing `second` (`at: "day 1 02:30 second"`).
/// Durations are elapsed time, so `after: 1h` across a change is one real hour.
public struct Scenario: Sendable {
    /// The file it was read from.
    public let file: String
    public let name: String
    public let description: String?
    /// The first instant of the scenario.
    public let start: Date
    /// The time zone the file names, if it names one (otherwise the configuration's applies).
    public let timeZone: TimeZone?
    /// The IANA name the file gave, e.g. `Europe/Berlin`.
    public let timeZoneName: String?
    /// The time zone the scenario's times were resolved in: the file's, else the default given to `parse`.
    public let resolvedTimeZone: TimeZone
    /// `faithful` or `ios-realistic`, if the file chooses one.
    public let profile: String?
    /// The seed for the `ios-realistic` randomness, if the file chooses one.
    public let seed: UInt64?
    /// The iOS release whose bugs the device reproduces, if the file chooses one (`ios:`).
    public let ios: IOSRelease?
    /// When the run stops: never before the last step.
    public let end: Date
    /// In time order.
    public let steps: [ScenarioStep]
    /// What must be true after the run (`expect:`), in file order.
    public let expectations: [ScenarioExpectation]

    /// The fidelity profiles a scenario may choose.
    public static let profiles = Profile.allCases.map(\.rawValue)

    enum Profile: String, CaseIterable {
        case faithful
        case iosRealistic = "ios-realistic"
    }

    /// Reads and validates a scenario file; apps must be in `catalog`, habits among those the products' apps offer;
    /// local times without a `timeZone` in the file are in `defaultTimeZone`.
    public static func load(path: String, catalog: AppCatalog, habits: OfferedHabits = .anyName, defaultTimeZone: TimeZone) throws -> Scenario {
        try parse(YAMLValue.load(path: path), catalog: catalog, habits: habits, defaultTimeZone: defaultTimeZone)
    }

    /// Validates a parsed scenario document and resolves its times to instants.
    public static func parse(_ document: YAMLValue, catalog: AppCatalog, habits: OfferedHabits = .anyName, defaultTimeZone: TimeZone) throws -> Scenario {
        let top = try document.uniqueMapping(allowed: ["name", "description", "start", "timeZone", "profile", "ios", "seed", "end", "steps", "expect"])
        guard let nameValue = top["name"] else { throw document.error("a scenario needs a 'name'") }
        let name = try nameValue.string()
        guard !name.isEmpty else { throw nameValue.error("must not be empty") }

        var zone = defaultTimeZone, zoneName: String?
        if let value = top["timeZone"] {
            zoneName = try value.string()
            zone = try timeZone(named: zoneName!, value)
        }

        guard let startValue = top["start"] else { throw document.error("a scenario needs a 'start' local date-time, e.g. 2026-11-23T06:30") }
        guard let day1 = LocalDateTime(parsing: try startValue.string()) else {
            throw startValue.error("expected a local date-time like 2026-11-23T06:30 (seconds optional), got '\(try startValue.string())'")
        }
        let start = day1.resolve(in: zone)

        let profile = try top["profile"]?.oneOf(Profile.self).rawValue
        let ios = try top["ios"]?.oneOf(IOSRelease.self)

        var seed: UInt64?
        if let value = top["seed"] {
            let text = try value.string().replacingOccurrences(of: "_", with: "")
            guard let number = UInt64(text) else { throw value.error("expected a non-negative whole number, got '\(text)'") }
            seed = number
        }

        guard let stepList = top["steps"] else { throw document.error("a scenario needs 'steps' (a list; may be empty: steps: [])") }
        let days = StartDay(day1, zone: zone)
        var steps: [ScenarioStep] = []
        steps.reserveCapacity(stepList.count)
        for entry in try stepList.elements() {
            var timeKeys: [(String, YAMLValue)] = [], actionKeys: [(String, YAMLValue)] = []
            // Every allowed key but the time names an action.
            for (key, value) in try entry.uniqueMapping(allowed: stepKeys) {
                if key == "at" || key == "after" { timeKeys.append((key, value)) } else { actionKeys.append((key, value)) }
            }
            let time = try stepTime(inFileOrder(timeKeys, keyOrder: ["at", "after"]), entry, after: steps.last, start: start, days: days)
            actionKeys = inFileOrder(actionKeys, keyOrder: ScenarioAction.keys)
            guard let (key, value) = actionKeys.first else {
                throw entry.error("a step needs one action: \(ScenarioAction.keys.joined(separator: ", "))")
            }
            if actionKeys.count > 1 {
                throw actionKeys[1].1.error("a step has exactly one action and this one already has '\(key)'; give '\(actionKeys[1].0)' a step of its own")
            }
            steps.append(ScenarioStep(time: time, line: entry.line, action: try ScenarioAction.parse(key: key, value: value, catalog: catalog, habits: habits)))
        }

        var end = (steps.last?.time ?? start).addingTimeInterval(60)
        if let value = top["end"] {
            let text = try value.string().trimmedOfWhitespace()
            if text.hasPrefix("after ") {
                guard let seconds = duration(String(text.dropFirst("after ".count))) else {
                    throw value.error("expected 'after' and a duration like 45m, got '\(text)'")
                }
                end = (steps.last?.time ?? start).addingTimeInterval(seconds)
            } else {
                end = try instant(value, days: days)
            }
            let last = steps.last.map { ($0.time, "the last step's time (line \($0.line))") } ?? (start, "the start")
            if end < last.0 {
                throw value.error("the end, \(LocalDateTime.describe(end, in: zone)), is before \(last.1), \(LocalDateTime.describe(last.0, in: zone))")
            }
        }

        let expectations = try (top["expect"]?.list() ?? []).map { entry in
            try ScenarioExpectation.parse(entry) { try instant($0, days: days) }
        }

        return Scenario(file: document.file, name: name, description: try top["description"]?.string(), start: start,
                        timeZone: zoneName == nil ? nil : zone, timeZoneName: zoneName, resolvedTimeZone: zone,
                        profile: profile, seed: seed, ios: ios, end: end, steps: steps, expectations: expectations)
    }

    // MARK: Times

    /// The keys a step may have: its time and its action.
    private static let stepKeys = ["at", "after"] + ScenarioAction.keys

    /// A step's instant from its one `at` or `after` (`timeKeys`, in file order); never before the previous step (or the start).
    private static func stepTime(_ timeKeys: [(String, YAMLValue)], _ entry: YAMLValue, after previous: ScenarioStep?, start: Date,
                                 days: StartDay) throws -> Date {
        guard let (key, value) = timeKeys.first else {
            throw entry.error("a step needs a time: 'at' (HH:MM, day N HH:MM, or YYYY-MM-DDTHH:MM) or 'after' (a duration like 10m)")
        }
        if timeKeys.count > 1 { throw timeKeys[1].1.error("a step has one time, 'at' or 'after', not both") }
        let previousTime = previous?.time ?? start
        guard key == "at" else {
            let text = try value.string()
            guard let seconds = duration(text) else {
                throw value.error("expected a duration like 90s, 10m, 2h or 1h30m, got '\(text)'")
            }
            return previousTime.addingTimeInterval(seconds)
        }
        let time = try instant(value, days: days)
        if time < previousTime {
            let what = previous.map { "the previous step's (line \($0.line))" } ?? "the start,"
            throw value.error("\(LocalDateTime.describe(time, in: days.zone)) is before \(what) \(LocalDateTime.describe(previousTime, in: days.zone)); steps must not go back in time")
        }
        return time
    }

    /// The start day and the zone a scenario's wall-clock times are read in.
    struct StartDay {
        let zone: TimeZone
        /// Day 1's midnight in wall-clock seconds (`LocalDateTime.wallSeconds`): a time on day N is found from it by
        /// adding, not through the calendar.
        let midnight: Int

        init(_ day1: LocalDateTime, zone: TimeZone) {
            self.zone = zone
            midnight = day1.wallSeconds - (day1.hour * 3600 + day1.minute * 60 + day1.second)
        }

        /// The last wall-clock second a `LocalDateTime` holds (9999-12-31 23:59:59).
        static let lastWallSecond = LocalDateTime(year: 9999, month: 12, day: 31, hour: 23, minute: 59, second: 59)!.wallSeconds
    }

    /// A step's `at`: a wall-clock time resolved in `zone`; a trailing `second` names the second occurrence of a
    /// time the clocks repeat when they fall back (`at: "02:30 second"`), and is an error for any other time.
    static func instant(_ value: YAMLValue, days: StartDay) throws -> Date {
        let text = try value.string().trimmedOfWhitespace()
        guard endsInSecond(text) else { return LocalDateTime.resolve(wallSeconds: try wallSeconds(value, days: days, text: text), in: days.zone) }
        let local = LocalDateTime(wallSeconds: try wallSeconds(value, days: days, text: String(text.dropLast(" second".count))))
        guard let second = local.resolveSecondOccurrence(in: days.zone) else {
            throw value.error("\(local) happens only once in \(days.zone.identifier); 'second' names the repeated hour when clocks fall back")
        }
        return second
    }

    /// Whether a time ends in ` second`, in any case.
    private static func endsInSecond(_ text: String) -> Bool {
        // No character beyond ASCII lowercases to one of these letters: a text whose last bytes are not them, in any
        // case, does not end so. Where they are, an ASCII text is compared as bytes already.
        func lowercased(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
        guard text.utf8.suffix(7).elementsEqual(" second".utf8, by: { lowercased($0) == $1 }) else { return false }
        return text.utf8.allSatisfy { $0 < 0x80 } || text.lowercased().hasSuffix(" second")
    }

    /// `HH:MM[:SS]` on day 1, `day N HH:MM[:SS]`, or `YYYY-MM-DDTHH:MM[:SS]`, in wall-clock seconds
    /// (`LocalDateTime.wallSeconds`).
    private static func wallSeconds(_ value: YAMLValue, days: StartDay, text: String) throws -> Int {
        if let time = LocalDateTime.timeOfDay(text) { return days.midnight + time.hour * 3600 + time.minute * 60 + time.second }
        if let absolute = LocalDateTime(parsing: text) { return absolute.wallSeconds }
        if let (dayText, time) = dayAndTime(text) {
            guard let day = Int(dayText), day >= 1 else { throw value.error("the day is a number counting from 1 (the start day), got '\(dayText)'") }
            guard day - 1 <= (StartDay.lastWallSecond - days.midnight) / 86_400 else { throw value.error("day \(day) is after the year 9999") }
            return days.midnight + (day - 1) * 86_400 + time.hour * 3600 + time.minute * 60 + time.second
        }
        throw value.error("expected a time: HH:MM[:SS] on the start day, day N HH:MM[:SS], or a local date-time YYYY-MM-DDTHH:MM[:SS]; got '\(text)'")
    }

    /// `day N HH:MM[:SS]`, three words between spaces (`day` in any case): N as written, and the time of day; nil if
    /// the text is not written so.
    private static func dayAndTime(_ text: String) -> (day: String, time: (hour: Int, minute: Int, second: Int))? {
        let bytes = Array(text.utf8)
        var words = (0..<0, 0..<0, 0..<0), count = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] != UInt8(ascii: " ") else { index += 1; continue }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: " ") { index += 1 }
            switch count {
            case 0: words.0 = start..<index
            case 1: words.1 = start..<index
            case 2: words.2 = start..<index
            default: return nil
            }
            count += 1
        }
        let day = bytes[words.0]
        guard count == 3, day.count == 3, day[day.startIndex] | 0x20 == UInt8(ascii: "d"), day[day.startIndex + 1] | 0x20 == UInt8(ascii: "a"),
              day[day.startIndex + 2] | 0x20 == UInt8(ascii: "y"), let time = LocalDateTime.timeOfDay(bytes[words.2]) else { return nil }
        return (String(decoding: bytes[words.1], as: UTF8.self), time)
    }

    /// Seconds in `90s`, `10m`, `2h`, `1h30m`, `1h0m15s`: units in the order h, m, s, each at most once; nil if malformed.
    public static func duration(_ text: String) -> TimeInterval? {
        let units: [(name: Character, seconds: Double)] = [("h", 3600), ("m", 60), ("s", 1)]
        var total = 0.0, digits = "", lastUnit = -1
        for character in text {
            if character.isASCIIDigit {
                digits.append(character)
            } else if let index = units.firstIndex(where: { $0.name == character }), index > lastUnit, let number = Double(digits) {
                total += number * units[index].seconds
                digits = ""
                lastUnit = index
            } else {
                return nil
            }
        }
        return digits.isEmpty && lastUnit >= 0 ? total : nil
    }

    /// `0s`, `90s` as `1m30s`, `1h5m`, `2h0m30s`: whole seconds as `duration(_:)` reads them (what `after:` takes).
    public static func durationText(_ seconds: Int) -> String {
        let h = seconds / 3600, m = seconds % 3600 / 60, s = seconds % 60
        var text = ""
        if h > 0 { text += "\(h)h" }
        if m > 0 || (h > 0 && s > 0) { text += "\(m)m" }
        if s > 0 || text.isEmpty { text += "\(s)s" }
        return text
    }

    // MARK: Helpers

    static func timeZone(named name: String, _ value: YAMLValue) throws -> TimeZone {
        do {
            return try timeZone(named: name)
        } catch let unknown as UnknownTimeZone {
            throw value.error(unknown.description)
        }
    }

    /// A name that is no IANA time zone, with the closest one.
    public struct UnknownTimeZone: Error, CustomStringConvertible {
        public let description: String
    }

    /// tzdata's zones named by an abbreviation rather than a place (CST is three zones, and EST keeps no daylight
    /// saving where the places it abbreviates do), and its files that name no zone of a place.
    static let abbreviationZones: Set<String> = ["CET", "EET", "EST", "HST", "MET", "MST", "WET", "PST", "IST", "BST",
                                                "Factory", "posixrules", "localtime"]

    /// The zone an IANA name (`Europe/Berlin`, `UTC`) names (a scenario's `timeZone`, a tool's input).
    public static func timeZone(named name: String) throws -> TimeZone {
        // Only places' names: abbreviations like CET or offsets like GMT+1 are ambiguous or ignore daylight saving.
        // The known list holds one name per zone and misses names that tzdata keeps as links (Asia/Kolkata beside
        // Asia/Calcutta, Cuba beside America/Havana): any other name of a place the system resolves is a zone too.
        // The known list is costly to build: a place's name is resolved without it.
        let namesAPlace = !name.hasPrefix("Etc/") && !name.hasPrefix("GMT") && !Self.abbreviationZones.contains(name)
            && name.first?.isLetter == true && !name.contains { $0.isNumber }
        if name == "UTC" || namesAPlace || TimeZone.knownTimeZoneIdentifiers.contains(name), let zone = TimeZone(identifier: name) { return zone }
        let suggestion = closest(to: name, in: TimeZone.knownTimeZoneIdentifiers).map { " — did you mean '\($0)'?" } ?? ""
        throw UnknownTimeZone(description: "expected an IANA time zone name like Europe/Berlin, got '\(name)'\(suggestion)")
    }

    /// Keys sorted by where they appear in the file (the parsed mapping has no order), so "the second one" is well
    /// defined; two values at one place (never in a file libyaml read) in `keyOrder`.
    private static func inFileOrder(_ pairs: [(String, YAMLValue)], keyOrder: [String]) -> [(String, YAMLValue)] {
        guard pairs.count > 1 else { return pairs }
        return pairs.sorted {
            ($0.1.line, $0.1.column) != ($1.1.line, $1.1.column) ? ($0.1.line, $0.1.column) < ($1.1.line, $1.1.column)
                : keyOrder.firstIndex(of: $0.0)! < keyOrder.firstIndex(of: $1.0)!
        }
    }
}
