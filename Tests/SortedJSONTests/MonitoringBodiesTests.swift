import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime
import XCTest

/// `deviceactivity.start-monitoring.request` written byte by byte (`StartMonitoring.requestBody`) is the very bytes
/// `DeviceAPICoding.encode` writes, and read with BusProtocol's JSON reader (`StartMonitoring(body:)`) is what
/// `JSONDecoder` decodes, or nil where the decoder is left to decide: over drawn requests (escaped names and tokens,
/// every schedule component, time zones, with and without a warning time and events) and hand-made bodies.
final class MonitoringBodiesTests: XCTestCase {
    private static let zones = ["Europe/Paris", "America/New_York", "Asia/Tokyo", "UTC"]

    private func components(_ draw: inout BodyWritingTests.Draw, zone: Bool) -> DateComponents {
        var components = DateComponents()
        for name in ["year", "month", "day", "weekday", "hour", "minute", "second"] where Bool.random(using: &draw) {
            _ = components.setCompactField(name, to: [0, 1, 5, 23, 59, 2026, -1, Int.max].randomElement(using: &draw)!)
        }
        if zone, Int.random(in: 0..<4, using: &draw) == 0 { components.timeZone = TimeZone(identifier: Self.zones.randomElement(using: &draw)!) }
        return components
    }

    private func request(_ draw: inout BodyWritingTests.Draw) -> StartMonitoring {
        let schedule = DeviceActivitySchedule(intervalStart: components(&draw, zone: true), intervalEnd: components(&draw, zone: true),
                                              repeats: Bool.random(using: &draw), warningTime: draw.maybe { self.components(&$0, zone: false) })
        var events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &draw) {
            events[DeviceActivityEvent.Name(draw.string())] = DeviceActivityEvent(
                applications: Set((0..<Int.random(in: 0...3, using: &draw)).map { _ in ApplicationToken(rawValue: draw.string()) }),
                categories: Set((0..<Int.random(in: 0...2, using: &draw)).map { _ in ActivityCategoryToken(rawValue: draw.string()) }),
                webDomains: Set((0..<Int.random(in: 0...2, using: &draw)).map { _ in WebDomainToken(rawValue: draw.string()) }),
                threshold: components(&draw, zone: false), includesPastActivity: Bool.random(using: &draw))
        }
        return StartMonitoring(activity: DeviceActivityName(draw.string()), schedule: schedule, events: events)
    }

    func testTheRequestIsWrittenAsCodableWritesIt() {
        var draw = BodyWritingTests.Draw(state: 7)
        for _ in 0..<3_000 {
            let request = request(&draw)
            let expected = DeviceAPICoding.encode(request)
            XCTAssertEqual(request.requestBody, expected, String(decoding: expected, as: UTF8.self))
            if request.requestBody != expected { return }
        }
    }

    /// The OS's answer to `deviceactivity.events.request` (`MonitoredEvents.successReplyJSON`): the encoder's bytes, or
    /// nil exactly when an event has a field the compact form refuses.
    func testTheEventsReplyIsWrittenAsCodableWritesIt() {
        var draw = BodyWritingTests.Draw(state: 13)
        var (written, refused) = (0, 0)
        for _ in 0..<3_000 {
            let request = request(&draw)
            let reply = MonitoredEvents(activity: request.activity, events: request.events)
            var compact: [UInt8] = []
            guard DeviceActivityEvent.writeJSON(reply.events, into: &compact) else {
                XCTAssertNil(reply.successReplyJSON)
                refused += 1
                continue
            }
            let expected = DeviceAPICoding.encode(DeviceReply.success(reply))
            XCTAssertEqual(reply.successReplyJSON, expected, String(decoding: expected, as: UTF8.self))
            if reply.successReplyJSON != expected { return }
            written += 1
        }
        XCTAssertGreaterThan(written, 1_000, "refused: \(refused)")
        let empty = MonitoredEvents(activity: DeviceActivityName("a \"b\"/é"))
        XCTAssertEqual(empty.successReplyJSON, DeviceAPICoding.encode(DeviceReply.success(empty)))
    }

    func testTheRequestIsReadAsJSONDecoderReadsIt() throws {
        var draw = BodyWritingTests.Draw(state: 11)
        var read = 0
        for _ in 0..<3_000 {
            let request = request(&draw)
            let body = DeviceAPICoding.encode(request)
            let reading = StartMonitoring(body: try JSONValue(parsing: body))
            let hasZone = request.schedule.intervalStart.timeZone != nil || request.schedule.intervalEnd.timeZone != nil
            if hasZone {
                XCTAssertNil(reading, "a time zone is left to JSONDecoder")
            } else {
                XCTAssertEqual(reading, try DeviceAPICoding.decode(StartMonitoring.self, from: body))
                XCTAssertEqual(reading, request)
                read += 1
            }
        }
        XCTAssertGreaterThan(read, 1_000)
    }

    func testBodiesReadNothingFromWhatJSONDecoderRefusedAndTheSameFromWhatItTook() throws {
        let schedule = #""schedule":{"intervalStart":{"hour":22,"minute":0},"intervalEnd":{"hour":6},"repeats":true}"#
        let bodies = [
            #"{"activity":"a","events":{},"# + schedule + "}",
            #"{"activity":"a","events":{},"extra":[1],"# + schedule + "}",
            #"{"activity":"a","# + schedule + "}",
            #"{"activity":"a","events":null,"# + schedule + "}",
            #"{"activity":"a","events":[],"# + schedule + "}",
            #"{"events":{},"# + schedule + "}",
            #"{"activity":1,"events":{},"# + schedule + "}",
            #"{"activity":"a","events":{}}"#,
            #"{"activity":"a","events":{},"schedule":null}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{},"intervalEnd":{},"repeats":false}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalEnd":{},"repeats":false}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":null,"intervalEnd":{},"repeats":false}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{},"intervalEnd":{}}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{},"intervalEnd":{},"repeats":"yes"}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{},"intervalEnd":{},"repeats":true,"warningTime":null}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{},"intervalEnd":{},"repeats":true,"warningTime":{"minute":5}}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{},"intervalEnd":{},"repeats":true,"warningTime":[]}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{"hour":"1"},"intervalEnd":{},"repeats":true}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{"hour":1.5},"intervalEnd":{},"repeats":true}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{"fortnight":1},"intervalEnd":{},"repeats":true}}"#,
            #"{"activity":"a","events":{},"schedule":{"intervalStart":{"hour":1,"timeZone":"Mars/Olympus"},"intervalEnd":{},"repeats":true}}"#,
            #"{"activity":"a","events":{"e":{"threshold":{"hour":1}}},"# + schedule + "}",
            #"{"activity":"a","events":{"e":{"threshold":{"hour":1},"applications":null,"includesPastActivity":null}},"# + schedule + "}",
            #"{"activity":"a","events":{"e":{"threshold":{"hour":1},"applications":["x","x"],"webDomains":["w"],"categories":[]}},"#
                + schedule + "}",
            #"{"activity":"a","events":{"e":{"applications":["x"]}},"# + schedule + "}",
            #"{"activity":"a","events":{"e":{"threshold":{"hour":1},"applications":[3]}},"# + schedule + "}",
            #"{"activity":"a","events":{"e":[]},"# + schedule + "}",
        ]
        for body in bodies {
            let decoded = try? DeviceAPICoding.decode(StartMonitoring.self, from: Array(body.utf8))
            let reading = StartMonitoring(body: try JSONValue(parsing: body))
            XCTAssertEqual(reading, decoded, body)
        }
    }

    func testTheAuthorizationRequestIsWrittenAndReadAsCodableDoes() throws {
        for member in FamilyControlsMember.allCases {
            let request = AuthorizationRequest(member: member)
            XCTAssertEqual(request.requestBody, DeviceAPICoding.encode(request))
            XCTAssertEqual(AuthorizationRequest(body: try JSONValue(parsing: request.requestBody)), request)
        }
        for body in [#"{"member":"child","x":1}"#, #"{"member":"parent"}"#, #"{"member":null}"#, #"{}"#, #"{"member":1}"#, #"[]"#] {
            XCTAssertEqual(AuthorizationRequest(body: try JSONValue(parsing: body)), try? DeviceAPICoding.decode(AuthorizationRequest.self, from: Array(body.utf8)), body)
        }
    }

    /// A schedule's time zone is left to `JSONDecoder`, which reads it (and refuses an unknown one).
    func testAScheduleWithATimeZoneIsLeftToJSONDecoder() throws {
        let body = #"{"activity":"a","events":{},"schedule":{"intervalStart":{"hour":1,"timeZone":"Europe/Paris"},"intervalEnd":{"hour":2},"repeats":true}}"#
        XCTAssertNil(StartMonitoring(body: try JSONValue(parsing: body)))
        let decoded = try DeviceAPICoding.decode(StartMonitoring.self, from: Array(body.utf8))
        XCTAssertEqual(decoded.schedule.intervalStart.timeZone?.identifier, "Europe/Paris")
    }

    /// The fields the compact form carries, and none when it carries a field it refuses (the writer then leaves the
    /// request to the encoder).
    func testCompactFieldsAreTheSetOnesOrNoneWhenOneIsRefused() {
        var components = DateComponents(hour: 6, minute: 0)
        components.timeZone = TimeZone(identifier: "Asia/Tokyo")
        XCTAssertEqual(components.compactFields?.map(\.name), ["hour", "minute"])
        XCTAssertEqual(components.compactFields?.map(\.value), [6, 0])
        XCTAssertEqual(DateComponents().compactFields?.count, 0)
        XCTAssertNil(DateComponents(hour: 1, nanosecond: 5).compactFields)
        XCTAssertNil(DateComponents(era: 1).compactFields)
        XCTAssertEqual(DateComponents.compactTimeZoneKey, "timeZone")
    }
}
