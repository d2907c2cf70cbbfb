// Intake: a peer's publication taken in — a repeat dropped, the authority's rules and open requests checked — and queued or held.

import BusProtocol

/// Every publication passes here before it is sequenced. A copy a plugin's next process sends again is dropped; a
/// publication `Authority` refuses, or a request `OpenRequests` cannot open (its id waiting, too many waiting), is refused; an observer's
/// publication out of its turn waits in `HeldPublications` for the bus to settle; the rest join the outbox.
final class Intake {
    private let authority: Authority
    private let requests: OpenRequests
    private let reception: Reception
    private let ledger: DeliveryLedger
    private let turns: TurnQueue
    private let held: HeldPublications
    private let outbox: Outbox
    private let crashPoints: CrashPoints
    private let statistics: BusStatistics

    init(authority: Authority, requests: OpenRequests, reception: Reception, ledger: DeliveryLedger, turns: TurnQueue,
         held: HeldPublications, outbox: Outbox, crashPoints: CrashPoints, statistics: BusStatistics) {
        (self.authority, self.requests, self.reception, self.ledger, self.turns) = (authority, requests, reception, ledger, turns)
        (self.held, self.outbox, self.crashPoints, self.statistics) = (held, outbox, crashPoints, statistics)
    }

    func accept(_ publish: Publish, from session: Session) {
        // A plugin's next process sends again what handling a redelivered event published; the bus has it once
        // (and a refused one is not refused twice).
        if let cause = publish.cause, session.isDurable, ledger.isRepeat(publish, cause: cause, by: session.name) {
            statistics.repeatsDropped += 1
            return
        }
        if let problem = authority.problem(with: publish, from: session, requests: requests) { return reception.refuse(session.identity, session: session, problem) }
        let requester = publish.topic.hasSuffix(Topic.requestSuffix) ? session.identity : nil
        if let requester, let corr = publish.corr, let problem = requests.problem(opening: publish.topic, corr: corr, by: requester) {
            return reception.refuse(session.identity, session: session, problem)
        }
        let event = PendingEvent(topic: publish.topic, body: publish.body, source: session.name,
                                 corr: publish.corr, deadline: publish.deadline, requester: requester)
        // An observer publishing out of its turn is handling something it observes: what it publishes waits
        // for a fixed point; a request cannot wait (the observer blocks on its reply), so it is refused.
        if turns.inForce, session.isObserver, session.acknowledges, !turns.isHeld(by: session) {
            if requester != nil { return reception.refuse(session.identity, session: session, .requestWhileObserving(topic: publish.topic)) }
            held.hold(event)
            crashPoints.arm(event.topic)
        } else if outbox.count >= Outbox.waitingLimit {
            reception.refuse(session.identity, session: session, .busFull(waiting: outbox.count))
        } else {
            outbox.append(event)
        }
    }
}
