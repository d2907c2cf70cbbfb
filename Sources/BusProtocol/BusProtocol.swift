// BusProtocol: ShieldBus's wire protocol, v1 — frames, the JSON envelope, message kinds, topics, validation.
//
// It knows no transport: it turns messages into frames of bytes and back. See docs/protocol.md.

/// The protocol versions this build speaks.
public enum ProtocolVersion {
    /// The version this build sends.
    public static let current: Int64 = 1
    /// Every version this build accepts.
    public static let supported: [Int64] = [1]
}

/// Bus time: milliseconds since the Unix epoch on the bus clock (which may be real, scaled or virtual).
public typealias BusTime = Int64

/// Default limit on a message body, in bytes; the broker's configuration can change it.
public let defaultMaximumBodyBytes = 64 * 1024
