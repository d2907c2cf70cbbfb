import Foundation
import ZeroMQ

/// The baseline: libzmq's own `zmq_proxy` between an XSUB and an XPUB socket, a PUB publisher and SUB subscribers.
///
/// It does what the broker's transport must do at the least — take each message in once and fan it out — and
/// nothing more: no sequencing, no validation, no envelope.
struct ProxyLoad: Load {
    let shape: LoadShape
    var kind: LoadKind { .proxy }

    func run(events: Int, index: Int) throws -> RunResult {
        let frontend = "ipc://\(shape.directory)/proxy-\(index)-in.sock"
        let backend = "ipc://\(shape.directory)/proxy-\(index)-out.sock"
        let proxy = try ProxyHost(frontend: frontend, backend: backend, highWaterMark: shape.highWaterMark)
        defer { proxy.stop() }

        let sawProbe = DispatchSemaphore(value: 0)
        let subscribers = try (0..<shape.subscribers).map { number in
            try ProxySubscriber(name: "sub-\(number + 1)", endpoint: backend, shape: shape, expected: events, sawProbe: sawProbe)
        }
        let workers = subscribers.map { subscriber in Worker(subscriber.name) { try subscriber.receiveAll() } }

        let bodies = shape.bodies.bodies(count: events)
        let publisher = try ProxyPublisher(endpoint: frontend, highWaterMark: shape.highWaterMark)
        try publisher.waitUntilHeard(by: shape.subscribers, signal: sawProbe)
        let publisherClock = CPUUsage.currentThreadClock()
        let cpuBefore = CPUUsage.now(publisherClock: publisherClock, hub: proxy.worker, subscribers: workers)
        let firstPublish = monotonicNanoseconds()
        try publisher.publish(bodies)
        for worker in workers { try worker.join() }
        let cpu = CPUUsage.now(publisherClock: publisherClock, hub: proxy.worker, subscribers: workers) - cpuBefore
        publisher.close()  // only now: closing earlier could discard what is still queued once the linger runs out
        return RunResult(load: kind, published: events, subscribers: subscribers.map(\.tally),
                         firstPublish: firstPublish, brokerDropped: nil, cpu: cpu)
    }
}

/// `zmq_proxy` on its own thread with its own context, as a separate proxy process would have.
final class ProxyHost {
    private let context: Context
    /// The thread running `zmq_proxy`.
    let worker: Worker
    private var stopped = false

    init(frontend: String, backend: String, highWaterMark: Int32) throws {
        context = try Context()
        let xsub = try Socket(context, .xsub)
        let xpub = try Socket(context, .xpub)
        for socket in [xsub, xpub] {
            try socket.setSendHighWaterMark(highWaterMark)
            try socket.setReceiveHighWaterMark(highWaterMark)
        }
        try xsub.bind(frontend)
        try xpub.bind(backend)
        // The sockets move to the proxy thread and are used and closed only there, as libzmq requires.
        worker = Worker("proxy") {
            defer { xsub.close(); xpub.close() }
            try runProxy(frontend: xsub, backend: xpub)
        }
    }

    /// Ends `zmq_proxy` (it returns when its context is shut down) and waits for its thread.
    func stop() {
        guard !stopped else { return }
        stopped = true
        context.shutdown()
        try? worker.join()
    }
}

/// The PUB side: a probe until every subscriber hears it (PUB/SUB drops messages sent before a subscription
/// has travelled through the proxy), then the measured events as fast as the socket takes them.
final class ProxyPublisher {
    private let socket: Socket
    private let topic = Array(LoadShape.topic.utf8)

    init(endpoint: String, highWaterMark: Int32) throws {
        socket = try Socket(try Context(), .pub)
        try socket.setSendHighWaterMark(highWaterMark)
        try socket.connect(endpoint)
    }

    /// Sends probes every millisecond until `count` subscribers have signalled that one arrived.
    func waitUntilHeard(by count: Int, signal: DispatchSemaphore) throws {
        var heard = 0
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while heard < count {
            guard monotonicNanoseconds() < deadline else { throw BenchFailure("only \(heard) of \(count) proxy subscribers heard the probe within 10 s") }
            try socket.send([topic, ProxySubscriber.probe])
            while heard < count, signal.wait(timeout: .now() + .milliseconds(1)) == .success { heard += 1 }
        }
    }

    func publish(_ bodies: [[UInt8]]) throws {
        for body in bodies { try socket.send([topic, body]) }
    }

    func close() { socket.close() }
}

/// A SUB subscriber: counts every event on arrival and checks the number in its body for holes.
final class ProxySubscriber {
    static let probe: [UInt8] = Array("probe".utf8)
    let name: String
    private(set) var tally: Tally
    private let socket: Socket
    private let shape: LoadShape
    private let expected: Int
    private let sawProbe: DispatchSemaphore

    init(name: String, endpoint: String, shape: LoadShape, expected: Int, sawProbe: DispatchSemaphore) throws {
        self.name = name
        self.shape = shape
        self.expected = expected
        self.sawProbe = sawProbe
        tally = Tally(name: name)
        socket = try Socket(try Context(), .sub)
        try socket.setReceiveHighWaterMark(shape.highWaterMark)
        try socket.setReceiveTimeout(milliseconds: 100)
        try socket.subscribe(LoadShape.topic)
        try socket.connect(endpoint)
    }

    /// Receives until every expected event arrived, or nothing arrived for the idle timeout.
    func receiveAll() throws {
        defer { socket.close() }
        var heardProbe = false
        var next = 0
        var lastHeard = monotonicNanoseconds()
        while tally.received < expected {
            guard let frames = try socket.receive() else {
                if monotonicNanoseconds() - lastHeard > shape.idleTimeoutNanoseconds { break }
                continue
            }
            let now = monotonicNanoseconds()
            lastHeard = now
            guard frames.count == 2, frames[1] != ProxySubscriber.probe else {
                if !heardProbe { heardProbe = true; sawProbe.signal() }
                continue
            }
            guard let number = BodyMaker.number(in: frames[1]) else { throw BenchFailure("\(name): an event without a number") }
            next = tally.arrived(number: number, expected: next, at: now)
        }
        tally.missing += max(0, expected - next)
    }
}
