// ClientTransport: the client's side of the transport seam — a connection's frames out and in, no wire in sight.

import Foundation
import ZeroMQ

/// How a `BusConnection` reaches the broker: it sends its messages as frames (`WireCodec`) and reads the broker's.
/// libzmq's DEALER socket in the product (`ZeroMQClientTransport`); an in-memory pair with the broker's in-memory
/// transport in tests that run the broker and its plugins in one process (`InMemoryEndpoints`).
public protocol ClientTransport: AnyObject {
    /// Sends one message to the broker.
    func send(_ frames: [[UInt8]]) throws
    /// The next message from the broker, or nil when none waits now.
    func receiveNow() throws -> [[UInt8]]?
    /// Waits at most `timeoutMilliseconds` for a message from the broker: whether one waits, and whether a signal
    /// ended the wait early.
    func waitReadable(timeoutMilliseconds: Int) throws -> (ready: Bool, interrupted: Bool)
    /// Stops; what was sent before leaves first (within libzmq's linger).
    func close()
    /// Cuts the connection at once, from any thread, as a process's SIGKILL cuts its socket: nothing sent from now
    /// on reaches the broker, nothing more from it is received, and a wait ends. Only an in-memory end can (a
    /// libzmq socket is its thread's alone): the product's transport does nothing.
    func cut()
    /// Whether the connection was cut (`cut`), read from any thread: nothing will come on it again, so a wait on it
    /// is pointless.
    var isCut: Bool { get }
}

/// The product's client transport: a DEALER socket in a context of its own (terminating it on close flushes the
/// goodbye before the process exits).
final class ZeroMQClientTransport: ClientTransport {
    private let socket: Socket
    private var context: Context?

    init(endpoint: String, curve keys: CurveClientKeys?) throws {
        let context = try Context()
        self.context = context
        socket = try Socket(context, .dealer)
        try socket.setReceiveHighWaterMark(100_000)
        try socket.setSendHighWaterMark(100_000)
        if let keys { try socket.makeCurveClient(serverKey: keys.serverKey, keys: keys.keys) }
        try socket.connect(endpoint)
    }

    func send(_ frames: [[UInt8]]) throws { try socket.send(frames) }

    func receiveNow() throws -> [[UInt8]]? { try socket.receive(dontWait: true) }

    func waitReadable(timeoutMilliseconds: Int) throws -> (ready: Bool, interrupted: Bool) {
        try socket.waitReadable(timeoutMilliseconds: timeoutMilliseconds)
    }

    func close() {
        socket.close()
        context = nil
    }

    func cut() {}

    var isCut: Bool { false }
}

/// In-memory endpoints (`memory://…`) of brokers running in this process, for tests only: the product's plugins are
/// processes that reach their broker over libzmq. A test's broker on an in-memory transport registers how to connect
/// to it; a `BusConnection` made for such an endpoint asks here instead of opening a socket.
public enum InMemoryEndpoints {
    /// The scheme of in-memory endpoints.
    public static let scheme = "memory://"

    private static let lock = NSLock()
    nonisolated(unsafe) private static var connectors: [String: @Sendable () -> ClientTransport] = [:]

    /// Makes `endpoint` connectable: each connection gets its own client end from `connect`.
    public static func register(_ endpoint: String, connect: @escaping @Sendable () -> ClientTransport) {
        lock.withLock { connectors[endpoint] = connect }
    }

    /// Forgets `endpoint`: later connections to it fail as to a broker that is gone.
    public static func unregister(_ endpoint: String) {
        lock.withLock { _ = connectors.removeValue(forKey: endpoint) }
    }

    /// A new client end for `endpoint`, or nil when no broker in this process serves it.
    static func connect(_ endpoint: String) -> ClientTransport? {
        let connect = lock.withLock { connectors[endpoint] }
        return connect?()
    }
}
