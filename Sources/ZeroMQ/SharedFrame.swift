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

    deinit {
        zmq_msg_close(message)
        message.deallocate()
    }
}

extension Socket {
    /// Sends `head` frames, the shared frame, then `tail` frames, as one message. Same contract as `send`:
    /// false only when `dontWait` is set and nothing could be queued.
    public func send(_ head: [Frame], shared: SharedFrame, tail: UnsafeRawBufferPointer, dontWait: Bool = false) throws -> Bool {
        for (index, frame) in head.enumerated() {
            var flags: Int32 = ZMQ_SNDMORE
            if dontWait && index == 0 { flags |= ZMQ_DONTWAIT }
            if try !sendFrame(frame, flags: flags) { return false }
        }
        let handle = try rawHandle
        var copy = zmq_msg_t()
        zmq_msg_init(&copy)
        zmq_msg_copy(&copy, shared.message)
        let rc = retryingOnInterrupt { zmq_msg_send(&copy, handle, ZMQ_SNDMORE) }
        if rc < 0 { zmq_msg_close(&copy); throw ZMQError.last("send on \(type) socket") }
        let last = retryingOnInterrupt { zmq_send(handle, tail.baseAddress, tail.count, 0) }
        if last < 0 { throw ZMQError.last("send on \(type) socket") }
        return true
    }
}
