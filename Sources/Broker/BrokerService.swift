import BusProtocol

/// An in-process part of the broker — the device OS's clock, enforcement and scheduling — that sees events
/// like a plugin does and emits events through the sequencer.
public protocol BrokerService: AnyObject {
    /// Topic prefixes this service receives.
    var subscriptions: [String] { get }
    /// Called once before the broker starts serving.
    func attach(to bus: BrokerBus)
    /// Called for each matching event, in sequence order.
    func handle(_ envelope: Envelope)
    /// The monotonic time (ms) at which `tick` should next run, if any.
    func nextWakeup() -> Int64?
    /// Called from the broker loop at least every heartbeat interval.
    func tick()
}

extension BrokerService {
    public func nextWakeup() -> Int64? { nil }
    public func tick() {}
}

/// What a service may do on the bus: emit events (sequenced after the current one) and read the clock.
public struct BrokerBus {
    unowned let broker: Broker

    /// Emits an event from `source` (default "broker").
    public func emit(topic: String, body: JSONValue, source: String = "broker", corr: String? = nil, deadline: BusTime? = nil) {
        broker.emit(topic: topic, body: body, source: source, corr: corr, deadline: deadline)
    }

    /// Bus time now.
    public var now: BusTime { broker.clock.now() }
}
