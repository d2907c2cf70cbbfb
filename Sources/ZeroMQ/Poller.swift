import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// Waits for any of several sockets or plain file descriptors to become readable, as `zmq_poll` does.
public struct Poller {
    private var items: [zmq_pollitem_t] = []
    /// What the blocking wait polls, one per item (`watchDescriptors`).
    private var pollDescriptors: [pollfd] = []
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
    ///
    /// What `zmq_poll` does, in one system call per wait instead of two: it polls once without waiting before it
    /// waits (a socket's readiness is in its command mailbox, read by `ZMQ_EVENTS`). Here the sockets' `ZMQ_EVENTS`
    /// are read first — no system call unless commands wait — and only a wait that must block polls, on each socket's
    /// `ZMQ_FD` beside the plain descriptors; a socket's descriptor says only that commands arrived, so its
    /// `ZMQ_EVENTS` is read again after it and the wait goes on if the socket is still not readable.
    public mutating func poll(timeoutMilliseconds: Int) throws -> [Bool] {
        wasInterrupted = false
        if pollDescriptors.count != items.count { try watchDescriptors() }
        let deadline = timeoutMilliseconds < 0 ? nil : Self.nowMilliseconds() + Int64(timeoutMilliseconds)
        var ready = Array(repeating: false, count: items.count)
        var socketReady = try readSocketEvents(into: &ready)
        while true {
            // With a socket ready, the plain descriptors are still looked at (without waiting): a flood of messages
            // never hides a signal.
            let wait = socketReady ? 0 : deadline.map { Int32(clamping: max(0, $0 - Self.nowMilliseconds())) } ?? -1
            for index in pollDescriptors.indices { pollDescriptors[index].revents = 0 }
            let rc = pollDescriptors.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), wait) }
            if rc < 0 {
                if errno == EINTR {
                    wasInterrupted = true
                    return Array(repeating: false, count: items.count)
                }
                throw ZMQError.last("poll")
            }
            var commandsArrived = false
            for (index, item) in items.enumerated() where pollDescriptors[index].revents & Int16(POLLIN) != 0 {
                if item.socket == nil { ready[index] = true } else { commandsArrived = true }
            }
            if commandsArrived, !socketReady { socketReady = try readSocketEvents(into: &ready) }
            let timedOut = deadline.map { Self.nowMilliseconds() >= $0 } ?? false
            if socketReady || ready.contains(true) || wait == 0 || timedOut { return ready }
        }
    }

    /// Reads each socket's `ZMQ_EVENTS` into `ready`; whether any is readable.
    private func readSocketEvents(into ready: inout [Bool]) throws -> Bool {
        var any = false
        for (index, item) in items.enumerated() {
            guard let socket = item.socket else { continue }
            var events: Int32 = 0
            var size = MemoryLayout<Int32>.size
            guard zmq_getsockopt(socket, ZMQ_EVENTS, &events, &size) == 0 else { throw ZMQError.last("zmq_getsockopt(ZMQ_EVENTS)") }
            ready[index] = events & Int32(ZMQ_POLLIN) != 0
            any = any || ready[index]
        }
        return any
    }

    /// The descriptors the blocking wait polls: each socket's `ZMQ_FD`, each plain descriptor itself.
    private mutating func watchDescriptors() throws {
        pollDescriptors = try items.map { item in
            guard let socket = item.socket else { return pollfd(fd: item.fd, events: Int16(POLLIN), revents: 0) }
            var descriptor: Int32 = -1
            var size = MemoryLayout<Int32>.size
            guard zmq_getsockopt(socket, ZMQ_FD, &descriptor, &size) == 0 else { throw ZMQError.last("zmq_getsockopt(ZMQ_FD)") }
            return pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        }
    }

    private static func nowMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
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
