import BusProtocol
import Configuration
import DeviceAPI
@testable import DeviceOS
import Foundation
import ScreenTime
import ShieldBusTestSupport
import XCTest

/// A DeviceActivity registration written byte by byte (`Registration.json`) is the very bytes `DeviceAPICoding.encode`
/// writes: over drawn registrations with and without each optional part (an interval started or pending, a product,
/// delivered crossings), escaped names, token sets, every schedule component, time zones, and dates that round to the
/// millisecond either way.
final class RegistrationWritingTests: XCTestCase {
    private struct Draw: RandomNumberGenerator {
        var random: SeededRandom
        init(state: UInt64) { random = SeededRandom(seed: state) }
        mutating func next() -> UInt64 { random.next() }
        static let strings = ["habit-lock.reblock_0", "", "say \"hi\"", "back\\slash", "a/b", "tab\there", "\u{00}\u{1F}", "Café",
                              "e\u{301}", "日本語", "👩‍👩‍👧", "\u{2028}", "Z", "a"]
        mutating func string() -> String { Self.strings.randomElement(using: &self)! }
        mutating func maybe<T>(_ make: (inout Draw) -> T) -> T? { Bool.random(using: &self) ? make(&self) : nil }
        mutating func date() -> Date {
            let seconds = [1_795_000_000.0, 1_795_000_000.0005, 1_795_000_000.0015, 1_795_000_000.123_456, 0, -1.0005, 86_400.999_9]
            return Date(timeIntervalSince1970: seconds.randomElement(using: &self)! + Double(Int.random(in: 0...100_000, using: &self)))
        }
        mutating func components(zone: Bool) -> DateComponents {
            var components = DateComponents()
            for name in ["year", "month", "day", "weekday", "hour", "minute", "second"] where Bool.random(using: &self) {
                _ = components.setCompactField(name, to: [0, 1, 5, 23, 59, 2026, -1].randomElement(using: &self)!)
            }
            if zone, Bool.random(using: &self) { components.timeZone = TimeZone(identifier: ["Europe/Paris", "Asia/Tokyo", "UTC"].randomElement(using: &self)!) }
            return components
        }
        mutating func tokens<T: StringIdentifier>(_ make: (String) -> T) -> Set<T> {
            Set((0..<Int.random(in: 0...3, using: &self)).map { _ in make(string()) })
        }
    }

    /// A registration drawn with and without each optional part.
    private static func registration(_ draw: inout Draw) -> DeviceActivityService.Registration {
        var events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &draw) {
            events[DeviceActivityEvent.Name(draw.string())] = DeviceActivityEvent(
                applications: draw.tokens(ApplicationToken.init(rawValue:)), categories: draw.tokens(ActivityCategoryToken.init(rawValue:)),
                webDomains: draw.tokens(WebDomainToken.init(rawValue:)), threshold: draw.components(zone: false),
                includesPastActivity: Bool.random(using: &draw))
        }
        let schedule = DeviceActivitySchedule(intervalStart: draw.components(zone: true), intervalEnd: draw.components(zone: true),
                                              repeats: Bool.random(using: &draw), warningTime: draw.maybe { $0.components(zone: false) })
        let crossings = draw.maybe { draw in
            (0..<Int.random(in: 0...2, using: &draw)).map { _ in
                ThresholdCrossing(event: DeviceActivityEvent.Name(draw.string()), callback: ThresholdCrossing.Callback.allCases.randomElement(using: &draw)!,
                                  date: draw.date())
            }
        }
        return DeviceActivityService.Registration(
            activity: DeviceActivityName(draw.string()), schedule: schedule, events: events, registeredAt: draw.date(),
            startedInterval: draw.maybe { $0.date() }, pendingStart: draw.maybe { $0.date() }, product: draw.maybe { $0.string() },
            deliveredCrossings: crossings)
    }

    /// `Registration.init(json:)` reads what `JSONDecoder` decodes from the stored bytes (compared through the bytes each
    /// writes again, which hold every stored property), or nil — only for a schedule with a time zone, left to the decoder.
    func testARegistrationIsReadAsCodableReadsIt() throws {
        var draw = Draw(state: 4)
        var read = 0
        for _ in 0..<3_000 {
            let stored = DeviceAPICoding.encode(Self.registration(&draw))
            let decoded = try DeviceAPICoding.decode(DeviceActivityService.Registration.self, from: stored)
            guard let registration = DeviceActivityService.Registration(json: try JSONValue(parsing: stored)) else {
                XCTAssertTrue(decoded.schedule.intervalStart.timeZone != nil || decoded.schedule.intervalEnd.timeZone != nil,
                              String(decoding: stored, as: UTF8.self))
                continue
            }
            read += 1
            XCTAssertEqual(String(decoding: registration.json, as: UTF8.self), String(decoding: decoded.json, as: UTF8.self))
            XCTAssertEqual(registration.registeredAt, decoded.registeredAt)
            if registration.json != decoded.json { return }
        }
        XCTAssertGreaterThan(read, 500)  // a schedule with no time zone at either end: about a quarter of those drawn
    }

    /// What the decoder refuses or reads otherwise, the reader leaves to it: nil, never a value the decoder would not give.
    func testARegistrationTheReaderDoesNotReadIsLeftToTheDecoder() throws {
        var draw = Draw(state: 5)
        var drawn = Self.registration(&draw)
        while DeviceActivityService.Registration(json: try JSONValue(parsing: DeviceAPICoding.encode(drawn))) == nil { drawn = Self.registration(&draw) }
        let stored = String(decoding: DeviceAPICoding.encode(drawn), as: UTF8.self)
        let variants = [
            stored.replacingOccurrences(of: #""registeredAt":"#, with: #""registeredAt":1.5,"ignored":"#),
            stored.replacingOccurrences(of: #""activity":"#, with: #""activity":7,"ignored":"#),
            stored.replacingOccurrences(of: #""registeredAt":"#, with: #""registeredAt":null,"ignored":"#),
            stored.replacingOccurrences(of: #""schedule":"#, with: #""schedule":[],"ignored":"#),
        ]
        for variant in variants {
            let json = try JSONValue(parsing: Array(variant.utf8))
            XCTAssertNil(DeviceActivityService.Registration(json: json), variant)
        }
        let crossing = #"{"activity":"a","deliveredCrossings":[{"callback":"eventDidFly","date":0,"event":"e"}],"events":{},"registeredAt":0,"schedule":{"intervalEnd":{"hour":23},"intervalStart":{"hour":0},"repeats":true}}"#
        XCTAssertNil(DeviceActivityService.Registration(json: try JSONValue(parsing: Array(crossing.utf8))))
        let plain = crossing.replacingOccurrences(of: "eventDidFly", with: "eventDidReachThreshold")
        XCTAssertNotNil(DeviceActivityService.Registration(json: try JSONValue(parsing: Array(plain.utf8))))
    }

    func testARegistrationIsWrittenAsCodableWritesIt() {
        var draw = Draw(state: 3)
        for _ in 0..<3_000 {
            let registration = Self.registration(&draw)
            let expected = DeviceAPICoding.encode(registration)
            XCTAssertEqual(registration.json, expected, String(decoding: expected, as: UTF8.self))
            if registration.json != expected { return }
        }
    }

    /// What a restarted device reads back (`Registration.load`): nothing for a key never saved; a stored list the reader
    /// reads whole as the decoder does; one holding a registration it does not read (a time-zoned schedule), all of it
    /// through the decoder; and bytes the decoder refuses, its error — never an empty or partial list.
    func testStoredRegistrationsAreLoadedWholeByTheReaderOrByTheDecoder() throws {
        let folder = TemporaryDirectory(prefix: "sbregload")
        let state = try DeviceStateStore(path: folder.path + "/device.sqlite")
        XCTAssertEqual(try DeviceActivityService.Registration.load(from: state, key: "never-saved").count, 0)
        var draw = Draw(state: 6)
        func drawn(readable: Bool) throws -> DeviceActivityService.Registration {
            while true {
                let registration = Self.registration(&draw)
                let read = DeviceActivityService.Registration(json: try JSONValue(parsing: DeviceAPICoding.encode(registration)))
                if (read != nil) == readable { return registration }
            }
        }
        for list in [[try drawn(readable: true), try drawn(readable: true)], [try drawn(readable: true), try drawn(readable: false)]] {
            try state.save(list, key: "list")
            let loaded = try DeviceActivityService.Registration.load(from: state, key: "list")
            XCTAssertEqual(loaded.map(\.json), try XCTUnwrap(try state.load([DeviceActivityService.Registration].self, key: "list")).map(\.json))
            XCTAssertEqual(loaded.count, 2)
        }
        try state.save(json: Array(#"[{"activity":"a"}]"#.utf8), key: "broken")
        XCTAssertThrowsError(try DeviceActivityService.Registration.load(from: state, key: "broken")) { error in
            guard case DeviceStateError.undecodable = error else { return XCTFail("not the decoder's refusal: \(error)") }
        }
    }

    /// Every stored property of a registration that has each optional part is written, and read back by the reader: a
    /// property added later and left out of `init(json:)` would be dropped there without a word.
    func testEveryStoredPropertyIsReadBack() throws {
        var draw = Draw(state: 7)
        var registration = Self.registration(&draw)
        while registration.startedInterval == nil || registration.pendingStart == nil || registration.product == nil
                || registration.deliveredCrossings?.isEmpty ?? true || registration.events.isEmpty
                || registration.schedule.intervalStart.timeZone != nil || registration.schedule.intervalEnd.timeZone != nil {
            registration = Self.registration(&draw)
        }
        let stored = try JSONValue(parsing: DeviceAPICoding.encode(registration))
        for case let label? in Mirror(reflecting: registration).children.map(\.label) {
            XCTAssertNotNil(stored[label], "\(label) is not written")
        }
        let read = try XCTUnwrap(DeviceActivityService.Registration(json: stored))
        XCTAssertEqual(String(decoding: read.json, as: UTF8.self), String(decoding: registration.json, as: UTF8.self))
    }
}
