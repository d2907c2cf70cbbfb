import ZeroMQ

/// A sequenced event's envelope on its way out: its bytes, and the libzmq frame that every delivery of it on its own
/// shares — copied into libzmq only when one is made (receivers that get their events in batches never need it).
final class EnvelopeFrame {
    let json: [UInt8]
    private(set) lazy var frame = SharedFrame(json)

    init(_ json: [UInt8]) { self.json = json }
}
