import BusProtocol
@testable import ReferenceKit
import XCTest

/// The product plugins' options, read from their JSON without `Codable`: the defaults, and a clear error naming the
/// key and what was expected for every way they can be wrong.
final class ProductOptionsTests: XCTestCase {
    func read(_ json: String) throws -> ProductOptions {
        try ProductOptions(json: JSONValue(parsing: json))
    }

    func assertRefused(_ json: String, _ expected: PluginOptionsError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try read(json), file: file, line: line) { error in
            XCTAssertEqual(error as? PluginOptionsError, expected, file: file, line: line)
        }
    }

    func testEveryOptionIsReadAndTheRestDefault() throws {
        let defaults = try read(#"{"product":"habit-lock","appGroup":"group.a"}"#)
        XCTAssertEqual(defaults.product, .habitLock)
        XCTAssertEqual(defaults.appGroup, "group.a")
        XCTAssertEqual([defaults.habitsPerDay, defaults.unlockMinutes, defaults.passMinutes, defaults.thresholdMinutes, defaults.cooldownMinutes], [3, 30, 5, 30, 15])
        XCTAssertEqual(defaults.store, "lock")
        XCTAssertNil(defaults.icon)
        XCTAssertEqual(defaults.focusHours, [])

        let all = try read("""
            {"product":"focus-window","appGroup":"group.b","store":"focus","habitsPerDay":4,"unlockMinutes":20,"passMinutes":7,
             "thresholdMinutes":45,"cooldownMinutes":10,"icon":"moon.png","focusHours":[{"start":"09:00","end":"12:30"},{"start":"22:00","end":"02:00"}]}
            """)
        XCTAssertEqual(all.product, .focusWindow)
        XCTAssertEqual(all.store, "focus")
        XCTAssertEqual([all.habitsPerDay, all.unlockMinutes, all.passMinutes, all.thresholdMinutes, all.cooldownMinutes], [4, 20, 7, 45, 10])
        XCTAssertEqual(all.icon, "moon.png")
        XCTAssertEqual(all.focusHours, [.init(start: ClockTime("09:00")!, end: ClockTime("12:30")!), .init(start: ClockTime("22:00")!, end: ClockTime("02:00")!)])
        XCTAssertEqual(try read(#"{"product":"speed-bump","appGroup":"g","icon":null}"#).icon, nil, "null reads as absent")
    }

    func testAWrongOptionIsNamedWithWhatWasExpected() {
        let allowed = ProductOptions.Key.allCases.map(\.rawValue)
        assertRefused(#"{"product":"habit-lock","appGroup":"g","unlockMinuts":5,"zz":1}"#, .unknownKey("unlockMinuts", in: "the product's options", allowed: allowed))
        assertRefused(#"{"appGroup":"g"}"#, .invalid(key: "product", problem: "missing"))
        assertRefused(#"{"product":"habit-lock"}"#, .invalid(key: "appGroup", problem: "missing"))
        assertRefused(#"{"product":"doom","appGroup":"g"}"#, .invalid(key: "product", problem: "'doom' is not one of habit-lock, focus-window, speed-bump"))
        assertRefused(#"{"product":"habit-lock","appGroup":"g","habitsPerDay":"three"}"#, .invalid(key: "habitsPerDay", problem: "expected a whole number, found string"))
        assertRefused(#"{"product":"habit-lock","appGroup":"g","unlockMinutes":2.5}"#, .invalid(key: "unlockMinutes", problem: "expected a whole number, found 2.5"))
        assertRefused(#"{"product":"habit-lock","appGroup":"g","store":5}"#, .invalid(key: "store", problem: "expected a string, found number"))
        assertRefused(#"{"product":"focus-window","appGroup":"g","focusHours":{"start":"09:00"}}"#, .invalid(key: "focusHours", problem: "expected a list, found object"))
        assertRefused(#"{"product":"focus-window","appGroup":"g","focusHours":[{"start":"09:00","end":"12:00"},{"start":"25:00","end":"12:00"}]}"#,
                      .invalid(key: "focusHours[1].start", problem: "'25:00' is not a time of day; expected HH:MM like 22:30"))
        assertRefused(#"{"product":"focus-window","appGroup":"g","focusHours":[{"start":"09:00"}]}"#, .invalid(key: "focusHours[0].end", problem: "missing"))
        assertRefused(#"{"product":"focus-window","appGroup":"g","focusHours":["09:00"]}"#, .invalid(key: "focusHours[0]", problem: "expected an object, found string"))
        assertRefused(#"["habit-lock"]"#, .invalid(key: "options", problem: "expected an object, found array"))
    }

    /// An integer option written as a number with a fraction or an exponent is read when its value is whole and
    /// fits (as `JSONDecoder` read it); a fraction or a number out of range is refused with its key path, the same
    /// words for every plugin's options (one reader: `OptionsObject.integer`).
    func testAWholeNumberWrittenAsADecimalIsReadAndAFractionOrOutOfRangeIsRefused() throws {
        let product = try read(#"{"product":"habit-lock","appGroup":"g","unlockMinutes":35.0,"habitsPerDay":3.5e1,"passMinutes":-0.0,"thresholdMinutes":9.0e15}"#)
        XCTAssertEqual([product.unlockMinutes, product.habitsPerDay, product.passMinutes, product.thresholdMinutes], [35, 35, 0, 9_000_000_000_000_000])
        assertRefused(#"{"product":"habit-lock","appGroup":"g","unlockMinutes":35.5}"#, .invalid(key: "unlockMinutes", problem: "expected a whole number, found 35.5"))
        assertRefused(#"{"product":"habit-lock","appGroup":"g","unlockMinutes":1e20}"#,
                      .invalid(key: "unlockMinutes", problem: "expected a whole number from -9223372036854775808 to 9223372036854775807, found 1e+20"))
        assertRefused(#"{"product":"habit-lock","appGroup":"g","unlockMinutes":9007199254740993.0}"#,
                      .invalid(key: "unlockMinutes", problem: "expected a whole number from 2^53 on written without a fraction or an exponent, found 9007199254740992.0"))

        let rule = #"{"on":"shield.shown","kind":"k","title":"t","body":"b"}"#
        let notifier = try NotifierOptions(json: JSONValue(parsing: #"{"appGroup":"g","rules":[\#(rule)],"routeLifetimeMinutes":15.0,"dedupMinutes":6e1}"#))
        XCTAssertEqual([notifier.routeLifetimeMinutes, notifier.dedupMinutes], [15, 60])
        XCTAssertThrowsError(try NotifierOptions(json: JSONValue(parsing: #"{"appGroup":"g","rules":[\#(rule)],"dedupMinutes":0.5}"#))) { error in
            XCTAssertEqual(error as? PluginOptionsError, .invalid(key: "dedupMinutes", problem: "expected a whole number, found 0.5"))
        }

        // Inside an object the key path is named; a narrower integer type names its own range.
        let nested = try OptionsObject(JSONValue(parsing: #"{"limits":{"minutes":300.0,"hours":-1e3}}"#), in: "a test's options", allowed: nil)
        let limits = try XCTUnwrap(nested.object("limits", in: "limits", allowed: nil))
        XCTAssertEqual(try limits.integer("minutes", as: UInt16.self), 300)
        XCTAssertThrowsError(try limits.integer("hours", as: UInt16.self)) { error in
            XCTAssertEqual(error as? PluginOptionsError, .invalid(key: "limits.hours", problem: "expected a whole number from 0 to 65535, found -1000.0"))
        }
        XCTAssertThrowsError(try limits.integer("minutes", as: Int8.self)) { error in
            XCTAssertEqual(error as? PluginOptionsError, .invalid(key: "limits.minutes", problem: "expected a whole number from -128 to 127, found 300.0"))
        }
    }

    /// Days and times of day are written with their leading zeros, as `String(format:)` wrote them.
    func testDaysAndTimesOfDayKeepTheirLeadingZeros() {
        let utc = TimeZone(identifier: "UTC")!
        XCTAssertEqual(DayKey.string(Date(timeIntervalSince1970: 0), in: utc), "1970-01-01")
        XCTAssertEqual(DayKey.string(Date(timeIntervalSince1970: 1_795_000_000), in: utc), "2026-11-18")
        XCTAssertEqual(["00:00", "09:05", "23:59", "12:30"].map { ClockTime($0)!.description }, ["00:00", "09:05", "23:59", "12:30"])
    }
}
