import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// Waits for any of several sockets or plain file descriptors to become readable (zmq_poll).
public struct Poller {
    private var items: [zmq_pollitem_t] = []
    /// Whether the last `poll` ended early because a signal arrived (its result then has nothing ready).
    public private(set) var wasInterrupted = false

    public init() {}

    /// Watches `socket` for readability; returns the item's index in `poll`'s result.
    @discardableResult
    public mutating func addReadable(_ socket: Socket) throws -> Int {
        items.append(zmq_pollitem_t(socket: try socket.rawHandle, fd: -1, events: Int16(ZMQ_POLLIN), revents: 0))
        return items.count - 1
    }

    /// Watches a plain file descriptor (a pipe, a signal fd) for readability.
    @discardableResult
    public mutating func addReadable(fileDescriptor: Int32) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: Int16(ZMQ_POLLIN), revents: 0))
        return items.count - 1
    }

    /// Waits up to `timeoutMilliseconds` (-1 forever) and returns which items are readable.
    /// An interrupting signal returns early with nothing ready, so callers re-check their state.
    public mutating func poll(timeoutMilliseconds: Int) throws -> [Bool] {
        let count = Int32(items.count)
        wasInterrupted = false
        let rc = items.withUnsafeMutableBufferPointer { buffer in
            zmq_poll(buffer.baseAddress, count, timeoutMilliseconds)
        }
        if rc < 0 {
            let error = ZMQError.last("zmq_poll")
            if error.errno == EINTR {
                wasInterrupted = true
                return Array(repeating: false, count: items.count)
            }
            throw error
        }
        return items.map { $0.revents & Int16(ZMQ_POLLIN) != 0 }
    }
}

extension Socket {
    /// Waits up to `timeoutMilliseconds` (-1 forever) for this one socket to become readable: whether it is, and whether
    /// a signal ended the wait early (then it is not). One item on the stack, not a `Poller`'s array: a short-lived
    /// plugin process waits this way a few times in its life, and each array of `zmq_pollitem_t` is a type its
    /// runtime makes at first use.
    public func waitReadable(timeoutMilliseconds: Int) throws -> (ready: Bool, interrupted: Bool) {
        var item = zmq_pollitem_t(socket: try rawHandle, fd: -1, events: Int16(ZMQ_POLLIN), revents: 0)
        if zmq_poll(&item, 1, timeoutMilliseconds) < 0 {
            let error = ZMQError.last("zmq_poll")
            if error.errno == EINTR { return (false, true) }
            throw error
        }
        return (item.revents & Int16(ZMQ_POLLIN) != 0, false)
    }
}

/// Runs libzmq's built-in proxy between two sockets until the context terminates (used as the benchmark baseline).
public func runProxy(frontend: Socket, backend: Socket) throws {
    let rc = zmq_proxy(try frontend.rawHandle, try backend.rawHandle, nil)
    if rc != 0 {
        let error = ZMQError.last("zmq_proxy")
        if error.isContextTerminated { return }
        throw error
    }
}
