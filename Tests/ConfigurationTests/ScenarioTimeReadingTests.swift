import Configuration
import Foundation
import XCTest

/// A scenario's times are read byte by byte and resolved from wall-clock seconds; they must be the instants the
/// reading through substrings, Foundation's trimming and the calendar (kept here as the reference) gives.
final class ScenarioTimeReadingTests: XCTestCase {
    // MARK: The reference reading

    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    private static func referenceDateTime(_ text: String) -> LocalDateTime? {
        let halves = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "T" || $0 == " " })
        guard halves.count == 2, let time = LocalDateTime.timeOfDay(String(halves[1])) else { return nil }
        let date = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard date.count == 3, date[0].count == 4, date[1].count == 2, date[2].count == 2,
              date.allSatisfy({ $0.allSatisfy { ("0"..."9").contains($0) } }) else { return nil }
        return LocalDateTime(year: Int(date[0])!, month: Int(date[1])!, day: Int(date[2])!, hour: time.hour, minute: time.minute, second: time.second)
    }

    private static func wallSeconds(_ local: LocalDateTime) -> Double {
        let parts = DateComponents(year: local.year, month: local.month, day: local.day, hour: local.hour, minute: local.minute, second: local.second)
        return utcCalendar.date(from: parts)!.timeIntervalSince1970
    }

    private static func validInstants(_ local: LocalDateTime, in zone: TimeZone) -> [Double] {
        let wall = wallSeconds(local)
        func offset(_ instant: Double) -> Double { Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: instant))) }
        let offsets = Set([wall - 86_400, wall, wall + 86_400].map(offset))
        return offsets.map { wall - $0 }.filter { offset($0) == wall - $0 }
    }

    private static func referenceResolve(_ local: LocalDateTime, in zone: TimeZone) -> Date {
        let wall = wallSeconds(local)
        func offset(_ instant: Double) -> Double { Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: instant))) }
        let offsets = Set([wall - 86_400, wall, wall + 86_400].map(offset))
        if let first = validInstants(local, in: zone).min() { return Date(timeIntervalSince1970: first) }
        var before = wall - offsets.max()!, after = wall - offsets.min()!
        let offsetBefore = offset(before)
        while after - before > 1 {
            let middle = ((before + after) / 2).rounded(.down)
            if offset(middle) == offsetBefore { before = middle } else { after = middle }
        }
        return Date(timeIntervalSince1970: after)
    }

    /// An `at:` as the reference reads it; nil where it reports a mistake.
    private static func referenceInstant(_ given: String, day1: LocalDateTime, zone: TimeZone) -> Date? {
        func wallClock(_ text: String) -> LocalDateTime? {
            if let time = LocalDateTime.timeOfDay(text) { return day1.at(hour: time.hour, minute: time.minute, second: time.second)! }
            if let absolute = referenceDateTime(text) { return absolute }
            let words = text.split(separator: " ")
            if words.count == 3, words[0].lowercased() == "day", let time = LocalDateTime.timeOfDay(String(words[2])) {
                guard let day = Int(words[1]), day >= 1 else { return nil }
                return day1.addingDays(day - 1).at(hour: time.hour, minute: time.minute, second: time.second)!
            }
            return nil
        }
        let text = given.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasSuffix(" second") else { return wallClock(text).map { referenceResolve($0, in: zone) } }
        guard let local = wallClock(String(text.dropLast(" second".count))) else { return nil }
        let valid = validInstants(local, in: zone)
        return valid.count > 1 ? Date(timeIntervalSince1970: valid.max()!) : nil
    }

    // MARK: Date-times

    func testDateTimesReadAsBefore() {
        var random = SeededRandom(seed: 7)
        let alphabet: [Character] = ["0", "1", "2", "3", "9", "-", ":", "T", " ", "t", "é", "x"]
        var texts = ["2026-11-23T06:30", "2026-11-23 06:30:15", "2026-02-29T06:30", "2028-02-29T06:30", "2026-13-01T00:00",
                     "2026-11-23T24:00", "2026-11-23T", "T06:30", "2026-11-23", "2026-11-23T06:30 second", "20261-1-23T06:30",
                     "2026-11-23T06:30T06:30", "0000-01-01T00:00", "0001-01-01T00:00", "9999-12-31T23:59:59", "1582-10-10T12:00",
                     "１２３４-11-23T06:30", "2026-11-23T6:30", " 2026-11-23T06:30", "2026-11-23t06:30", ""]
        for _ in 0..<20_000 {
            var text = Array(texts[Int.random(in: 0..<3, using: &random)])
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let place = Int.random(in: 0..<text.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: text[place] = alphabet.randomElement(using: &random)!
                case 1: text.remove(at: place)
                default: text.insert(alphabet.randomElement(using: &random)!, at: place)
                }
                if text.isEmpty { break }
            }
            texts.append(String(text))
        }
        for text in texts {
            XCTAssertEqual(LocalDateTime(parsing: text), Self.referenceDateTime(text), "'\(text)'")
        }
    }

    // MARK: Step times

    /// Every `at:` of `text` read by the scenario and by the reference, and every step's instant.
    private func assertTimesAsBefore(_ text: String, name: String, zone defaultZone: TimeZone, file: StaticString = #filePath, line: UInt = #line) throws {
        let document = try YAMLValue.parse(text, file: name)
        let scenario = try Scenario.parse(document, catalog: ScenarioTests.catalog, defaultTimeZone: defaultZone)
        let top = try document.mapping()
        let zone = try top["timeZone"].map { TimeZone(identifier: try $0.string())! } ?? defaultZone
        let day1 = Self.referenceDateTime(try top["start"]!.string())!
        var expected: [Date] = []
        for entry in try top["steps"]!.list() {
            let fields = try entry.mapping()
            if let at = fields["at"] {
                expected.append(try XCTUnwrap(Self.referenceInstant(try at.string(), day1: day1, zone: zone), name, file: file, line: line))
            } else {
                let previous = expected.last ?? Self.referenceResolve(day1, in: zone)
                expected.append(previous.addingTimeInterval(Scenario.duration(try fields["after"]!.string())!))
            }
        }
        XCTAssertEqual(scenario.steps.map(\.time), expected, name, file: file, line: line)
        XCTAssertEqual(scenario.start, Self.referenceResolve(day1, in: zone), name, file: file, line: line)
        if let end = top["end"], case let text = try end.string(), !text.hasPrefix("after ") {
            XCTAssertEqual(scenario.end, Self.referenceInstant(text, day1: day1, zone: zone), name, file: file, line: line)
        }
    }

    func testTheShippedScenariosTimesAsBefore() throws {
        let folder = AppCatalogTests.repositoryRoot.appendingPathComponent("Config/scenarios")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".yml") }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 8)
        for name in names {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            try assertTimesAsBefore(text, name: name, zone: ScenarioTests.berlin)
        }
    }

    func testGeneratedDaysTimesAsBefore() throws {
        for seed in UInt64(1)...6 {
            try assertTimesAsBefore(HeavyUserDays(seed: seed, days: 4, profile: "faithful", pace: .heavy).scenario, name: "heavy \(seed)", zone: ScenarioTests.berlin)
            try assertTimesAsBefore(HeavyUserDays(seed: seed, days: 4).scenario, name: "soak \(seed)", zone: ScenarioTests.berlin)
        }
        // Across the year's daylight-saving changes, in a zone whose clocks move by half an hour.
        let year = HeavyUserDays(seed: 2026, days: 365, profile: "faithful", pace: .heavy).scenario
        for zone in ["Australia/Lord_Howe"] {
            try assertTimesAsBefore(year, name: "year in \(zone)", zone: TimeZone(identifier: zone)!)
        }
    }

    /// Written in every form, at the changes of the clocks (a skipped hour, a repeated one and its `second`).
    func testEveryFormAtTheClockChanges() throws {
        let times = ["\"02:30\"", "\"day 1 02:30\"", "\"DAY 1 02:30:00\"", "\"Day  1  02:30\"", "\"day 155 02:30\"", "\"day 155 02:30 second\"",
                     "\"day 155 02:30 SECOND\"", "\" 2026-10-25T02:30 \"", "\"2026-10-25 02:30:59 Second\"", "\"day 155 03:00\"",
                     "\"2027-03-28T02:15\"", "\"day 309 02:15\"", "\"day 309 23:59:59\"", "\"\\tday 310 00:00\\t\""]
        for zone in ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC"] {
            for time in times {
                let text = "name: forms\nstart: 2026-05-24T00:30\ntimeZone: \(zone)\nsteps:\n  - {at: \(time), home: true}\n"
                let document = try YAMLValue.parse(text, file: "forms.yml")
                let reference = Self.referenceInstant(try document.mapping()["steps"]!.list()[0].mapping()["at"]!.string(),
                                                      day1: Self.referenceDateTime("2026-05-24T00:30")!, zone: TimeZone(identifier: zone)!)
                let read = Result { try Scenario.parse(document, catalog: ScenarioTests.catalog, defaultTimeZone: ScenarioTests.berlin).steps[0].time }
                XCTAssertEqual(try? read.get(), reference, "\(time) in \(zone)")
            }
        }
    }

    /// A day past the last a date can name is a mistake in the file, at its line and key.
    func testADayAfterTheYear9999IsRefused() throws {
        let text = "name: far\nstart: 2026-11-23T09:00\nsteps:\n  - {at: \"09:05\", home: true}\n  - {at: \"day 9999999 09:00\", home: true}\n"
        XCTAssertThrowsError(try Scenario.parse(YAMLValue.parse(text, file: "far.yml"), catalog: ScenarioTests.catalog, defaultTimeZone: ScenarioTests.berlin)) {
            XCTAssertEqual(($0 as? ConfigurationError)?.description, "far.yml:5:10: steps[1].at: day 9999999 is after the year 9999")
        }
        let last = "name: far\nstart: 2026-11-23T09:00\nsteps:\n  - {at: \"day 2912117 23:59:59\", home: true}\n"
        let scenario = try Scenario.parse(YAMLValue.parse(last, file: "far.yml"), catalog: ScenarioTests.catalog, defaultTimeZone: TimeZone(identifier: "UTC")!)
        XCTAssertEqual(LocalDateTime(scenario.steps[0].time, in: TimeZone(identifier: "UTC")!).description, "9999-12-31 23:59:59")
    }
}
