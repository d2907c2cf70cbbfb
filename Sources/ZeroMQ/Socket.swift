import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A libzmq socket. Not thread-safe: use one socket from one thread at a time, as libzmq requires.
///
/// A socket closes when it is deinitialised or `close()` is called; its linger defaults to
/// `Socket.defaultLinger` so that neither close nor context termination can hang.
public final class Socket {
    /// The linger applied to every new socket: pending messages get this long to leave on close.
    public static let defaultLingerMilliseconds: Int32 = 200

    public let type: SocketType
    private var handle: UnsafeMutableRawPointer?
    private var context: Context?  // an open socket keeps its context alive

    /// Creates a socket of `type` in `context`.
    public init(_ context: Context, _ type: SocketType) throws {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            throw ZMQError.last("zmq_socket(\(type))")
        }
        self.handle = handle
        self.type = type
        self.context = context
        try setOption(ZMQ_LINGER, Socket.defaultLingerMilliseconds, "ZMQ_LINGER")
    }

    deinit { close() }

    /// Closes the socket; further calls throw ENOTSOCK. Safe to call twice.
    public func close() {
        if let handle {
            zmq_close(handle)
            self.handle = nil
        }
        context = nil  // the context may now terminate, flushing what lingers
    }

    var rawHandle: UnsafeMutableRawPointer {
        get throws {
            guard let handle else { throw ZMQError(operation: "use of closed \(type) socket", errno: ENOTSOCK) }
            return handle
        }
    }

    // MARK: Endpoints

    /// Binds to `endpoint` (e.g. `ipc:///run/x/bus`, `tcp://127.0.0.1:5555`, `tcp://127.0.0.1:*`).
    public func bind(_ endpoint: String) throws {
        let handle = try rawHandle
        guard zmq_bind(handle, endpoint) == 0 else { throw ZMQError.last("bind(\(endpoint))") }
    }

    /// Connects to `endpoint`; libzmq connects asynchronously and reconnects by itself.
    public func connect(_ endpoint: String) throws {
        let handle = try rawHandle
        guard zmq_connect(handle, endpoint) == 0 else { throw ZMQError.last("connect(\(endpoint))") }
    }

    /// Undoes a `bind`.
    public func unbind(_ endpoint: String) throws {
        let handle = try rawHandle
        guard zmq_unbind(handle, endpoint) == 0 else { throw ZMQError.last("unbind(\(endpoint))") }
    }

    /// Undoes a `connect`.
    public func disconnect(_ endpoint: String) throws {
        let handle = try rawHandle
        guard zmq_disconnect(handle, endpoint) == 0 else { throw ZMQError.last("disconnect(\(endpoint))") }
    }

    /// The endpoint last bound, with a wildcard port resolved (ZMQ_LAST_ENDPOINT).
    public func lastEndpoint() throws -> String {
        var buffer = [CChar](repeating: 0, count: 1024)
        var size = buffer.count
        let handle = try rawHandle
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else {
            throw ZMQError.last("getsockopt(ZMQ_LAST_ENDPOINT)")
        }
        return String(cString: buffer)
    }

    // MARK: Sending

    /// Sends one multipart message. Returns false only when `dontWait` is set and the message could not
    /// be queued (EAGAIN: the high-water mark is reached); nothing of the message is sent then.
    @discardableResult
    public func send(_ frames: [Frame], dontWait: Bool = false) throws -> Bool {
        precondition(!frames.isEmpty, "a message has at least one frame")
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            var flags: Int32 = index < last ? ZMQ_SNDMORE : 0
            // Only the first part may fail with EAGAIN: libzmq queues the rest of a started message.
            if dontWait && index == 0 { flags |= ZMQ_DONTWAIT }
            if try !sendFrame(frame, flags: flags) { return false }
        }
        return true
    }

    /// Sends one frame with raw libzmq flags; false on EAGAIN when ZMQ_DONTWAIT was given.
    public func sendFrame(_ frame: Frame, flags: Int32) throws -> Bool {
        let handle = try rawHandle
        let rc = frame.withUnsafeBytes { bytes in
            retryingOnInterrupt { zmq_send(handle, bytes.baseAddress, bytes.count, flags) }
        }
        if rc >= 0 { return true }
        let error = ZMQError.last("send on \(type) socket")
        if error.wouldBlock && flags & ZMQ_DONTWAIT != 0 { return false }
        throw error
    }

    // MARK: Receiving

    /// Receives one whole multipart message. With `dontWait`, returns nil when none is waiting;
    /// without it, blocks (up to the receive timeout, then returns nil).
    public func receive(dontWait: Bool = false) throws -> [Frame]? {
        var frames: [Frame] = []
        return try receive(into: &frames, dontWait: dontWait) ? frames : nil
    }

    /// Receives one whole multipart message into `frames`, reusing the storage of the arrays already there, so that
    /// a loop receiving message after message into the same variable allocates nothing per message. False (and
    /// `frames` unchanged) when `dontWait` is set and none is waiting, or at the receive timeout.
    public func receive(into frames: inout [Frame], dontWait: Bool = false) throws -> Bool {
        let handle = try rawHandle
        var count = 0
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        while true {
            let flags: Int32 = count == 0 && dontWait ? ZMQ_DONTWAIT : 0
            let rc = retryingOnInterrupt { zmq_msg_recv(&message, handle, flags) }
            if rc < 0 {
                let error = ZMQError.last("receive on \(type) socket")
                if error.wouldBlock && count == 0 { return false }
                throw error
            }
            if count == frames.count { frames.append([]) }
            frames[count].removeAll(keepingCapacity: true)
            let size = zmq_msg_size(&message)
            if size > 0 {
                let data = zmq_msg_data(&message)!.assumingMemoryBound(to: UInt8.self)
                frames[count].append(contentsOf: UnsafeBufferPointer(start: data, count: size))
            }
            count += 1
            if zmq_msg_more(&message) == 0 {
                frames.removeLast(frames.count - count)
                return true
            }
        }
    }

    // MARK: Options

    func setOption(_ option: Int32, _ value: Int32, _ name: String) throws {
        var value = value
        let handle = try rawHandle
        guard zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size) == 0 else {
            throw ZMQError.last("setsockopt(\(name))")
        }
    }

    func setOption(_ option: Int32, bytes: [UInt8], _ name: String) throws {
        let handle = try rawHandle
        let rc = bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        guard rc == 0 else { throw ZMQError.last("setsockopt(\(name))") }
    }

    func getInt32(_ option: Int32, _ name: String) throws -> Int32 {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        let handle = try rawHandle
        guard zmq_getsockopt(handle, option, &value, &size) == 0 else { throw ZMQError.last("getsockopt(\(name))") }
        return value
    }

    /// How long unsent messages may linger after close, in milliseconds (-1 forever, 0 drop at once).
    public func setLinger(milliseconds: Int32) throws { try setOption(ZMQ_LINGER, milliseconds, "ZMQ_LINGER") }
    /// Queue limit for outbound messages per peer (0 = unlimited).
    public func setSendHighWaterMark(_ messages: Int32) throws { try setOption(ZMQ_SNDHWM, messages, "ZMQ_SNDHWM") }
    /// Queue limit for inbound messages per peer (0 = unlimited).
    public func setReceiveHighWaterMark(_ messages: Int32) throws { try setOption(ZMQ_RCVHWM, messages, "ZMQ_RCVHWM") }
    /// How long a blocking receive waits, in milliseconds (-1 forever).
    public func setReceiveTimeout(milliseconds: Int32) throws { try setOption(ZMQ_RCVTIMEO, milliseconds, "ZMQ_RCVTIMEO") }
    /// How long a blocking send waits, in milliseconds (-1 forever).
    public func setSendTimeout(milliseconds: Int32) throws { try setOption(ZMQ_SNDTIMEO, milliseconds, "ZMQ_SNDTIMEO") }
    /// SUB/XSUB: receive messages whose first frame starts with `prefix` (empty = everything).
    public func subscribe(_ prefix: String) throws { try setOption(ZMQ_SUBSCRIBE, bytes: Array(prefix.utf8), "ZMQ_SUBSCRIBE") }
    /// SUB/XSUB: undo a `subscribe`.
    public func unsubscribe(_ prefix: String) throws { try setOption(ZMQ_UNSUBSCRIBE, bytes: Array(prefix.utf8), "ZMQ_UNSUBSCRIBE") }
    /// The identity a ROUTER peer sees for this socket (ZMQ_ROUTING_ID); set before connecting.
    public func setRoutingID(_ id: [UInt8]) throws { try setOption(ZMQ_ROUTING_ID, bytes: id, "ZMQ_ROUTING_ID") }
    /// ROUTER: fail with EHOSTUNREACH/EAGAIN instead of dropping silently when a peer is unknown or full.
    public func setRouterMandatory(_ on: Bool) throws { try setOption(ZMQ_ROUTER_MANDATORY, on ? 1 : 0, "ZMQ_ROUTER_MANDATORY") }
    /// Queue messages only to completed connections.
    public func setImmediate(_ on: Bool) throws { try setOption(ZMQ_IMMEDIATE, on ? 1 : 0, "ZMQ_IMMEDIATE") }
    /// XPUB: pass every subscription message up, not only new ones.
    public func setXPubVerbose(_ on: Bool) throws { try setOption(ZMQ_XPUB_VERBOSE, on ? 1 : 0, "ZMQ_XPUB_VERBOSE") }
    /// Whether more parts of the current message are waiting (ZMQ_RCVMORE).
    public func hasMoreParts() throws -> Bool { try getInt32(ZMQ_RCVMORE, "ZMQ_RCVMORE") != 0 }
}
