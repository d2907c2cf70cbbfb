import BusClient
import BusProtocol
import Foundation
import ZeroMQ

/// What abusive clients cost a well-behaved one (docs/security.md § 6): its round trip (publish, receive its own event
/// back) through a quiet broker, then beside each abuse in turn, on a fresh broker each time, the whole sequence played
/// `rounds` times and each figure the median of its rounds: a sub-millisecond p99 on a shared machine is set by
/// whatever else held the cores at that moment, and a median of interleaved rounds is not.
/// - `churn`: 200 clients leaving and connecting again with a new hello, 320 cycles a second in all;
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
        /// How long after the abuse ended the memory was back within 2 MB of what it was before the abuse began (s);
        /// nil when it was not within `AbuseBench.returnLimitSeconds`.
        let secondsToReturn: Double?
        /// What the abusers got refused, by code (the broker's own counts).
        let refusals: [String: Int64]

        func percentile(_ p: Double) -> Double {
            let sorted = latenciesMicroseconds.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
    }

    /// How long the memory is watched after an abuse for its return.
    static let returnLimitSeconds = 10

    let roundTrips: Int
    let paceMilliseconds: Int
    let directory: String
    let log: StandardErrorCapture

    /// One abuse's figures over every round: the median of each, the largest memory after and every refusal.
    struct Summary {
        let abuse: Abuse
        let rounds: [Phase]

        var p50: Double { median(rounds.map { $0.percentile(0.5) }) }
        var p99: Double { median(rounds.map { $0.percentile(0.99) }) }
        var p99s: [Double] { rounds.map { $0.percentile(0.99) } }
        var brokerCPUShare: Double { median(rounds.map(\.brokerCPUShare)) }
        var residentMegabytesAfter: Double { rounds.map(\.residentMegabytesAfter).max() ?? 0 }
        /// The slowest round's return; nil when a round's memory did not return.
        var secondsToReturn: Double? { rounds.contains { $0.secondsToReturn == nil } ? nil : rounds.compactMap(\.secondsToReturn).max() }
        var refusals: [String: Int64] { rounds.reduce(into: [:]) { total, phase in total.merge(phase.refusals, uniquingKeysWith: +) } }

        private func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
    }

    func run(rounds: Int, progress: (String) -> Void) throws -> [Summary] {
        precondition(rounds > 0, "at least one round")
        var phases: [Abuse: [Phase]] = [:]
        for round in 1...rounds {
            for (index, abuse) in Abuse.allCases.enumerated() {
                let phase = try measure(abuse, index: (round - 1) * Abuse.allCases.count + index)
                progress("round \(round)/\(rounds), \(abuse.rawValue): round trip p50 \(Format.micro(phase.percentile(0.5))) µs, p99 \(Format.micro(phase.percentile(0.99))) µs, "
                         + "broker CPU \(String(format: "%.1f", phase.brokerCPUShare * 100)) %, memory after \(String(format: "%.0f", phase.residentMegabytesAfter)) MB")
                phases[abuse, default: []].append(phase)
            }
        }
        return Abuse.allCases.map { Summary(abuse: $0, rounds: phases[$0] ?? []) }
    }

    private func measure(_ abuse: Abuse, index: Int) throws -> Phase {
        log.begin()
        defer { log.end() }
        let broker = try BrokerHost(directory: "\(directory)/abuse-\(index)", highWaterMark: 100_000)
        defer { broker.stop() }
        let residentBefore = ProcessMemory.residentBytes()
        let abusers = try AbuserProcess(abuse, endpoint: broker.endpoint)
        let (cpuBefore, wallBefore) = (broker.worker.cpuTime, monotonicNanoseconds())
        let latencies: [Double]
        do {
            latencies = try RoundTrips(endpoint: broker.endpoint, count: roundTrips, paceMilliseconds: paceMilliseconds).measure()
        } catch {
            try? abusers.stop()
            throw error
        }
        let share = Double(broker.worker.cpuTime - cpuBefore) / Double(max(1, monotonicNanoseconds() - wallBefore))
        try abusers.stop()
        let ended = monotonicNanoseconds()
        // The settling is what is measured, not a wait for a result: the memory a second after, and when it returned.
        var secondsToReturn: Double?, residentAfter = 0
        while monotonicNanoseconds() - ended < UInt64(Self.returnLimitSeconds) * 1_000_000_000 {
            let elapsed = monotonicNanoseconds() - ended, resident = ProcessMemory.residentBytes()
            if secondsToReturn == nil && resident <= residentBefore + 2 * 1_048_576 { secondsToReturn = Double(elapsed) / 1e9 }
            if elapsed >= 1_000_000_000 && residentAfter == 0 { residentAfter = resident }
            if secondsToReturn != nil && residentAfter != 0 { break }
            usleep(50_000)
        }
        let refusals = try broker.errorCounts()
        return Phase(abuse: abuse, latenciesMicroseconds: latencies, brokerCPUShare: share,
                     residentMegabytesAfter: Double(residentAfter) / 1_048_576, secondsToReturn: secondsToReturn, refusals: refusals)
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
    /// The churn: 200 clients leaving and connecting again, about 320 cycles a second in all — more clients than a
    /// credential may hold sessions, so the bounds on hellos and on sessions both act.
    static let churningClients = 200
    static let churnCyclesPerSecond: UInt64 = 320
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
                // 200 clients, each in turn leaving and connecting again with a new hello, 320 times a second in all.
                var clients = [Socket?](repeating: nil, count: Abusers.churningClients)
                let started = monotonicNanoseconds()
                var n = 0
                while !stopping.isSet {
                    let slot = n % clients.count
                    if let client = clients[slot] {
                        _ = try client.send(WireCodec.encode(.bye))
                        client.close()
                    }
                    let socket = try Socket(context, .dealer)
                    // Long enough for the goodbye sent just before a close to leave (libzmq drops what lingers past it).
                    try socket.setLinger(milliseconds: 100)
                    try socket.connect(endpoint)
                    _ = try socket.send(WireCodec.encode(.hello(Hello(name: "churn-\(slot)", role: .generic, subscriptions: [""], acknowledges: false, credential: credential))))
                    clients[slot] = socket
                    n += 1
                    let due = started + UInt64(n) * 1_000_000_000 / Abusers.churnCyclesPerSecond
                    let now = monotonicNanoseconds()
                    if now < due { usleep(UInt32((due - now) / 1_000)) }  // pacing the load, not waiting for a result
                }
                for case let client? in clients { client.close() }
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

/// The abusive clients of one phase in a process of their own (`shieldbus-bench --abuser ABUSE ENDPOINT`): the bench's
/// process then holds only the broker and the well-behaved client, so its memory is theirs, and the abusers compete
/// for the cores as another program would.
final class AbuserProcess {
    /// How long the abusers may take to be welcomed (1,000s of sessions and hellos on a loaded machine take seconds).
    static let readyLimitSeconds: UInt64 = 60
    private let process = Process()
    private let input = Pipe()
    private let abuse: AbuseBench.Abuse

    init(_ abuse: AbuseBench.Abuse, endpoint: String) throws {
        self.abuse = abuse
        guard abuse != .quiet else { return }
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--abuser", abuse.rawValue, endpoint]
        (process.standardInput, process.standardOutput) = (input, output)
        try process.run()
        // The child says `ready` once every abusive session it holds was welcomed; an end of file is its failure, and
        // silence past the deadline too (a child stuck connecting is killed, not waited for forever).
        var said = Data()
        let deadline = monotonicNanoseconds() + Self.readyLimitSeconds * 1_000_000_000
        let descriptor = output.fileHandleForReading.fileDescriptor
        while !said.contains(UInt8(ascii: "\n")) {
            let now = monotonicNanoseconds()
            guard now < deadline else { break }
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, Int32((deadline - now) / 1_000_000)) > 0 else { continue }
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { break }
            said.append(more)
        }
        guard String(decoding: said, as: UTF8.self).hasPrefix("ready") else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            throw BenchFailure("the \(abuse.rawValue) abusers did not start within \(Self.readyLimitSeconds) s (exit status \(process.terminationStatus); their error is in the broker's log)")
        }
    }

    /// Ends the abuse: the child stops at the end of its standard input, and says by its exit status whether it failed.
    func stop() throws {
        guard abuse != .quiet else { return }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchFailure("the \(abuse.rawValue) abusers failed (exit status \(process.terminationStatus))") }
    }

    /// The child's side: holds the abuse until its standard input ends.
    static func serve(_ arguments: [String]) -> Int32 {
        guard arguments.count == 2, let abuse = AbuseBench.Abuse(rawValue: arguments[0]) else {
            note("usage: shieldbus-bench --abuser ABUSE ENDPOINT (started by --abuse)")
            return 2
        }
        do {
            let abusers = try Abusers(abuse, endpoint: arguments[1])
            FileHandle.standardOutput.write(Data("ready\n".utf8))
            _ = FileHandle.standardInput.readDataToEndOfFile()
            try abusers.stop()
            return 0
        } catch {
            note("shieldbus-bench --abuser \(abuse.rawValue): \(error)")
            return 1
        }
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
