import BusProtocol
import DeviceAPI
import Foundation
import ScreenTime
import XCTest

/// The OS's replies read with BusProtocol's JSON reader (`JSONReadableReply`) find what `JSONDecoder` finds, and read
/// nothing from what it refuses (which it then decodes, and says why); the requests written with its writer
/// (`JSONWritableRequest`) are `DeviceAPICoding.encode`'s bytes.
final class ReplyReadingTests: XCTestCase {
    private func assertReadsAsJSONDecoder<Value: JSONReadableReply>(_ type: Value.Type, _ bodies: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        for body in bodies {
            let decoded = try? DeviceAPICoding.decode(DeviceReply<Value>.self, from: Array(body.utf8))
            XCTAssertEqual(DeviceReply<Value>(body: try JSONValue(parsing: body)), decoded, body, file: file, line: line)
        }
    }

    private func assertReadsWhatTheOSWrites<Value: JSONReadableReply>(_ replies: [DeviceReply<Value>], file: StaticString = #filePath, line: UInt = #line) throws {
        for reply in replies {
            XCTAssertEqual(DeviceReply<Value>(body: try JSONValue(parsing: DeviceAPICoding.encode(reply))), reply, file: file, line: line)
        }
    }

    func testRepliesReadWhatTheOSWrites() throws {
        let refusal = DeviceError(code: "plugins-could-not-act", message: "no \"one\"\n", plugins: [PluginOutOfAction(name: "monitor", why: "given up")])
        try assertReadsWhatTheOSWrites([DeviceReply.success(NoValue()), .failure(DeviceError(code: "unauthorized", message: "no")), .failure(refusal)])
        try assertReadsWhatTheOSWrites([DeviceReply.success(MonitoredActivities(activities: [])),
                                        .success(MonitoredActivities(activities: [DeviceActivityName("a.reblock_0"), DeviceActivityName("Ünï")]))])
        try assertReadsWhatTheOSWrites(AuthorizationStatus.allCases.map { DeviceReply.success(AuthorizationState(status: $0)) })
        let event = DeviceActivityEvent(applications: [ApplicationToken(rawValue: "app-1"), ApplicationToken(rawValue: "app-2")],
                                        categories: [ActivityCategoryToken(rawValue: "cat-1")], webDomains: [WebDomainToken(rawValue: "web-1")],
                                        threshold: DateComponents(day: 1, hour: 23, minute: 59, second: 5), includesPastActivity: true)
        try assertReadsWhatTheOSWrites([
            DeviceReply.success(MonitoredEvents(activity: DeviceActivityName("p.selection"))),
            .success(MonitoredEvents(activity: DeviceActivityName("p.selection"), events: [
                DeviceActivityEvent.Name("p.selection"): event,
                DeviceActivityEvent.Name("other"): DeviceActivityEvent(threshold: DateComponents(minute: 30)),
            ])),
        ])
        try assertReadsWhatTheOSWrites([
            DeviceReply.success(PickerResult(selection: FamilyActivitySelection())),
            .success(PickerResult(selection: FamilyActivitySelection(applicationTokens: [ApplicationToken(rawValue: "app-1"), ApplicationToken(rawValue: "Ünï \"q\"")],
                                                                     categoryTokens: [ActivityCategoryToken(rawValue: "cat-1")],
                                                                     webDomainTokens: [WebDomainToken(rawValue: "web-1")], includeEntireCategory: true))),
        ])
        let settings = ShieldSettings(applications: [ApplicationToken(rawValue: "app-1")], applicationCategories: .specific([ActivityCategoryToken(rawValue: "cat-1")], except: [ApplicationToken(rawValue: "app-2")]),
                                      webDomains: [], webDomainCategories: .all(except: [WebDomainToken(rawValue: "web-1")]))
        try assertReadsWhatTheOSWrites([
            DeviceReply.success(ManagedSettingsSnapshot(stores: [:])),
            .success(ManagedSettingsSnapshot(stores: ["habit": settings, "empty": ShieldSettings(), "none": ShieldSettings(applicationCategories: ShieldSettings.ActivityCategoryPolicy<Application>.none)])),
        ])
    }

    func testRepliesReadNothingFromWhatJSONDecoderRefusedAndTheSameFromWhatItTook() throws {
        let envelopes = [
            #"{"ok":true}"#, #"{"ok":true,"value":null,"error":null}"#, #"{"ok":"yes","value":{}}"#, #"{"value":{}}"#, #"[]"#, #"null"#,
            #"{"ok":false,"error":{"code":"x","message":"y","plugins":null}}"#, #"{"ok":false,"error":{"code":"x"}}"#,
            #"{"ok":false,"error":{"code":"x","message":"y","plugins":[{"name":"a","why":"b","more":1}]}}"#,
            #"{"ok":false,"error":{"code":"x","message":"y","plugins":[{"name":"a"}]}}"#, #"{"ok":false,"error":[]}"#,
        ]
        try assertReadsAsJSONDecoder(NoValue.self, envelopes + [#"{"ok":true,"value":{"extra":[1,2]}}"#, #"{"ok":true,"value":[]}"#, #"{"ok":true,"value":3}"#])
        try assertReadsAsJSONDecoder(MonitoredActivities.self, envelopes + [
            #"{"ok":true,"value":{"activities":["a","b"],"x":1}}"#, #"{"ok":true,"value":{"activities":[]}}"#, #"{"ok":true,"value":{}}"#,
            #"{"ok":true,"value":{"activities":null}}"#, #"{"ok":true,"value":{"activities":["a",1]}}"#, #"{"ok":true,"value":{"activities":"a"}}"#,
        ])
        try assertReadsAsJSONDecoder(AuthorizationState.self, envelopes + [
            #"{"ok":true,"value":{"status":"approved"}}"#, #"{"ok":true,"value":{"status":"maybe"}}"#, #"{"ok":true,"value":{"status":1}}"#,
            #"{"ok":true,"value":{}}"#,
        ])
        try assertReadsAsJSONDecoder(MonitoredEvents.self, envelopes + [
            #"{"ok":true,"value":{"activity":"a","events":{}}}"#, #"{"ok":true,"value":{"activity":"a"}}"#, #"{"ok":true,"value":{"events":{}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":[]}}"#, #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"hour":1}}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"hour":1},"applications":null,"includesPastActivity":null}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"hour":1},"applications":["x","x"],"webDomains":["w"],"categories":[]}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"applications":["x"]}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"hour":"1"}}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"hour":1.5}}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"fortnight":1}}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"hour":1,"timeZone":"Mars/Olympus"}}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{}},"f":{"threshold":{"day":2},"includesPastActivity":true}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"hour":1},"applications":[3]}}}}"#,
            #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"hour":1},"includesPastActivity":"yes"}}}}"#,
        ])
        try assertReadsAsJSONDecoder(PickerResult.self, envelopes + [
            #"{"ok":true,"value":{"selection":{}}}"#, #"{"ok":true,"value":{}}"#, #"{"ok":true,"value":{"selection":null}}"#,
            #"{"ok":true,"value":{"selection":[]}}"#, #"{"ok":true,"value":{"selection":{"applicationTokens":["a","a","b"],"x":1}}}"#,
            #"{"ok":true,"value":{"selection":{"applicationTokens":null,"categoryTokens":["c"],"webDomainTokens":["w"],"includeEntireCategory":true}}}"#,
            #"{"ok":true,"value":{"selection":{"includeEntireCategory":null}}}"#, #"{"ok":true,"value":{"selection":{"includeEntireCategory":1}}}"#,
            #"{"ok":true,"value":{"selection":{"webDomainTokens":"w"}}}"#, #"{"ok":true,"value":{"selection":{"categoryTokens":[7]}}}"#,
            #"{"ok":true,"value":{"selection":{"applicationTokens":{}}}}"#,
        ])
        try assertReadsAsJSONDecoder(ManagedSettingsSnapshot.self, envelopes + [
            #"{"ok":true,"value":{"stores":{}}}"#, #"{"ok":true,"value":{}}"#, #"{"ok":true,"value":{"stores":{"a":{}}}}"#,
            #"{"ok":true,"value":{"stores":{"a":{"applications":null,"webDomains":["w"]}}}}"#,
            #"{"ok":true,"value":{"stores":{"a":{"applicationCategories":{"policy":"all"}}}}}"#,
            #"{"ok":true,"value":{"stores":{"a":{"applicationCategories":{"policy":"all","categories":7}}}}}"#,
            #"{"ok":true,"value":{"stores":{"a":{"applicationCategories":{"policy":"specific","categories":7}}}}}"#,
            #"{"ok":true,"value":{"stores":{"a":{"webDomainCategories":{"policy":"specific","categories":["c"],"except":null}}}}}"#,
            #"{"ok":true,"value":{"stores":{"a":{"webDomainCategories":{"policy":"none","except":["w"]}}}}}"#,
            #"{"ok":true,"value":{"stores":{"a":{"webDomainCategories":{"policy":"some"}}}}}"#,
            #"{"ok":true,"value":{"stores":{"a":{"webDomainCategories":{"except":[]}}}}}"#,
            #"{"ok":true,"value":{"stores":{"a":{"applications":[1]}}}}"#, #"{"ok":true,"value":{"stores":{"a":[]}}}"#,
        ])
    }

    /// A threshold with a time zone (which the OS never writes) is left to `JSONDecoder`, which reads it.
    func testAThresholdsTimeZoneIsLeftToJSONDecoder() throws {
        let body = #"{"ok":true,"value":{"activity":"a","events":{"e":{"threshold":{"hour":1,"timeZone":"Europe/Paris"}}}}}"#
        XCTAssertNil(DeviceReply<MonitoredEvents>(body: try JSONValue(parsing: body)))
        let decoded = try DeviceAPICoding.decode(DeviceReply<MonitoredEvents>.self, from: Array(body.utf8))
        XCTAssertEqual(decoded.value?.events[DeviceActivityEvent.Name("e")]?.threshold.timeZone?.identifier, "Europe/Paris")
    }

    func testRequestsWriteWhatTheEncoderWrites() {
        XCTAssertEqual(NoValue().requestBody, DeviceAPICoding.encode(NoValue()))
        let names = ["p.selection", "", "quote \" back \\ slash / tab \t nul \u{0} é \u{1F600}"]
        for name in names {
            let request = MonitoredEvents(activity: DeviceActivityName(name))
            XCTAssertEqual(request.requestBody, DeviceAPICoding.encode(request), name)
            let withEvents = MonitoredEvents(activity: DeviceActivityName(name), events: [DeviceActivityEvent.Name(name): DeviceActivityEvent(threshold: DateComponents(hour: 1))])
            XCTAssertEqual(withEvents.requestBody, DeviceAPICoding.encode(withEvents), name)
        }
    }
}
