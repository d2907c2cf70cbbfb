import BusClient
import BusProtocol
import Foundation
import ZeroMQ

/// What idle sessions cost the others: one well-behaved client's round trip (publish, then receive its own event
/// back) through a broker alone, then through the same kind of broker holding N idle sessions that only heartbeat,
/// once a second each, spread over the second as independent clients' would be.
struct IdleSessionsBench {
    let idleSessions: Int
    let roundTrips: Int
    /// Round trips are spread over several heartbeat periods, so that they meet the idle sessions' heartbeats.
    let paceMilliseconds: Int
    let directory: String
    let log: StandardErrorCapture

    struct Phase {
        let idleSessions: Int
        let latenciesMicroseconds: [Double]
        /// The broker thread's CPU time over the wall time of the round trips: what the sessions cost it.
        let brokerCPUShare: Double

        func percentile(_ p: Double) -> Double {
            let sorted = latenciesMicroseconds.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
    }

    func run(progress: (String) -> Void) throws -> [Phase] {
        var phases: [Phase] = []
        for (index, idle) in [0, idleSessions].enumerated() {
            let phase = try measure(idle: idle, index: index)
            progress("\(idle) idle sessions: round trip p50 \(Format.micro(phase.percentile(0.5))) µs, p99 \(Format.micro(phase.percentile(0.99))) µs, broker CPU \(String(format: "%.1f", phase.brokerCPUShare * 100)) %")
            phases.append(phase)
        }
        return phases
    }

    /// One phase, with the broker's log kept out of standard error.
    private func measure(idle: Int, index: Int) throws -> Phase {
        log.begin()
        defer { log.end() }
        let broker = try BrokerHost(directory: "\(directory)/idle-\(index)", highWaterMark: 100_000)
        defer { broker.stop() }
        let crowd = try IdleCrowd(endpoint: broker.endpoint, count: idle)
        defer { crowd.stop() }
        let (cpuBefore, wallBefore) = (broker.worker.cpuTime, monotonicNanoseconds())
        let latencies = try measureRoundTrips(endpoint: broker.endpoint)
        let share = Double(broker.worker.cpuTime - cpuBefore) / Double(max(1, monotonicNanoseconds() - wallBefore))
        try crowd.check()
        return Phase(idleSessions: idle, latenciesMicroseconds: latencies, brokerCPUShare: share)
    }

    private func measureRoundTrips(endpoint: String) throws -> [Double] {
        try RoundTrips(endpoint: endpoint, count: roundTrips, paceMilliseconds: paceMilliseconds).measure()
    }
}

/// N sessions on one thread: each says hello, then only heartbeats (never reads: what the broker sends them waits
/// in their queues), so the bench's own CPU stays off the broker's cores.
final class IdleCrowd {
    private let sockets: [Socket]
    private let context: Context
    private var worker: Worker?
    private let stopping = ManagedAtomicFlag()

    init(endpoint: String, count: Int) throws {
        context = try Context(ioThreads: 1, maximumSockets: Int32(count + 16))
        var sockets: [Socket] = []
        let credential = BusCredential.forClient(endpoint: endpoint)
        for index in 0..<count {
            let socket = try Socket(context, .dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.connect(endpoint)
            try socket.send(WireCodec.encode(.hello(Hello(name: "idle-\(index)", role: .generic, subscriptions: [], acknowledges: false, credential: credential))))
            sockets.append(socket)
        }
        self.sockets = sockets
        // Every session welcomed before measuring.
        let deadline = monotonicNanoseconds() + 30_000_000_000
        for (index, socket) in sockets.enumerated() {
            try socket.setReceiveTimeout(milliseconds: 100)
            var welcomed = false
            while !welcomed {
                guard monotonicNanoseconds() < deadline else { throw BenchFailure("idle session \(index) was not welcomed within 30 s") }
                if let frames = try socket.receive(), case .welcome = try WireCodec.decodeBrokerMessage(frames) { welcomed = true }
            }
        }
        guard count > 0 else { return }
        let heartbeat = WireCodec.encode(.heartbeat)
        let stopping = self.stopping
        worker = Worker("idle-crowd") {
            // Socket i beats at i/N of each second.
            let start = monotonicNanoseconds()
            var beat = 0
            while !stopping.isSet {
                let due = start + UInt64(beat) * 1_000_000_000 / UInt64(count)
                let now = monotonicNanoseconds()
                if due > now { usleep(UInt32(min(1_000, (due - now) / 1_000))); continue }
                _ = try sockets[beat % count].send(heartbeat, dontWait: true)
                beat += 1
            }
        }
    }

    /// Throws what the heartbeating thread failed with, if anything.
    func check() throws {
        guard let worker, worker.hasFinished else { return }
        try worker.join()
    }

    func stop() {
        stopping.set()
        try? worker?.join()
        for socket in sockets { socket.close() }
    }
}

/// A flag one thread sets and another reads.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
