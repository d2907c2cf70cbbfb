import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// A frame whose bytes are copied into libzmq once and then shared, by reference count, by every message that
/// sends it — one allocation however many receivers, instead of one copy per `zmq_send`.
public final class SharedFrame {
    let message: UnsafeMutablePointer<zmq_msg_t>

    public init(_ bytes: [UInt8]) {
        message = .allocate(capacity: 1)
        zmq_msg_init_size(message, bytes.count)
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress { memcpy(zmq_msg_data(message), base, source.count) }
        }
    }

    /// A frame of `size` bytes that `write` fills in place (a batch's envelopes): the bytes are made in libzmq's
    /// buffer, copied nowhere else.
    public init(size: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void) {
        message = .allocate(capacity: 1)
        zmq_msg_init_size(message, size)
        write(UnsafeMutableRawBufferPointer(start: zmq_msg_data(message), count: size))
    }

    deinit {
        zmq_msg_close(message)
        message.deallocate()
    }
}

extension Socket {
    /// Sends `routingID` (a ROUTER's addressee), then `header`, then the shared frame, as one message: the bytes
    /// that differ per receiver are copied, the shared frame only gains a reference. Same contract as `send`:
    /// false only when `dontWait` is set and nothing could be queued.
    public func send(routingID: [UInt8], header: UnsafeRawBufferPointer, shared: SharedFrame, dontWait: Bool = false) throws -> Bool {
        if try !sendFrame(routingID, flags: ZMQ_SNDMORE | (dontWait ? ZMQ_DONTWAIT : 0)) { return false }
        let handle = try rawHandle
        // Only the first part may fail with EAGAIN: libzmq queues the rest of a started message.
        let rc = retryingOnInterrupt { zmq_send(handle, header.baseAddress, header.count, ZMQ_SNDMORE) }
        if rc < 0 { throw ZMQError.last("send on \(type) socket") }
        var copy = zmq_msg_t()
        zmq_msg_init(&copy)
        zmq_msg_copy(&copy, shared.message)
        let last = retryingOnInterrupt { zmq_msg_send(&copy, handle, 0) }
        if last < 0 { zmq_msg_close(&copy); throw ZMQError.last("send on \(type) socket") }
        return true
    }
}
