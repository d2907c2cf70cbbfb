import CivilCalendar
import Foundation
import XCTest

/// A zone's offset kept for the stretch up to its next transition (`ZoneOffsets`) is the zone's own answer at every
/// instant: around each transition 1900–2100 of zones whose offsets change often or oddly (a whole day skipped, a
/// standard offset moved without daylight saving, a negative daylight saving, half-hour and 45-minute offsets), read
/// forwards, backwards and to and fro across the change; between the changes; after the zone changes,
/// whether named anew or as the process's own zone.
final class ZoneOffsetsTests: XCTestCase {
    private static let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia", "Europe/Moscow",
                                "Africa/Casablanca", "Europe/Dublin", "Pacific/Chatham", "America/Santiago", "Asia/Kathmandu",
                                "Pacific/Kiritimati", "UTC"]
    /// 1900-01-01 and 2100-01-01, UTC.
    private static let first = -2_208_988_800, last = 4_102_444_800

    private static func transitions(in zone: TimeZone) -> [Int] {
        var found: [Int] = []
        while let next = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: TimeInterval(found.last ?? first))),
              next.timeIntervalSince1970 < TimeInterval(last) {
            found.append(Int(next.timeIntervalSince1970))
        }
        return found
    }

    private func assertTheZones(_ instants: [Int], in zone: TimeZone, _ order: String, line: UInt = #line) {
        for instant in instants {
            let own = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
            XCTAssertEqual(ZoneOffsets.offset(of: zone, at: instant), own, "\(zone.identifier) at \(instant), read \(order)", line: line)
        }
    }

    func testEveryReadingAroundEveryTransitionIsTheZones() throws {
        var changes = 0
        for identifier in Self.zones {
            let zone = try XCTUnwrap(TimeZone(identifier: identifier))
            for change in Self.transitions(in: zone) {
                changes += 1
                let around = [-86_400, -3_600, -2, -1, 0, 1, 2, 3_600, 86_400].map { change + $0 }
                ZoneOffsets.forgetAll()
                assertTheZones(around, in: zone, "forwards")
                ZoneOffsets.forgetAll()
                assertTheZones(around.reversed(), in: zone, "backwards")
                ZoneOffsets.forgetAll()
                assertTheZones(zip(around.reversed(), around).flatMap { [$0, $1] }, in: zone, "to and fro")
                // Read again with the stretches on both sides kept.
                assertTheZones(around, in: zone, "again")
            }
        }
        XCTAssertGreaterThan(changes, 1_000, "too few transitions 1900–2100: this host's zone data is missing")
    }

    /// Between its transitions a zone keeps its offset: read every nine days and five hours 1900–2100 (each day of the
    /// week and every fifth hour of the day in turn), and back, each is the zone's.
    func testInstantsBetweenTheTransitionsAreTheZones() throws {
        for identifier in Self.zones {
            let zone = try XCTUnwrap(TimeZone(identifier: identifier))
            let instants = Array(stride(from: Self.first + 1_234, to: Self.last, by: 9 * 86_400 + 5 * 3_600))
            ZoneOffsets.forgetAll()
            assertTheZones(instants, in: zone, "forwards")
            assertTheZones(instants.reversed(), in: zone, "backwards")
        }
    }

    /// Another zone at the same instant is read in that zone, though a stretch of the first holds it; and the first
    /// is still its own afterwards.
    func testAnotherZoneAtTheSameInstantIsThatZones() throws {
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin")), tokyo = try XCTUnwrap(TimeZone(identifier: "Asia/Tokyo"))
        let summer = 1_782_000_000  // 2026-06-21, Berlin at +2 h, Tokyo at +9 h
        ZoneOffsets.forgetAll()
        XCTAssertEqual(ZoneOffsets.offset(of: berlin, at: summer), 7_200)
        XCTAssertEqual(ZoneOffsets.offset(of: tokyo, at: summer), 32_400)
        XCTAssertEqual(ZoneOffsets.offset(of: berlin, at: summer + 60), 7_200)
        XCTAssertEqual(ZoneOffsets.offset(of: tokyo, at: summer + 60), 32_400)
    }

    /// The process's own zone set anew (`TZ`, as the SDK binds the device's zone): `TimeZone.current` is read in the
    /// new zone, whether the stretches were forgotten or not.
    func testTheProcessZoneSetAnewIsReadInTheNewZone() throws {
        let saved = getenv("TZ").map { String(cString: $0) }
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
            NSTimeZone.resetSystemTimeZone()
            ZoneOffsets.forgetAll()
        }
        let summer = 1_782_000_000
        func setProcessZone(_ identifier: String) {
            setenv("TZ", identifier, 1)
            tzset()
            NSTimeZone.resetSystemTimeZone()
        }
        setProcessZone("Europe/Berlin")
        XCTAssertEqual(ZoneOffsets.offset(of: TimeZone.current, at: summer), 7_200)
        XCTAssertEqual(ZoneOffsets.offset(of: TimeZone.autoupdatingCurrent, at: summer), 7_200)
        setProcessZone("America/New_York")
        XCTAssertEqual(ZoneOffsets.offset(of: TimeZone.current, at: summer), -14_400, "kept, not forgotten")
        XCTAssertEqual(ZoneOffsets.offset(of: TimeZone.autoupdatingCurrent, at: summer), -14_400, "kept, not forgotten")
        ZoneOffsets.forgetAll()
        XCTAssertEqual(ZoneOffsets.offset(of: TimeZone.current, at: summer), -14_400)
    }
}
