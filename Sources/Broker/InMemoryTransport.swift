// InMemoryTransport: the transport seam inside one process — peers are queues, filled and emptied by a test or by
// plugins hosted on the test's threads.

import BusClient
import Foundation

/// For tests of logic, never the product (whose plugins are processes on libzmq): the broker and its peers in one
/// process. Two ways to drive it:
///
/// - stepped (`waits: false`): no threads, no waiting. A test puts a peer's message in (`arrive(from:_:)`), turns the
///   broker's loop one pass (`Broker.serveOnce`), and takes what the broker sent each peer (`takeSent(to:)`);
/// - threaded (`waits: true`): the loop's wait blocks until a peer's message arrives, and clients on other threads
///   connect through the endpoint (`memory://…`, registered with `InMemoryEndpoints`), each getting a client end
///   whose wait blocks until the broker sends it something — what a `BusConnection` of a plugin hosted in the test's
///   process uses.
///
/// The frames are those libzmq would carry, so the broker cannot tell the transports apart. Thread-safe: one lock
/// guards the queues, and its condition wakes whoever waits on them.
final class InMemoryTransport: BusTransport, @unchecked Sendable {
    let endpoint: String
    let admitsPeersByKey = false
    /// Whether the broker's wait blocks until a message arrives (threaded) or returns at once (stepped).
    let waits: Bool
    private let condition = NSCondition()
    /// Messages from peers not yet received by the broker: each the peer's identity, then the message's frames.
    private var inbound: [[[UInt8]]] = []
    private var inboundHead = 0
    /// What the broker sent each peer and the peer has not taken yet, in order.
    private var sent: [[UInt8]: [[[UInt8]]]] = [:]
    /// Client ends that closed: what the broker sends them is lost, as to a peer that is gone.
    private var gone: Set<[UInt8]> = []
    private var connections = 0
    private(set) var isClosed = false
    /// Set by `wake` from another thread: the broker's next wait returns at once, woken.
    private var wakeRequested = false

    nonisolated(unsafe) private static var made = 0
    private static let madeLock = NSLock()

    init(waits: Bool = false) {
        self.waits = waits
        let number = Self.madeLock.withLock {
            Self.made += 1
            return Self.made
        }
        endpoint = InMemoryEndpoints.scheme + "shieldbus-\(getpid())-\(number)"
        InMemoryEndpoints.register(endpoint) { [weak self] in
            guard let self else { return Client.closedEnd }
            return self.connect()
        }
    }

    // MARK: The peers' side

    /// `peer` sends `frames` (as `WireCodec.encode` makes them); the broker receives it on its next pass.
    func arrive(from peer: [UInt8], _ frames: [[UInt8]]) {
        precondition(offer(from: peer, frames), "a message arrived after the transport closed")
    }

    /// Queues `peer`'s message for the broker and wakes it; false (the message lost) once the transport closed, as
    /// a message to a broker that is gone, or once the peer's end was closed or cut, as a killed process's socket.
    private func offer(from peer: [UInt8], _ frames: [[UInt8]]) -> Bool {
        condition.withLock {
            guard !isClosed, !gone.contains(peer) else { return false }
            inbound.append([peer] + frames)
            condition.broadcast()
            return true
        }
    }

    /// Takes the messages the broker sent `peer` since the last call, oldest first.
    func takeSent(to peer: [UInt8]) -> [[[UInt8]]] {
        condition.withLock { sent.removeValue(forKey: peer) ?? [] }
    }

    /// A new client end with an identity of its own, as a DEALER socket connecting gets one from the ROUTER.
    func connect() -> ClientTransport {
        condition.withLock {
            connections += 1
            return Client(transport: self, identity: Array("memory-peer-\(connections)".utf8))
        }
    }

    /// One peer's end: its messages go to the broker's inbound queue, the broker's to its own.
    private final class Client: ClientTransport, @unchecked Sendable {
        private weak var transport: InMemoryTransport?
        let identity: [UInt8]
        /// Messages taken from the transport and not yet read.
        private var waiting: [[[UInt8]]] = []
        private var closed = false

        init(transport: InMemoryTransport?, identity: [UInt8]) {
            self.transport = transport
            self.identity = identity
        }

        /// The end a connection gets once the broker is gone: it sends into nothing and never hears back.
        static var closedEnd: Client { Client(transport: nil, identity: []) }

        func send(_ frames: [[UInt8]]) throws {
            guard !closed else { return }
            _ = transport?.offer(from: identity, frames)
        }

        func receiveNow() throws -> [[UInt8]]? {
            if waiting.isEmpty, let transport { waiting = transport.takeSent(to: identity) }
            return waiting.isEmpty ? nil : waiting.removeFirst()
        }

        func waitReadable(timeoutMilliseconds: Int) throws -> (ready: Bool, interrupted: Bool) {
            if !waiting.isEmpty { return (true, false) }
            guard let transport else {
                // The broker's end is gone: nothing will come, and the whole wait passes, as on a socket to a broker
                // that is gone (a caller that polls does not spin).
                usleep(UInt32(clamping: max(0, timeoutMilliseconds) * 1_000))
                return (false, false)
            }
            return (transport.waitForSent(to: identity, timeoutMilliseconds: timeoutMilliseconds), false)
        }

        func close() {
            closed = true
            transport?.disconnect(identity)
        }

        /// From any thread: the transport forgets this end under its lock, so what it sends later is lost and a
        /// wait on it ends (`disconnect`); `closed` is left to the end's own thread.
        func cut() {
            transport?.disconnect(identity)
        }

        var isCut: Bool { transport?.isGone(identity) ?? false }
    }

    /// Waits at most `timeoutMilliseconds` until the broker has sent `peer` something: the whole time once the
    /// transport closed, as a socket waits on a broker that is gone; not at all once the peer's end was cut.
    private func waitForSent(to peer: [UInt8], timeoutMilliseconds: Int) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(max(0, timeoutMilliseconds)) / 1000)
        return condition.withLock {
            while sent[peer, default: []].isEmpty && !gone.contains(peer) {
                if !condition.wait(until: deadline) { break }
            }
            return !sent[peer, default: []].isEmpty
        }
    }

    /// Whether `peer`'s end was closed or cut.
    private func isGone(_ peer: [UInt8]) -> Bool {
        condition.withLock { gone.contains(peer) }
    }

    private func disconnect(_ peer: [UInt8]) {
        condition.withLock {
            gone.insert(peer)
            sent.removeValue(forKey: peer)
            condition.broadcast()
        }
    }

    // MARK: The broker's side

    /// Stepped: never waits (a test turns the loop when it has something for it). Threaded: waits until a peer's
    /// message arrives or the timeout. The wake descriptor (the signal pipe, launch templates' channels) is looked at
    /// before and after the wait: a broker in a test's process handles no signals.
    func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32?) throws -> TransportWake {
        if let wakeDescriptor, Self.isReadable(wakeDescriptor) { return TransportWake(messagesWaiting: hasInbound, woken: true) }
        guard waits else { return TransportWake(messagesWaiting: hasInbound, woken: false) }
        let deadline = Date(timeIntervalSinceNow: Double(max(0, timeoutMilliseconds)) / 1000)
        let (arrived, woken) = condition.withLock {
            while inboundHead >= inbound.count && !isClosed && !wakeRequested {
                if !condition.wait(until: deadline) { break }
            }
            defer { wakeRequested = false }
            return (inboundHead < inbound.count, wakeRequested)
        }
        return TransportWake(messagesWaiting: arrived, woken: woken || (wakeDescriptor.map(Self.isReadable) ?? false))
    }

    /// Wakes the broker's wait from another thread (a plugin hosted in this process ended: the loop reaps it), as a
    /// signal wakes the product's loop.
    func wake() {
        condition.withLock {
            wakeRequested = true
            condition.broadcast()
        }
    }

    private var hasInbound: Bool { condition.withLock { inboundHead < inbound.count } }

    private static func isReadable(_ descriptor: Int32) -> Bool {
        var watched = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&watched, 1, 0) > 0 && watched.revents & Int16(POLLIN) != 0
    }

    func receive(into message: inout [[UInt8]]) throws -> Bool {
        condition.withLock {
            guard inboundHead < inbound.count else {
                inbound.removeAll(keepingCapacity: true)
                inboundHead = 0
                return false
            }
            message = inbound[inboundHead]
            inboundHead += 1
            return true
        }
    }

    func send(_ frames: [[UInt8]], to peer: [UInt8]) {
        _ = deliver(frames, to: peer)
    }

    func send(head: UnsafeRawBufferPointer, envelope: EnvelopeFrame, to peer: [UInt8]) -> Bool {
        deliver([Array(head), envelope.json], to: peer)
    }

    func send(head: UnsafeRawBufferPointer, batch: EnvelopeBatch, to peer: [UInt8]) -> Bool {
        let joined = [UInt8](unsafeUninitializedCapacity: batch.byteCount) { buffer, count in
            batch.write(into: UnsafeMutableRawBufferPointer(buffer))
            count = buffer.count
        }
        return deliver([Array(head), joined], to: peer)
    }

    /// Queues `frames` for `peer` and wakes it; false when the transport closed or the peer is gone.
    private func deliver(_ frames: [[UInt8]], to peer: [UInt8]) -> Bool {
        condition.withLock {
            guard !isClosed, !gone.contains(peer) else { return false }
            sent[peer, default: []].append(frames)
            condition.broadcast()
            return true
        }
    }

    func close() {
        InMemoryEndpoints.unregister(endpoint)
        condition.withLock {
            isClosed = true
            condition.broadcast()
        }
    }
}
