// InMemoryTransport: the transport seam inside one process — peers are queues that a test fills and empties step by step.

/// For tests of the broker's logic: no sockets, no threads, no waiting. A test puts a peer's message in
/// (`arrive(from:_:)`), turns the broker's loop one pass (`Broker.serveOnce`), and takes what the broker sent each
/// peer (`takeSent(to:)`). The frames are those libzmq would carry, so the broker cannot tell the two apart.
final class InMemoryTransport: BusTransport {
    let endpoint = "inproc://shieldbus-in-memory"
    let admitsPeersByKey = false
    /// Messages from peers not yet received by the broker: each the peer's identity, then the message's frames.
    private var inbound: [[[UInt8]]] = []
    private var inboundHead = 0
    /// What the broker sent each peer and the test has not taken yet, in order.
    private var sent: [[UInt8]: [[[UInt8]]]] = [:]
    private(set) var isClosed = false

    // MARK: The test's side

    /// `peer` sends `frames` (as `WireCodec.encode` makes them); the broker receives it on its next pass.
    func arrive(from peer: [UInt8], _ frames: [[UInt8]]) {
        precondition(!isClosed, "a message arrived after the transport closed")
        inbound.append([peer] + frames)
    }

    /// Takes the messages the broker sent `peer` since the last call, oldest first.
    func takeSent(to peer: [UInt8]) -> [[[UInt8]]] {
        sent.removeValue(forKey: peer) ?? []
    }

    // MARK: The broker's side

    /// Never waits: a test turns the loop when it has something for it.
    func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32?) throws -> TransportWake {
        TransportWake(messagesWaiting: inboundHead < inbound.count, woken: false)
    }

    func receive(into message: inout [[UInt8]]) throws -> Bool {
        guard inboundHead < inbound.count else {
            inbound.removeAll(keepingCapacity: true)
            inboundHead = 0
            return false
        }
        message = inbound[inboundHead]
        inboundHead += 1
        return true
    }

    func send(_ frames: [[UInt8]], to peer: [UInt8]) {
        guard !isClosed else { return }
        sent[peer, default: []].append(frames)
    }

    func send(head: UnsafeRawBufferPointer, envelope: EnvelopeFrame, to peer: [UInt8]) -> Bool {
        guard !isClosed else { return false }
        sent[peer, default: []].append([Array(head), envelope.json])
        return true
    }

    func send(head: UnsafeRawBufferPointer, batch: EnvelopeBatch, to peer: [UInt8]) -> Bool {
        guard !isClosed else { return false }
        let joined = [UInt8](unsafeUninitializedCapacity: batch.byteCount) { buffer, count in
            batch.write(into: UnsafeMutableRawBufferPointer(buffer))
            count = buffer.count
        }
        sent[peer, default: []].append([Array(head), joined])
        return true
    }

    func close() { isClosed = true }
}
