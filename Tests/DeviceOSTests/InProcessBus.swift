import Broker
import BusProtocol
import DeviceAPI
import Foundation

/// A `ServiceBus` in the test's hands, for driving a service (the device OS) without a broker or any process.
///
/// Like the broker, it numbers each event, stamps it with bus time, keeps it (`journal`) and hands it to the service
/// when the service subscribes to it — an event emitted while one is handled is sequenced after it. The test plays
/// the plugins (`publish` as one of them, `connect` its role) and the clock: bus timers run when it moves the clock
/// (`advance`), `whenReady` when it says the bus is ready, `whenQuiet` when it lets the bus settle. Wall-time and
/// answer deadlines never fire: the test's plugins always answer in time.
final class InProcessBus: ServiceBus {
    private(set) var journal: [Envelope] = []
    private(set) var now: BusTime
    private(set) var announced: [String: [UInt8]] = [:]
    /// The calls on the plugins a service made (`restartPlugin`, `crashAndRestart`, …), in words.
    private(set) var pluginCalls: [String] = []
    private(set) var storageFailures: [String] = []
    private(set) var stopped = false

    private var service: BrokerService?
    private var roles: [String: Role] = [:]
    private var pluginSubscriptions: [String] = []
    private var waiting: [ServiceEvent] = []
    private var sequencing = false
    private var nextTimer: UInt64 = 0
    private var timers: [(id: UInt64, at: BusTime, action: () -> Void)] = []
    private var ready = false
    private var readyActions: [() -> Void] = []
    private var quietActions: [() -> Void] = []

    init(start: BusTime) { now = start }

    /// Attaches `service`, as the broker does before it serves.
    func attach(_ service: BrokerService) {
        self.service = service
        service.attach(to: self)
    }

    /// A plugin of `role` connects, wanting `subscriptions` (what `isSubscribed` answers for).
    func connect(_ name: String, role: Role, subscriptions: [String] = []) {
        roles[name] = role
        pluginSubscriptions += subscriptions
    }

    /// Every configured plugin has connected: `bus.ready`, and what waited for it runs.
    func becomeReady() {
        ready = true
        emit(ServiceEvent(topic: "bus.ready", bodyJSON: Array("{}".utf8)))
        let actions = readyActions
        readyActions = []
        for action in actions { action() }
        sequence()
    }

    /// A plugin (or a tool) publishes: sequenced like the service's own events.
    func publish<Body: Encodable>(_ topic: String, _ body: Body, from source: String, corr: String? = nil) {
        emit(ServiceEvent(topic: topic, bodyJSON: DeviceAPICoding.encode(body), source: source, corr: corr))
    }

    /// Everything handed out has been handled: what waits for a quiet bus runs, until nothing more does.
    func settle() {
        while !quietActions.isEmpty {
            let actions = quietActions
            quietActions = []
            for action in actions { action() }
            sequence()
        }
    }

    /// Moves bus time to `time`, running the timers due on the way in order.
    func advance(to time: BusTime) {
        while let due = timers.filter({ $0.at <= time }).min(by: { ($0.at, $0.id) < ($1.at, $1.id) }) {
            timers.removeAll { $0.id == due.id }
            now = max(now, due.at)
            due.action()
            sequence()
        }
        now = max(now, time)
    }

    /// The events on `topic`, in order.
    func events(_ topic: String) -> [Envelope] { journal.filter { $0.topic == topic } }

    // MARK: ServiceBus

    func emit(_ event: ServiceEvent) {
        waiting.append(event)
        sequence()
    }

    @discardableResult
    func schedule(at time: BusTime, _ action: @escaping () -> Void) -> UInt64 {
        nextTimer += 1
        timers.append((nextTimer, time, action))
        return nextTimer
    }

    func cancel(_ timer: UInt64) { timers.removeAll { $0.id == timer } }

    @discardableResult
    func afterWallTime(milliseconds: Int64, _ action: @escaping () -> Void) -> UInt64 {
        nextTimer += 1
        return nextTimer
    }

    func cancelWallTimer(_ timer: UInt64) {}
    func afterAnswerTime(for corr: String, milliseconds: Int64, _ action: @escaping () -> Void) {}
    func cancelAnswerTime(for corr: String) {}

    func whenReady(_ action: @escaping () -> Void) {
        if ready { action() } else { readyActions.append(action) }
    }

    func whenQuiet(_ action: @escaping () -> Void) { quietActions.append(action) }

    func isSubscribed(_ topic: String) -> Bool {
        (pluginSubscriptions + (service?.subscriptions ?? [])).contains { Topic.matches(topic, prefix: $0) }
    }

    func isConnected(role: Role, among audience: Set<String>?) -> Bool {
        roles.contains { $0.value == role && (audience?.contains($0.key) ?? true) }
    }

    func pluginsThatCouldNotAct(since seq: UInt64) -> [(name: String, why: String)] { [] }
    func isSupervisedPlugin(_ name: String) -> Bool { roles[name] != nil }
    func restartAllPlugins(reason: String) { pluginCalls.append("restart all: \(reason)") }
    func restartPlugin(named name: String, reason: String) { pluginCalls.append("restart \(name): \(reason)") }
    func setPluginSetting(_ key: String, _ value: JSONValue) {}
    func crashAndRestart() { pluginCalls.append("crash and restart") }
    func reportStorageFailure(_ message: String) { storageFailures.append(message) }
    func countPluginReport(_ code: String, _ message: String) {}
    func stop() { stopped = true }

    /// Numbers and hands out what waits, in order; an event emitted while one is handled waits its turn.
    private func sequence() {
        guard !sequencing else { return }
        sequencing = true
        defer { sequencing = false }
        while !waiting.isEmpty {
            let event = waiting.removeFirst()
            let envelope = Envelope(seq: UInt64(journal.count + 1), time: now, topic: event.topic, source: event.source,
                                    corr: event.corr, deadline: event.deadline, body: event.bodyJSON)
            journal.append(envelope)
            if let fact = event.fact { announced[fact] = event.factValue ?? event.bodyJSON }
            if let service, service.subscriptions.contains(where: { Topic.matches(event.topic, prefix: $0) }) { service.handle(envelope) }
        }
    }
}
