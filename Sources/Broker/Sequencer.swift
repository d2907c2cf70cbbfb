// Sequencer: gap-free sequence numbers and bus instants for every event, and what the journal last said of each fact.

import BusProtocol

/// Numbers every event that enters the bus and stamps it with its bus instant; keeps the value that the last event
/// stating each service fact gave it (`ServiceEvent.fact`).
struct Sequencer {
    private(set) var lastSeq: UInt64 = 0
    /// The first number of this run: past what the last broker on the same state reserved (`welcome.firstSeq`).
    private(set) var firstSeq: UInt64 = 1
    /// The latest bus instant sequenced so far: a late timer is never stamped before it.
    private(set) var lastSequencedTime: BusTime = 0
    /// What the journal last said of each service fact, by fact (after a restart, the last one saved in bus.sqlite:
    /// what the resumed journal keeps).
    private(set) var announced: [String: [UInt8]] = [:]

    /// Goes on from where the last broker's saved state stopped.
    mutating func resume(lastSeq: UInt64, announced: [String: [UInt8]]) {
        self.lastSeq = lastSeq
        firstSeq = lastSeq + 1
        self.announced = announced
    }

    /// `event`'s envelope: the next sequence number, at `time`.
    mutating func stamp(_ event: PendingEvent, at time: BusTime) -> Envelope {
        lastSeq += 1
        lastSequencedTime = max(lastSequencedTime, time)
        if let fact = event.fact { announced[fact] = event.factValue ?? event.body }
        return Envelope(seq: lastSeq, time: time, topic: event.topic, source: event.source,
                        corr: event.corr, deadline: event.deadline, body: event.body)
    }
}
