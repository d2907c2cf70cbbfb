// EventRouter: each sequenced event's receivers, and the path each delivery takes — the ledger, a turn, or the send after the save.

import BusProtocol
import Logging

/// Chooses who gets an event — subscribers (in name order while turns are in force), only the addressee of a request
/// to a role (and taps), only the audience of an OS event for one product (and taps), the requester of a reply — and
/// keeps every event for a supervised plugin until it acknowledges it, whether its process is there or not.
final class EventRouter {
    private let sessions: SessionTable
    private let readiness: Readiness
    private let ledger: DeliveryLedger
    private let turns: TurnQueue
    private let dispatcher: Dispatcher
    private let outbox: Outbox
    private let statistics: BusStatistics
    private let logger: Logger
    /// The receivers of the event being routed; the list's buffer is kept from one event to the next.
    private var recipientsBuffer: [Session] = []
    /// For each supervised plugin out of action, the last event it subscribed to in its last session and did not get
    /// when it came: never (given up on, or stopped), or only once it is back (waiting for its storage, the event kept
    /// in its mailbox). What a tool's input set off that it could not act on.
    private(set) var lastUnreached: [String: UInt64] = [:]

    init(sessions: SessionTable, readiness: Readiness, ledger: DeliveryLedger, turns: TurnQueue, dispatcher: Dispatcher,
         outbox: Outbox, statistics: BusStatistics, logger: Logger) {
        (self.sessions, self.readiness, self.ledger, self.turns, self.dispatcher) = (sessions, readiness, ledger, turns, dispatcher)
        (self.outbox, self.statistics, self.logger) = (outbox, statistics, logger)
    }

    /// Routes `envelope` (`json`, its bytes), sequenced from `event`. `requester`: who asked, when it is a reply;
    /// `addressee`: the only plugin it goes to, when it is a request to a role ("" when nobody holds the role).
    func route(_ envelope: Envelope, json: [UInt8], of event: PendingEvent, requester: [UInt8]?, addressee: String?) {
        // The bytes are shared by every delivery (and copied into the transport once, if a delivery on its own needs it).
        var shared: EnvelopeFrame?
        var recipients = recipientsBuffer
        recipientsBuffer = []
        defer {
            recipients.removeAll(keepingCapacity: true)
            recipientsBuffer = recipients
        }
        // A change of an App-Group key goes only to those watching it (or watching no key in particular).
        var changed = ChangedKeyReading()
        // A reply also goes to its requester, subscribed or not: then every session is looked at, in the same order.
        let candidates = requester == nil ? sessions.subscribers(of: event.topic, inNameOrder: turns.inForce)
            : turns.inForce ? sessions.inNameOrder : sessions.all
        // The topic's subscribers want its topic already: only a watch is left to judge them by.
        let topicJudged = requester == nil
        for session in candidates where ((topicJudged ? changed.admits(event, watch: session.watch) : session.wants(event, changed: &changed))
            && (addressee == nil || session.name == addressee || session.role == .tap)
            && (event.audience == nil || event.audience!.contains(session.name) || session.role == .tap))
            || (requester != nil && session.identity == requester!) {
            recipients.append(session)
        }
        for session in recipients {
            if shared == nil { shared = EnvelopeFrame(json) }
            let isReply = session.identity == requester
            // A supervised plugin's events are kept until it acknowledges them (a reply only matters to the
            // process that asked). One catching up gets them from the ledger, behind what it missed.
            if session.isDurable && !isReply {
                keep(envelope.seq, shared!, for: session.name)
                if session.isCatchingUp { continue }
            }
            // In virtual time, plugins take their turns one at a time (by name), so that no race between plugin
            // processes can reorder the journal. A reply goes at once to the requester, which waits for it.
            if turns.inForce && session.acknowledges && !isReply {
                turns.enqueue(TurnQueue.Waiting(session: session, envelope: shared!, seq: envelope.seq,
                                                observed: addressee == nil && session.observes(event.topic)))
            } else {
                dispatcher.sendAfterSave(shared!, seq: envelope.seq, to: session, isReply: isReply)
            }
        }
        // A supervised plugin between two processes gets it in its mailbox; one not coming back never gets it.
        for name in sessions.absentPlugins where (addressee == nil || name == addressee) && (event.audience?.contains(name) ?? true)
            && readiness.wasSubscribed(name, to: event, changed: &changed) {
            guard readiness.isExpectedBack(name) else {
                lastUnreached[name] = envelope.seq
                continue
            }
            // Kept, but not acted on now: a person's action it was for is answered naming it.
            if readiness.isOutOfActionNow(name) { lastUnreached[name] = envelope.seq }
            if shared == nil { shared = EnvelopeFrame(json) }
            keep(envelope.seq, shared!, for: name)
        }
    }

    /// Keeps an event for a supervised plugin until it acknowledges it; a full ledger is reported, never silent.
    private func keep(_ seq: UInt64, _ envelope: EnvelopeFrame, for plugin: String) {
        guard case .full(let name, let limit)? = ledger.route(seq: seq, envelope: envelope, to: plugin) else { return }
        logger.error("delivery log full", metadata: ["plugin": "\(name)", "limit": "\(limit)"])
        outbox.reportError("delivery-log-full", sender: "broker",
                           message: "\(name) has \(limit) unacknowledged events (bus.deliveryLogLimit): from seq \(seq) on, events for it are no longer kept for redelivery until it catches up",
                           details: ["receiver": .string(name)], countedIn: statistics)
    }
}
