/// The ZeroMQ Authentication Protocol (ZAP, RFC 27) handler of one context: libzmq asks it about every peer
/// that completes a security handshake on a socket of that context, and admits the peer only if it says 200.
///
/// Bind it before binding the sockets it guards: with no handler bound, libzmq admits every CURVE peer.
public final class ZAPHandler {
    /// The fixed endpoint libzmq sends its ZAP requests to.
    public static let endpoint = "inproc://zeromq.zap.01"

    /// One question from libzmq: who is connecting, and with which credentials.
    public struct Request: Equatable, Sendable {
        public let requestID: [UInt8]
        public let domain: String
        /// The peer's address, e.g. `127.0.0.1`.
        public let address: String
        /// `NULL`, `PLAIN` or `CURVE`.
        public let mechanism: String
        /// For CURVE, the client's 32-byte public key.
        public let credentials: [[UInt8]]
    }

    /// The answer: admitted (with a user id libzmq attaches to the peer's messages) or refused.
    public enum Decision: Equatable, Sendable {
        case admit(userID: String)
        case refuse(reason: String)
    }

    let socket: Socket

    public init(_ context: Context) throws {
        socket = try Socket(context, .rep)
        try socket.bind(ZAPHandler.endpoint)
    }

    /// The socket to poll for readability.
    public var pollable: Socket { socket }

    /// Answers every waiting request with `decide`; a malformed request is refused (libzmq never sends one).
    public func answerPending(_ decide: (Request) -> Decision) throws {
        while let frames = try socket.receive(dontWait: true) {
            let decision: Decision
            let requestID = frames.count > 1 ? frames[1] : []
            if frames.count >= 6, String(decoding: frames[0], as: UTF8.self) == "1.0" {
                let request = Request(requestID: requestID, domain: String(decoding: frames[2], as: UTF8.self),
                                      address: String(decoding: frames[3], as: UTF8.self),
                                      mechanism: String(decoding: frames[5], as: UTF8.self), credentials: Array(frames[6...]))
                decision = decide(request)
            } else {
                decision = .refuse(reason: "malformed ZAP request")
            }
            let (code, text, user): (String, String, String)
            switch decision {
            case .admit(let userID): (code, text, user) = ("200", "OK", userID)
            case .refuse(let reason): (code, text, user) = ("400", reason, "")
            }
            try socket.send([Array("1.0".utf8), requestID, Array(code.utf8), Array(text.utf8), Array(user.utf8), []])
        }
    }

    public func close() { socket.close() }
}
