import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A failed libzmq call: the operation, the errno it set, and libzmq's own description of it.
public struct ZMQError: Error, Equatable, CustomStringConvertible {
    /// What was being done, e.g. `bind(ipc:///run/bus)`.
    public let operation: String
    /// The errno value libzmq reported.
    public let errno: Int32

    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// Captures `zmq_errno()` for the operation that just failed.
    static func last(_ operation: @autoclosure () -> String) -> ZMQError {
        ZMQError(operation: operation(), errno: zmq_errno())
    }

    /// `zmq_strerror` for the errno.
    public var message: String { String(cString: zmq_strerror(errno)) }

    /// The context was terminated while the call was under way.
    public var isContextTerminated: Bool { errno == ETERM }
    /// A non-blocking call would have blocked (high-water mark reached or nothing to read).
    public var wouldBlock: Bool { errno == EAGAIN }
    /// A ROUTER socket in mandatory mode does not know the peer the message was addressed to.
    public var isHostUnreachable: Bool { errno == EHOSTUNREACH }
    /// Another process already listens on the endpoint.
    public var isAddressInUse: Bool { errno == EADDRINUSE }

    public var description: String { "\(operation) failed: \(message) (errno \(errno))" }
}
