import BusClient
import BusProtocol
import Foundation
import ZeroMQ

/// What abusive clients cost a well-behaved one (docs/security.md § 6): its round trip (publish, receive its own event
/// back) through a quiet broker, then beside each abuse in turn, on a fresh broker each time:
/// - `churn`: clients connecting, saying hello and leaving in a loop, as fast as they can;
/// - `subscription-flood`: 10 sessions holding the most subscriptions a session may (1,000 prefixes each);
/// - `corr-claims`: a session holding the most requests a session may keep waiting (1,024), nobody answering;
/// - `slow-consumers`: 10 sessions subscribed to everything that never read.
/// The aim, for each: a p99 within 2× of the quiet one, and the broker's memory back near its quiet size after.
struct AbuseBench {
    enum Abuse: String, CaseIterable {
        case quiet, churn
        case subscriptionFlood = "subscription-flood"
        case correlationClaims = "corr-claims"
        case slowConsumers = "slow-consumers"
    }

    struct Phase {
        let abuse: Abuse
        let latenciesMicroseconds: [Double]
        let brokerCPUShare: Double
        /// The process's resident memory after the abuse ended and the broker had a second to settle (MB).
        let residentMegabytesAfter: Double
        /// What the abusers got refused, by code (the broker's own counts).
        let refusals: [String: Int64]

        func percentile(_ p: Double) -> Double {
            let sorted = latenciesMicroseconds.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
    }

    let roundTrips: Int
    let paceMilliseconds: Int
    let directory: String
    let log: StandardErrorCapture

    func run(progress: (String) -> Void) throws -> [Phase] {
        try Abuse.allCases.enumerated().map { index, abuse in
            let phase = try measure(abuse, index: index)
            progress("\(abuse.rawValue): round trip p50 \(Format.micro(phase.percentile(0.5))) µs, p99 \(Format.micro(phase.percentile(0.99))) µs, "
                     + "broker CPU \(String(format: "%.1f", phase.brokerCPUShare * 100)) %, memory after \(String(format: "%.0f", phase.residentMegabytesAfter)) MB")
            return phase
        }
    }

    private func measure(_ abuse: Abuse, index: Int) throws -> Phase {
        log.begin()
        defer { log.end() }
        let broker = try BrokerHost(directory: "\(directory)/abuse-\(index)", highWaterMark: 100_000)
        defer { broker.stop() }
        let abusers = try Abusers(abuse, endpoint: broker.endpoint)
        let (cpuBefore, wallBefore) = (broker.worker.cpuTime, monotonicNanoseconds())
        let latencies = try RoundTrips(endpoint: broker.endpoint, count: roundTrips, paceMilliseconds: paceMilliseconds).measure()
        let share = Double(broker.worker.cpuTime - cpuBefore) / Double(max(1, monotonicNanoseconds() - wallBefore))
        try abusers.stop()
        let settled = monotonicNanoseconds() + 1_000_000_000
        while monotonicNanoseconds() < settled { usleep(50_000) }  // the settling time is what is measured, not a wait for a result
        let refusals = try broker.errorCounts()
        return Phase(abuse: abuse, latenciesMicroseconds: latencies, brokerCPUShare: share,
                     residentMegabytesAfter: Double(ProcessMemory.residentBytes()) / 1_048_576, refusals: refusals)
    }
}

/// A well-behaved client's round trips: publish, then receive its own event back, at a steady pace.
struct RoundTrips {
    let endpoint: String
    let count: Int
    let paceMilliseconds: Int

    func measure() throws -> [Double] {
        let client = try BusConnection(endpoint: endpoint, hello: Hello(name: "well-behaved", role: .generic, subscriptions: ["app.bench.echo"], acknowledges: false))
        defer { client.close() }
        try client.connect()
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        for n in 0..<count {
            let started = monotonicNanoseconds()
            try client.publish(Publish(topic: "app.bench.echo", body: ["n": .int(Int64(n))]))
            while true {
                guard let message = try client.receive(timeoutMilliseconds: 10_000) else { throw BenchFailure("round trip \(n): no event back within 10 s") }
                if case .event(let envelope, _) = message, envelope.topic == "app.bench.echo" { break }
            }
            let elapsed = monotonicNanoseconds() - started
            latencies.append(Double(elapsed) / 1_000)
            let pace = UInt64(paceMilliseconds) * 1_000_000
            if elapsed < pace { usleep(UInt32((pace - elapsed) / 1_000)) }  // pacing the load, not waiting for a result
        }
        return latencies
    }
}

/// The abusive clients of one phase, on a thread of their own.
final class Abusers {
    private let context: Context
    private var sockets: [Socket] = []
    private var worker: Worker?
    private let stopping = ManagedAtomicFlag()

    init(_ abuse: AbuseBench.Abuse, endpoint: String) throws {
        context = try Context(ioThreads: 1, maximumSockets: 4_096)
        let credential = BusCredential.forClient(endpoint: endpoint)
        func session(_ name: String, subscriptions: [String]) throws -> Socket {
            let socket = try Socket(context, .dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.setReceiveTimeout(milliseconds: 5_000)
            try socket.connect(endpoint)
            _ = try socket.send(WireCodec.encode(.hello(Hello(name: name, role: .generic, subscriptions: subscriptions, acknowledges: false, credential: credential))))
            guard let frames = try socket.receive(), case .welcome = try WireCodec.decodeBrokerMessage(frames) else {
                throw BenchFailure("abusive session \(name) was not welcomed")
            }
            return socket
        }
        switch abuse {
        case .quiet:
            break
        case .churn:
            let stopping = self.stopping, context = self.context
            worker = Worker("churn") {
                var n = 0
                while !stopping.isSet {
                    let socket = try Socket(context, .dealer)
                    try socket.setLinger(milliseconds: 0)
                    try socket.setReceiveTimeout(milliseconds: 2_000)
                    try socket.connect(endpoint)
                    _ = try socket.send(WireCodec.encode(.hello(Hello(name: "churn-\(n % 200)", role: .generic, subscriptions: [""], acknowledges: false, credential: credential))))
                    if let frames = try socket.receive(), case .welcome = try WireCodec.decodeBrokerMessage(frames) {
                        _ = try socket.send(WireCodec.encode(.bye))
                    }
                    socket.close()
                    n += 1
                }
            }
        case .subscriptionFlood:
            for index in 0..<10 {
                sockets.append(try session("flood-\(index)", subscriptions: (0..<1_000).map { "x.flood\(index).p\($0)." }))
            }
        case .correlationClaims:
            let claimer = try session("claimer", subscriptions: [])
            for n in 0..<1_024 {
                _ = try claimer.send(WireCodec.encode(.publish(Publish(topic: "x.claimer.q.request", body: [:], corr: "well-behaved-\(n)"))))
            }
            sockets.append(claimer)
        case .slowConsumers:
            for index in 0..<10 { sockets.append(try session("slow-\(index)", subscriptions: [""])) }
        }
    }

    /// Stops the abuse (the churn thread, then every session) and throws what the churn thread failed with.
    func stop() throws {
        stopping.set()
        defer { for socket in sockets { socket.close() } }
        try worker?.join()
    }
}

/// This process's resident memory, from /proc/self/statm.
enum ProcessMemory {
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
