import CZeroMQ

/// Follows the connection events of one socket (zmq_socket_monitor): what libzmq does below the messages,
/// such as a peer whose security handshake failed, which never reaches the application otherwise.
public final class SocketMonitor {
    /// One event: what happened, its value (an errno, a file descriptor, …) and the endpoint it concerns.
    public struct Event: Equatable, Sendable {
        public let kind: Kind
        public let value: UInt32
        public let endpoint: String
    }

    /// The events this wrapper reports.
    public enum Kind: Equatable, Sendable {
        case accepted, disconnected, handshakeSucceeded
        /// The peer does not speak the same security mechanism (e.g. no CURVE key), or broke the handshake.
        case handshakeFailedProtocol
        /// The ZAP handler refused the peer.
        case handshakeFailedAuthentication
        /// The handshake failed for another reason (e.g. a wrong server key, seen only by the client).
        case handshakeFailedNoDetail
        case other(UInt16)

        init(_ raw: UInt16) {
            switch Int32(raw) {
            case ZMQ_EVENT_ACCEPTED: self = .accepted
            case ZMQ_EVENT_DISCONNECTED: self = .disconnected
            case ZMQ_EVENT_HANDSHAKE_SUCCEEDED: self = .handshakeSucceeded
            case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL: self = .handshakeFailedProtocol
            case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: self = .handshakeFailedAuthentication
            case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: self = .handshakeFailedNoDetail
            default: self = .other(raw)
            }
        }
    }

    private let socket: Socket

    /// The failed handshakes, which is what the broker watches for.
    public static let handshakeFailures = ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
    /// A connection closed, by either side.
    public static let disconnections = ZMQ_EVENT_DISCONNECTED

    /// Monitors `watched`'s `events` (a mask, e.g. `handshakeFailures`), through an inproc PAIR socket named
    /// `name` in `context`.
    public init(_ watched: Socket, context: Context, name: String, events: Int32 = SocketMonitor.handshakeFailures) throws {
        let endpoint = "inproc://\(name)"
        guard zmq_socket_monitor(try watched.rawHandle, endpoint, events) == 0 else {
            throw ZMQError.last("zmq_socket_monitor(\(endpoint))")
        }
        socket = try Socket(context, .pair)
        try socket.connect(endpoint)
    }

    /// The socket to poll for readability.
    public var pollable: Socket { socket }

    /// The events waiting, oldest first.
    public func pending() throws -> [Event] {
        var events: [Event] = []
        while let frames = try socket.receive(dontWait: true) {
            guard frames.count == 2, frames[0].count == 6 else { continue }
            let raw = UInt16(frames[0][0]) | UInt16(frames[0][1]) << 8
            let value = (0..<4).reduce(UInt32(0)) { $0 | UInt32(frames[0][2 + $1]) << (8 * $1) }
            events.append(Event(kind: Kind(raw), value: value, endpoint: String(decoding: frames[1], as: UTF8.self)))
        }
        return events
    }

    public func close() { socket.close() }
}
