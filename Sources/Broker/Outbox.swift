// Outbox: events waiting to be sequenced, in the order they were emitted, drained by the sequencer in batches.

import BusProtocol

/// An event on its way to the sequencer: a plugin's publication, or the broker's or a service's own event.
struct PendingEvent {
    var topic: String
    var body: [UInt8]
    var source: String
    var corr: String?
    var deadline: BusTime?
    var requester: [UInt8]?
    /// The plugins an OS event is for (one product's, on a device with several); nil: every subscriber.
    var audience: Set<String>? = nil
    /// The service fact this event states (`ServiceEvent.fact`), if it states one, and its value when
    /// that is not the body.
    var fact: String? = nil
    var factValue: [UInt8]? = nil

    /// As kept in `bus.sqlite` while held (an observer's publication: never a request, for everyone).
    var held: DeliveryStore.Held { DeliveryStore.Held(source: source, topic: topic, body: body, corr: corr, deadline: deadline) }

    init(topic: String, body: [UInt8], source: String, corr: String?, deadline: BusTime?, requester: [UInt8]?, audience: Set<String>? = nil) {
        (self.topic, self.body, self.source, self.corr, self.deadline, self.requester, self.audience) = (topic, body, source, corr, deadline, requester, audience)
    }

    init(held: DeliveryStore.Held) {
        self.init(topic: held.topic, body: held.body, source: held.source, corr: held.corr, deadline: held.deadline, requester: nil)
    }
}

extension Outbox {
    /// Counts a problem under `code` in `statistics` and queues its `bus.error` (`code`, `sender`, `message` and
    /// `details`): one place, so what `status` counts and what the journal tells cannot drift apart.
    func reportError(_ code: String, sender: String, message: String, details: [String: JSONValue] = [:], countedIn statistics: BusStatistics) {
        statistics.countError(code)
        var body = details
        (body["code"], body["sender"], body["message"]) = (.string(code), .string(sender), .string(message))
        emit(topic: "bus.error", body: .object(body))
    }
}

/// What draining the outbox does with a batch of events: the broker's sequencing, journaling, saving and sending.
protocol OutboxDrain: AnyObject {
    /// The bus instant the batch's events share (in scaled time, a step and what it sets off are not told apart by
    /// how long the broker took between them).
    func batchInstant() -> BusTime
    /// Sequences one event of the batch; false when no number can be given now (it and those after it wait).
    func sequence(_ event: PendingEvent, at instant: BusTime) -> Bool
    /// The batch is sequenced: journal it, save it, send it.
    func commitBatch()
}

/// Events emitted while something else is handled wait here and are sequenced in order when the outbox is drained,
/// never inside another event's handling. Events emitted while a batch is sequenced join its end.
final class Outbox {
    /// Publications peers may leave waiting while nothing can be numbered (the store cannot be written); more are
    /// refused (`bus-full`), so a broken disk costs bounded memory.
    static let waitingLimit = 100_000

    private var events: [PendingEvent] = []
    private var isDraining = false
    weak var drainer: OutboxDrain?

    var isEmpty: Bool { events.isEmpty }
    var count: Int { events.count }
    var last: PendingEvent? { events.last }
    /// The events waiting, in the order they were emitted.
    var waiting: [PendingEvent] { events }

    func append(_ event: PendingEvent) { events.append(event) }
    func append(contentsOf more: [PendingEvent]) { events.append(contentsOf: more) }

    /// Queues an event from the broker itself (or a service).
    func emit(topic: String, body: JSONValue, source: String = "broker", corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil) {
        emit(topic: topic, bodyJSON: body.jsonBytes, source: source, corr: corr, deadline: deadline, audience: audience)
    }

    /// Queues an event whose body is already compact JSON (an object).
    func emit(topic: String, bodyJSON: [UInt8], source: String = "broker", corr: String? = nil, deadline: BusTime? = nil, audience: Set<String>? = nil,
              fact: String? = nil, factValue: [UInt8]? = nil) {
        var event = PendingEvent(topic: topic, body: bodyJSON, source: source, corr: corr, deadline: deadline, requester: nil, audience: audience)
        event.fact = fact
        event.factValue = factValue
        events.append(event)
    }

    /// Sequences every queued event, and those queued meanwhile, as one batch, then commits it. Within a drain this
    /// does nothing: what is emitted meanwhile waits for the drain in progress, or the next one. When numbering
    /// stops partway, what was sequenced is committed and the rest waits, in order, for a later drain.
    func drain() {
        guard !isDraining, let drainer else { return }
        isDraining = true
        defer { isDraining = false }
        let instant = drainer.batchInstant()
        var index = 0
        while index < events.count, drainer.sequence(events[index], at: instant) { index += 1 }
        if index == events.count { events.removeAll(keepingCapacity: true) } else { events.removeFirst(index) }
        if index > 0 { drainer.commitBatch() }
    }
}
