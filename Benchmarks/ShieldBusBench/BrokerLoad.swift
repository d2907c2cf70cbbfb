import BusClient
import BusProtocol
import Broker
import DeviceAPI
import Foundation
import ZeroMQ

/// The ShieldBus broker, in this process on its own thread, with a `BusConnection` publisher and subscribers
/// that are either lean (a DEALER socket reading frames, like the proxy's subscribers) or the SDK's `BusConnection`.
///
/// In-process, because a child `shieldbus run` would add process start-up and nothing else: the broker's loop
/// is the same code, on its own thread with its own libzmq context and I/O thread, as in its own process.
struct BrokerLoad: Load {
    let shape: LoadShape
    let kind: LoadKind
    let log: StandardErrorCapture

    func run(events: Int, index: Int) throws -> RunResult {
        log.begin()  // the broker logs its start and stop at info level; keep them out of the results
        defer { log.end() }
        let broker = try BrokerHost(directory: "\(shape.directory)/broker-\(index)", highWaterMark: shape.highWaterMark)
        defer { broker.stop() }

        let subscribers: [BrokerSubscriber] = try (0..<shape.subscribers).map { number in
            let name = "sub-\(number + 1)"
            switch kind {
            case .brokerSDK: return try SDKSubscriber(name: name, endpoint: broker.endpoint, shape: shape, expected: events)
            default: return try LeanSubscriber(name: name, endpoint: broker.endpoint, shape: shape, expected: events)
            }
        }
        // Every subscriber has been welcomed, so the broker already routes to it: nothing published from now is lost.
        let bodies = shape.bodies.bodies(count: events)
        let publisher = try BusConnection(endpoint: broker.endpoint, hello: Hello(name: "publisher", role: .generic, subscriptions: [], acknowledges: false))
        try publisher.connect()
        let workers = subscribers.map { subscriber in Worker(subscriber.name) { try subscriber.receiveAll() } }
        let publisherClock = CPUUsage.currentThreadClock()
        let cpuBefore = CPUUsage.now(publisherClock: publisherClock, hub: broker.worker, subscribers: workers)
        let firstPublish = monotonicNanoseconds()
        for body in bodies { try publisher.publish(Publish(topic: LoadShape.topic, body: body)) }
        for worker in workers { try worker.join() }
        let cpu = CPUUsage.now(publisherClock: publisherClock, hub: broker.worker, subscribers: workers) - cpuBefore
        let dropped = try broker.droppedDeliveries()
        publisher.close()
        return RunResult(load: kind, published: events, subscribers: subscribers.map(\.tally),
                         firstPublish: firstPublish, brokerDropped: dropped, cpu: cpu)
    }
}

/// A `Broker` serving on its own thread until `stop()`.
final class BrokerHost {
    let endpoint: String
    /// The thread running the broker's loop.
    let worker: Worker
    private var stopped = false

    init(directory: String, highWaterMark: Int32) throws {
        var settings = BrokerSettings(runtimeDirectory: RuntimeDirectory(path: directory), table: .screenTime)
        settings.deliveryHighWaterMark = highWaterMark
        endpoint = settings.bindEndpoint
        let broker = Broker(settings: settings)
        let ready = DispatchSemaphore(value: 0)
        worker = Worker("broker") {
            defer { ready.signal() }  // also when run() fails before it is ready
            try broker.run(onReady: { ready.signal() })
        }
        let gotReady = ready.wait(timeout: .now() + 10) == .success
        if worker.hasFinished {
            stopped = true
            try worker.join()
            throw BenchFailure("the broker stopped as soon as it started (runtime directory \(directory))")
        }
        guard gotReady else { throw BenchFailure("the broker did not get ready within 10 s (runtime directory \(directory))") }
    }

    /// The broker's own count of deliveries it dropped, from its status report.
    func droppedDeliveries() throws -> Int {
        let tool = try BusConnection(endpoint: endpoint, hello: Hello(name: "bench-status", role: .tool, subscriptions: []))
        defer { tool.close() }
        try tool.connect()
        let report = try tool.status()
        guard let dropped = report["counters"]?["dropped"]?.intValue else { throw BenchFailure("the broker's status report has no dropped counter") }
        return Int(dropped)
    }

    /// The broker's own count of the errors it answered, by code, from its status report.
    func errorCounts() throws -> [String: Int64] {
        let tool = try BusConnection(endpoint: endpoint, hello: Hello(name: "bench-errors", role: .tool, subscriptions: []))
        defer { tool.close() }
        try tool.connect()
        let counts = try tool.status()["counters"]?["errorsByCode"]?.objectValue ?? [:]
        return counts.compactMapValues(\.intValue)
    }

    /// Stops the broker the way its own process is stopped — SIGTERM, which its self-pipe turns into a clean
    /// shutdown inside its loop (`Broker.stop()` is for calls from inside that loop) — and waits for it.
    func stop() {
        guard !stopped else { return }
        stopped = true
        // Only while it runs: once run() returns it has put back the default SIGTERM action, which ends the process.
        guard !worker.hasFinished else { try? worker.join(); return }
        kill(getpid(), SIGTERM)
        try? worker.join()
    }
}

/// A subscriber to the broker, run on its own thread.
protocol BrokerSubscriber: AnyObject {
    var name: String { get }
    var tally: Tally { get }
    func receiveAll() throws
}

/// Checks the two counters the broker gives every delivery: the receiver's own delivery number and the global seq.
struct DeliveryCheck {
    private var nextDelivery = 1
    private var lastSeq: UInt64?

    /// Counts one arrival in `tally`, noting holes in the delivery numbers and in the seq.
    mutating func arrived(delivery: UInt64, seq: UInt64, at time: UInt64, in tally: inout Tally) {
        nextDelivery = tally.arrived(number: Int(delivery), expected: nextDelivery, at: time)
        // Nothing else is published while a run is measured, so the events' seqs must follow one another.
        if let lastSeq, seq != lastSeq + 1 { tally.seqGaps += 1 }
        lastSeq = seq
    }

    /// Deliveries that should have come after the last one that did.
    func shortfall(expected: Int) -> Int { max(0, expected - (nextDelivery - 1)) }
}

/// Speaks the protocol with a bare DEALER socket and reads only what it checks — the delivery number in the first
/// frame and the seq at the head of each envelope — so that it does no more per event than a proxy subscriber does.
/// It reads batches (`events`): the envelopes one per line, numbered on from the first frame's delivery number.
final class LeanSubscriber: BrokerSubscriber {
    let name: String
    private(set) var tally: Tally
    private let socket: Socket
    private let shape: LoadShape
    private let expected: Int
    /// The envelope's fixed head (its field order is fixed, see `WireCodec.encodeEnvelope`).
    private static let seqHead = Array(#"{"v":1,"seq":"#.utf8)

    init(name: String, endpoint: String, shape: LoadShape, expected: Int) throws {
        self.name = name
        self.shape = shape
        self.expected = expected
        tally = Tally(name: name)
        socket = try Socket(try Context(), .dealer)
        try socket.setReceiveHighWaterMark(shape.highWaterMark)
        try socket.setSendHighWaterMark(shape.highWaterMark)
        try socket.setReceiveTimeout(milliseconds: 100)
        try socket.connect(endpoint)
        let hello = Hello(name: name, role: .generic, subscriptions: [LoadShape.topic], acknowledges: false,
                          credential: BusCredential.forClient(endpoint: endpoint), readsBatches: true)
        try socket.send(WireCodec.encode(.hello(hello)))
        let deadline = monotonicNanoseconds() + 5_000_000_000
        while monotonicNanoseconds() < deadline {
            guard let frames = try socket.receive() else { continue }
            if case .welcome = try WireCodec.decodeBrokerMessage(frames) { return }
        }
        throw BenchFailure("\(name): no welcome from the broker within 5 s")
    }

    func receiveAll() throws {
        defer { socket.close() }
        var check = DeliveryCheck()
        let heartbeat = WireCodec.encode(.heartbeat)
        var lastSent = monotonicNanoseconds()
        var lastHeard = lastSent
        while tally.received < expected {
            let frames = try socket.receive()
            let now = monotonicNanoseconds()
            // The broker drops a session it has not heard from for 5 s, so say something every second.
            if now - lastSent > 1_000_000_000 { try socket.send(heartbeat); lastSent = now }
            // Only events count as progress: the broker's heartbeats go on after the last event.
            guard let frames, frames.count == 2, let head = LeanSubscriber.eventHeadLength(frames[0]) else {
                if now - lastHeard > shape.idleTimeoutNanoseconds { break }
                continue
            }
            lastHeard = now
            guard var delivery = LeanSubscriber.decimal(frames[0], from: head) else {
                throw BenchFailure("\(name): an event whose delivery number cannot be read")
            }
            // One envelope, or a batch's, one per line: each starts with its seq.
            var start = 0
            let envelopes = frames[1]
            while start < envelopes.count {
                guard envelopes[start...].starts(with: LeanSubscriber.seqHead),
                      let seq = LeanSubscriber.decimal(envelopes, from: start + LeanSubscriber.seqHead.count) else {
                    throw BenchFailure("\(name): an event whose seq cannot be read")
                }
                check.arrived(delivery: delivery, seq: seq, at: now, in: &tally)
                guard head == WireCodec.eventsHeadPrefix.count else { break }
                delivery += 1
                start = (envelopes[start...].firstIndex(of: WireCodec.batchSeparator) ?? envelopes.count) + 1
            }
        }
        tally.missing += check.shortfall(expected: expected)
    }

    /// The length of an event's (`event `) or a batch's (`events `) kind and space; nil for other kinds.
    private static func eventHeadLength(_ head: [UInt8]) -> Int? {
        if head.starts(with: WireCodec.eventHeadPrefix) { return WireCodec.eventHeadPrefix.count }
        if head.starts(with: WireCodec.eventsHeadPrefix) { return WireCodec.eventsHeadPrefix.count }
        return nil
    }

    /// The ASCII decimal number starting at `from`, up to the first non-digit.
    private static func decimal(_ bytes: [UInt8], from start: Int) -> UInt64? {
        var value: UInt64 = 0
        var index = start
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
            value = value * 10 + UInt64(bytes[index] - 0x30)
            index += 1
        }
        return index > start ? value : nil
    }
}

/// A subscriber as a Swift plugin is written: `BusConnection.receive`, which decodes and validates every event.
final class SDKSubscriber: BrokerSubscriber {
    let name: String
    private(set) var tally: Tally
    private let connection: BusConnection
    private let shape: LoadShape
    private let expected: Int

    init(name: String, endpoint: String, shape: LoadShape, expected: Int) throws {
        self.name = name
        self.shape = shape
        self.expected = expected
        tally = Tally(name: name)
        connection = try BusConnection(endpoint: endpoint, hello: Hello(name: name, role: .generic, subscriptions: [LoadShape.topic], acknowledges: false))
        try connection.connect()
    }

    func receiveAll() throws {
        defer { connection.close() }
        var check = DeliveryCheck()
        var lastHeard = monotonicNanoseconds()
        while tally.received < expected {
            let message = try connection.receive(timeoutMilliseconds: 100)
            let now = monotonicNanoseconds()
            guard case .event(let envelope, let delivery)? = message else {
                if now - lastHeard > shape.idleTimeoutNanoseconds { break }
                continue
            }
            lastHeard = now
            check.arrived(delivery: delivery, seq: envelope.seq, at: now, in: &tally)
        }
        tally.missing += check.shortfall(expected: expected)
    }
}
