// Dispatcher: sequenced events handed to sessions through the transport — after the save, alone or in batches — and losses reported.

import BusProtocol

/// Sends deliveries, each with its receiver's own delivery number, and counts what the transport queued or lost;
/// a run of losses is reported (`delivery-dropped`) when the next delivery gets through.
final class Dispatcher {
    /// A delivery of the batch being sequenced, sent once the batch is saved.
    private struct Unsent {
        var session: Session
        var envelope: EnvelopeFrame
        var seq: UInt64
        var isReply: Bool
    }

    private let transport: BusTransport
    private let ledger: DeliveryLedger
    private let statistics: BusStatistics
    private let outbox: Outbox
    private let answerTimers: AnswerTimers
    private let turns: TurnQueue
    private var unsent: [Unsent] = []
    /// `unsent`'s other buffer: the two take turns, so sending a batch allocates no list.
    private var spareUnsent: [Unsent] = []
    /// The receivers of batch messages being put together in `sendSaved`.
    private var batchReceivers: [Session] = []
    /// Saves what was sequenced and not saved yet (`Broker.saveSequenced`): run before any event is sent, by whatever
    /// path (a batch's deliveries, a turn, a returning plugin's mailbox), so a plugin is given nothing `bus.sqlite`
    /// does not hold, however many batches one save covers.
    var saveBeforeSending: () -> Void = {}

    init(transport: BusTransport, ledger: DeliveryLedger, statistics: BusStatistics, outbox: Outbox, answerTimers: AnswerTimers, turns: TurnQueue) {
        (self.transport, self.ledger, self.statistics, self.outbox, self.answerTimers, self.turns) = (transport, ledger, statistics, outbox, answerTimers, turns)
    }

    /// Sends a message of the broker's own to `identity`.
    func send(_ frames: [[UInt8]], to identity: [UInt8]) { transport.send(frames, to: identity) }

    /// Queues a delivery of the batch being sequenced, to go once the batch is saved.
    func sendAfterSave(_ envelope: EnvelopeFrame, seq: UInt64, to session: Session, isReply: Bool) {
        unsent.append(Unsent(session: session, envelope: envelope, seq: seq, isReply: isReply))
    }

    /// Sends the saved batch's deliveries. `batching`: what a receiver that reads batches gets of it goes in one
    /// message — one send, one wake-up and one receive instead of one per event, with the same delivery numbers in
    /// the same order (outside virtual time; there every delivery goes on its own: batching changes no turn).
    func sendSaved(batching: Bool) {
        guard !unsent.isEmpty else { return }
        saveBeforeSending()
        var batch = spareUnsent
        swap(&batch, &unsent)
        defer {
            batch.removeAll(keepingCapacity: true)
            spareUnsent = batch
        }
        let batching = batching && batch.count > 1
        // A session that ended meanwhile gets nothing: a supervised plugin has it in the ledger for its next process.
        for index in batch.indices where !batch[index].session.hasEnded {
            let session = batch[index].session
            guard batching && session.readsBatches else {
                deliver(batch[index].envelope, seq: batch[index].seq, to: session, isReply: batch[index].isReply)
                continue
            }
            if session.batchItems.isEmpty { batchReceivers.append(session) }
            session.batchItems.append(index)
        }
        // Receivers of the same events share one copy of them (the usual case: they subscribe to the same topics).
        var lastJoined: (items: [Int], batch: EnvelopeBatch)?
        for session in batchReceivers {
            let items = session.batchItems
            session.batchItems.removeAll(keepingCapacity: true)
            guard items.count > 1 else {
                let item = items[0]
                deliver(batch[item].envelope, seq: batch[item].seq, to: session, isReply: batch[item].isReply)
                continue
            }
            if lastJoined?.items != items {
                lastJoined = (items, EnvelopeBatch(items.map { batch[$0].envelope }))
            }
            deliver(items, of: batch, joined: lastJoined!.batch, to: session)
        }
        batchReceivers.removeAll(keepingCapacity: true)
    }

    /// Delivers one event now (`event <delivery>`, then the envelope its receivers share).
    @inline(__always)
    func deliver(_ envelope: EnvelopeFrame, seq: UInt64, to session: Session, isReply: Bool = false) {
        saveBeforeSending()
        noteHandOver(seq: seq, to: session, isReply: isReply)
        session.lastDelivery += 1
        let delivery = session.lastDelivery
        let queued = WireCodec.withEventHead(delivery: delivery) { head in
            transport.send(head: head, envelope: envelope, to: session.identity)
        }
        record(queued, delivery: delivery, seq: seq, to: session, isReply: isReply)
    }

    /// Delivers several events in one message (`events <first delivery>`, then their envelopes, one per line), to a
    /// session that reads batches. Each counts as a delivery of its own, with its own number.
    private func deliver(_ items: [Int], of batch: [Unsent], joined: EnvelopeBatch, to session: Session) {
        for item in items { noteHandOver(seq: batch[item].seq, to: session, isReply: batch[item].isReply) }
        let first = session.lastDelivery + 1
        session.lastDelivery += UInt64(items.count)
        let queued = WireCodec.withEventsHead(firstDelivery: first) { head in
            transport.send(head: head, batch: joined, to: session.identity)
        }
        for (offset, item) in items.enumerated() {
            record(queued, delivery: first + UInt64(offset), seq: batch[item].seq, to: session, isReply: batch[item].isReply)
        }
    }

    /// The OS's request in a delivery is in its receiver's hands: its reply deadline may start (at once outside turns).
    @inline(__always)
    private func noteHandOver(seq: UInt64, to session: Session, isReply: Bool) {
        if !answerTimers.isEmpty && !isReply {
            answerTimers.handedOver(seq: seq, to: session.name, inTurn: turns.inForce && session.acknowledges)
        }
    }

    /// Counts one delivery, queued or lost; a run of losses is reported when the next delivery gets through.
    @inline(__always)
    private func record(_ queued: Bool, delivery: UInt64, seq: UInt64, to session: Session, isReply: Bool) {
        if queued {
            // A reply is awaited by the call that asked, not handled as an event: it takes no turn and needs no
            // ack (an ack of its seq would cover events still on their way, protocol.md § 9).
            session.recordDelivered(seq: seq, isReply: isReply)
            if session.isDurable { ledger.markDelivered(seq: seq, to: session.name) }
            statistics.deliveries += 1
            if let start = session.dropRunStart {
                session.dropRunStart = nil
                reportDrops(session, fromDelivery: start.delivery, toDelivery: delivery - 1, fromSeq: start.seq, toSeq: seq - 1)
            }
        } else {
            session.dropped += 1
            statistics.dropped += 1
            if session.dropRunStart == nil { session.dropRunStart = (delivery, seq) }
        }
    }

    private func reportDrops(_ session: Session, fromDelivery: UInt64, toDelivery: UInt64, fromSeq: UInt64, toSeq: UInt64) {
        outbox.reportError("delivery-dropped", sender: "broker",
                           message: "\(toDelivery - fromDelivery + 1) deliveries to \(session.name) were dropped: its queue was full (deliveries \(fromDelivery)–\(toDelivery), around seq \(fromSeq)–\(toSeq))",
                           details: ["receiver": .string(session.name), "from": .int(Int64(fromDelivery)), "to": .int(Int64(toDelivery))], countedIn: statistics)
    }
}
