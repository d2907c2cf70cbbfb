// BusTransport: the seam between the broker's loop and its peers — frames in, frames out, no wire in sight.

/// How the broker meets its peers. The loop waits on it, reads each peer's messages as frames (the peer's identity
/// first, then the message's frames, as `WireCodec` makes them) and sends frames back. How a peer connects and how
/// its bytes travel is the transport's alone: libzmq in production (`ZeroMQTransport`), in-process queues for tests
/// that drive the broker step by step or host its plugins on their threads (`InMemoryTransport`).
protocol BusTransport: AnyObject {
    /// Where peers connect, as published in the runtime directory (a wildcard port resolved).
    var endpoint: String { get }

    /// Whether the transport let in only peers whose key is on the allowlist (CURVE on tcp): such a peer is admitted
    /// as an outside client without the cookie.
    var admitsPeersByKey: Bool { get }

    /// Waits at most `timeoutMilliseconds` until a peer's message or a byte on `wakeDescriptor` (the signal pipe) waits.
    func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32?) throws -> TransportWake

    /// The next message waiting from a peer, into `message`: its identity, then its frames. False when none waits.
    func receive(into message: inout [[UInt8]]) throws -> Bool

    /// Sends one of the broker's own messages (a welcome, an error, a heartbeat, a status report), best effort: a
    /// peer that is gone stops heartbeating and its session ends.
    func send(_ frames: [[UInt8]], to peer: [UInt8])

    /// Sends one event: `head` (`event <delivery>`), then the envelope, which every receiver of the event shares.
    /// Whether it was queued (false: the peer's queue is full, or the peer is gone).
    func send(head: UnsafeRawBufferPointer, envelope: EnvelopeFrame, to peer: [UInt8]) -> Bool

    /// Sends several events in one message: `head` (`events <first delivery>`), then their envelopes, one per line.
    /// Whether it was queued.
    func send(head: UnsafeRawBufferPointer, batch: EnvelopeBatch, to peer: [UInt8]) -> Bool

    /// Stops serving; nothing is sent afterwards.
    func close()
}

/// What ended a transport's wait.
struct TransportWake {
    /// A peer's message waits to be received.
    var messagesWaiting: Bool
    /// The wake descriptor is readable (a signal arrived).
    var woken: Bool
}
