// EnvelopeFrame: a sequenced event's envelope on its way out, and several of them joined for one batch message.

import BusProtocol

/// A sequenced event's envelope: its bytes, shared by every delivery of it, and the transport's own copy of them —
/// made by the first delivery that needs one (libzmq's reference-counted frame) and shared by the rest, so the bytes
/// are copied into the transport once however many receive them.
final class EnvelopeFrame {
    let json: [UInt8]
    /// The transport's form of `json`; nil until a transport needs one (receivers of batches never do).
    var transportCopy: AnyObject?

    init(_ json: [UInt8]) { self.json = json }
}

/// The envelopes one batch message carries to a receiver, one per line (protocol.md § 4.3). Receivers of the same
/// events share one, and the transport's copy of its bytes with it.
final class EnvelopeBatch {
    let envelopes: [EnvelopeFrame]
    var transportCopy: AnyObject?

    init(_ envelopes: [EnvelopeFrame]) { self.envelopes = envelopes }

    /// The joined bytes' length.
    var byteCount: Int { envelopes.reduce(envelopes.count - 1) { $0 + $1.json.count } }

    /// Writes the joined bytes into `buffer`, which holds exactly `byteCount` (a transport's own buffer: no copy between).
    func write(into buffer: UnsafeMutableRawBufferPointer) {
        var offset = 0
        for envelope in envelopes {
            if offset > 0 {
                buffer[offset] = WireCodec.batchSeparator
                offset += 1
            }
            envelope.json.withUnsafeBytes { json in
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]).copyMemory(from: json)
            }
            offset += envelope.json.count
        }
    }
}
