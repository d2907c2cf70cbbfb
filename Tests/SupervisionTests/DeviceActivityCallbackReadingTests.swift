import BusProtocol
import Foundation
@testable import DeviceActivity
import ShieldBusSDK
import XCTest

/// The monitor reads a callback's body with BusProtocol's JSON reader: it finds what `JSONDecoder` found, and refuses
/// what it refused.
final class DeviceActivityCallbackReadingTests: XCTestCase {
    func testItReadsWhatTheOSWrites() throws {
        let callbacks = [
            DeviceActivityCallback(activity: DeviceActivityName("habit-lock.reblock_3"), scheduledFor: Date(timeIntervalSince1970: 1_795_000_000.25)),
            DeviceActivityCallback(activity: DeviceActivityName("daily"), event: DeviceActivityEvent.Name("threshold"), scheduledFor: Date(timeIntervalSince1970: 0)),
        ]
        for callback in callbacks {
            XCTAssertEqual(DeviceActivityCallback(body: try JSONValue(parsing: DeviceAPICoding.encode(callback))), callback)
        }
    }

    func testItRefusesWhatJSONDecoderRefused() throws {
        let bodies = [
            #"{"activity":"a","scheduledFor":5,"extra":[1]}"#, #"{"activity":"a","scheduledFor":5,"event":null}"#,
            #"{"activity":"a"}"#, #"{"scheduledFor":5}"#, #"{"activity":7,"scheduledFor":5}"#, #"{"activity":"a","scheduledFor":"5"}"#,
            #"{"activity":"a","scheduledFor":5,"event":3}"#, #"[]"#,
        ]
        for body in bodies {
            let decoded = try? DeviceAPICoding.decode(DeviceActivityCallback.self, from: Array(body.utf8))
            XCTAssertEqual(DeviceActivityCallback(body: try JSONValue(parsing: body)), decoded, body)
        }
    }
}
