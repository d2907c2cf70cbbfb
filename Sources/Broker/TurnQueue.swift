// TurnQueue: in virtual time, deliveries to acknowledging plugins one plugin at a time — a turn ends with its acknowledgement.

/// Each event's receivers are taken in name order; a delivery is handed out only when the plugin that had the
/// previous turn has acknowledged everything, so no race between plugin processes can reorder the journal. Observed
/// events take no turn. Turns are in force once the bus is ready in virtual time (`begin`).
final class TurnQueue {
    struct Waiting {
        let session: Session
        let envelope: EnvelopeFrame
        let seq: UInt64
        /// An event the session only observes: it goes out in its place in the order, and the queue moves on.
        let observed: Bool
    }

    private var queue: [Waiting] = []
    private var head = 0
    /// The session whose acknowledgement is awaited.
    private var awaiting: Session?
    /// Whether `awaiting` is an observer finishing what it observes before its turn (it does not hold the turn yet).
    private var awaitingObserver = false
    /// Whether deliveries to acknowledging plugins take turns.
    private(set) var inForce = false

    /// Turns start (the bus is ready, in virtual time).
    func begin() { inForce = true }

    /// Nothing waits for its turn.
    var isEmpty: Bool { head >= queue.count }

    func enqueue(_ waiting: Waiting) { queue.append(waiting) }

    /// Whether `session` holds the turn now, as a plugin taking it (not as an observer finishing what it observed).
    func isHeld(by session: Session) -> Bool { awaiting === session && !awaitingObserver }

    /// `session` ended: its turn, if it had it, is over.
    func forget(_ session: Session) {
        if awaiting === session { awaiting = nil }
    }

    /// Hands out the next deliveries once the plugin that has the turn has acknowledged everything. `isCurrent`:
    /// whether a session is still connected; `turnTaken`: a plugin's turn began.
    func pump(isCurrent: (Session) -> Bool, deliver: (Waiting) -> Void, turnTaken: (Session) -> Void) {
        while head < queue.count {
            if let current = awaiting, current.acknowledges, awaitingObserver ? current.isStillObserving : current.lag > 0,
               isCurrent(current) { return }
            awaiting = nil
            awaitingObserver = false
            let next = queue[head]
            // It left meanwhile: a supervised plugin gets it from the ledger when it comes back.
            guard isCurrent(next.session) else {
                head += 1
                continue
            }
            if next.observed {
                head += 1
                deliver(next)
                next.session.lastObservedSeq = max(next.session.lastObservedSeq, next.seq)
                continue
            }
            // An observer's turn waits until it has handled all it observed, so that it acts on all of it.
            if next.session.acknowledges, next.session.isStillObserving {
                awaiting = next.session
                awaitingObserver = true
                return
            }
            head += 1
            deliver(next)
            // The deliveries queued next for the same plugin go in the same turn: nobody else runs between them
            // either way, and what it publishes meanwhile is queued behind them, so the journal is the same as
            // with one turn each — for one round trip instead of several.
            while head < queue.count, queue[head].session === next.session {
                let following = queue[head]
                head += 1
                deliver(following)
            }
            awaiting = next.session
            turnTaken(next.session)
        }
        queue.removeAll(keepingCapacity: true)
        head = 0
    }
}
