// fuzz-wire: libFuzzer target for what the broker reads from any connection — WireCodec's decoders and the JSON
// reader. Built only by `make fuzz` (SHIELDBUS_FUZZ=1, -sanitize=fuzzer); a crash, a hang or a broken round trip
// is a finding.
import BusProtocol
import Foundation
import FuzzDriver

/// The first byte picks the message kind (or a broker message, or bare JSON); the rest is the JSON frame.
func fuzzWire(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    guard let selector = bytes.first else { return 0 }
    let json = Array(bytes.dropFirst())
    let kinds = ["hello", "publish", "ack", "gap", "heartbeat", "status", "bye", "event", "welcome", "error"]
    let kind = Array(kinds[Int(selector) % kinds.count].utf8)
    if let message = try? WireCodec.decodeClientMessage([kind, json][...], maximumBodyBytes: 65_536) {
        // What decodes must encode and decode to the same message.
        let again = try? WireCodec.decodeClientMessage(WireCodec.encode(message)[...], maximumBodyBytes: 1 << 20)
        precondition(again == message, "client message round trip changed it: \(message) → \(String(describing: again))")
    }
    _ = try? WireCodec.decodeBrokerMessage([kind + Array(" 7".utf8), json])  // an event's first frame: `event 7`
    _ = try? WireCodec.decodeEventBatch([Array("events 7".utf8), json])  // a batch: its envelopes one per line
    _ = try? WireCodec.decodeBrokerMessage([kind, json])
    if let value = try? JSONValue(parsing: String(decoding: json, as: UTF8.self)) {
        // What is written reads back and writes the same text (a double like 1.0 is written `1`, then reads as an integer).
        let again = try? JSONValue(parsing: String(decoding: value.jsonBytes, as: UTF8.self))
        precondition(again?.jsonBytes == value.jsonBytes, "JSON written, read and written again changed: \(value.jsonText)")
    }
    if let view = try? JSONObjectView(json) { _ = view.compactBytes(of: "body") }
    return 0
}

runFuzzer(fuzzWire)
