import Foundation
import XCTest
@testable import BusProtocol

/// Every input `make fuzz` found against the wire decoder (Tests/Fuzz/Regressions/wire), fed to the same calls as the
/// fuzz target: each must be answered (a message or an error), and what decodes must round-trip.
final class WireFuzzRegressionTests: XCTestCase {
    func testEveryRecordedInputIsAnsweredAndRoundTrips() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Fuzz/Regressions/wire")
        let kinds = ["hello", "publish", "ack", "gap", "heartbeat", "status", "bye", "event", "welcome", "error"]
        let inputs = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        for name in inputs {
            let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent(name)))
            guard let selector = bytes.first else { continue }
            let kind = Array(kinds[Int(selector) % kinds.count].utf8)
            let json = Array(bytes.dropFirst())
            if let message = try? WireCodec.decodeClientMessage([kind, json][...], maximumBodyBytes: 65_536) {
                XCTAssertEqual(try? WireCodec.decodeClientMessage(WireCodec.encode(message)[...], maximumBodyBytes: 1 << 20), message, name)
            }
            _ = try? WireCodec.decodeBrokerMessage([kind + Array(" 7".utf8), json])  // an event's first frame: `event 7`
            _ = try? WireCodec.decodeEventBatch([Array("events 7".utf8), json])  // a batch: its envelopes one per line
            if let value = try? JSONValue(parsing: String(decoding: json, as: UTF8.self)) {
                XCTAssertEqual(try? JSONValue(parsing: String(decoding: value.jsonBytes, as: UTF8.self)).jsonBytes, value.jsonBytes, name)
            }
        }
    }
}
