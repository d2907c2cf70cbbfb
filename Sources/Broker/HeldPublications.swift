// HeldPublications: what observers published out of turn, held until the bus settles, then sequenced in configuration order.

/// In virtual time an observer handles what it only observes while others take their turns, so when its publications
/// arrive is process timing. They wait here and are sequenced together once everything delivered has been handled —
/// a point the journal fixes — in the configuration's order of their publishers. Kept in `bus.sqlite` while held.
final class HeldPublications {
    private let ledger: DeliveryLedger
    private var events: [PendingEvent] = [] {
        didSet { ledger.noteHeld(events.map(\.held)) }
    }

    init(ledger: DeliveryLedger) { self.ledger = ledger }

    var isEmpty: Bool { events.isEmpty }

    func hold(_ event: PendingEvent) { events.append(event) }

    /// What the last broker held for a settled point it did not reach.
    func restore(_ held: [PendingEvent]) { events = held }

    /// Takes them all: by their publisher's place in `order` (the configuration's; others after, by name), each
    /// publisher's in the order they came.
    func takeAll(ordered order: [String: Int]) -> [PendingEvent] {
        let sorted = events.enumerated().sorted {
            (order[$0.element.source] ?? Int.max, $0.element.source, $0.offset) < (order[$1.element.source] ?? Int.max, $1.element.source, $1.offset)
        }
        events = []
        return sorted.map(\.element)
    }

    /// Takes them all as they came (the broker is stopping).
    func takeAll() -> [PendingEvent] {
        defer { events = [] }
        return events
    }
}
