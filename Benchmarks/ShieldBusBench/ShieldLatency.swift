import BusClient
import BusProtocol
import Foundation
import Histogram
import ZeroMQ

/// Latency percentiles from an HdrHistogram, in microseconds.
struct Percentiles {
    let count: UInt64
    let p50: Double
    let p99: Double
    let p999: Double

    init(_ histogram: Histogram<UInt64>) {
        count = histogram.totalCount
        // Recorded in nanoseconds.
        p50 = Double(histogram.valueAtPercentile(50)) / 1000
        p99 = Double(histogram.valueAtPercentile(99)) / 1000
        p999 = Double(histogram.valueAtPercentile(99.9)) / 1000
    }

    /// A histogram for latencies from 1 ns to 10 s at 3 significant digits.
    static func histogram() -> Histogram<UInt64> {
        Histogram<UInt64>(highestTrackableValue: 10_000_000_000, numberOfSignificantValueDigits: .three)
    }
}

/// The shield decision: from the person opening a shielded app to `shield.shown`, through the real broker
/// (`shieldbus run`, real-time clock) with the reference renderer answering — beside a raw libzmq round trip
/// (DEALER → ROUTER → DEALER over ipc://) timed in the same run.
struct ShieldLatencyBench {
    struct Result {
        let shield: Percentiles
        let rawRoundTrip: Percentiles
        /// Microseconds of CPU per open and its way home, the broker and every process below it (plugins,
        /// sandboxes) together: on a shared machine the percentiles move with others' work.
        let cpuPerOpen: Double
    }

    let installation: Installation
    let directory: String
    /// Whether the person also watches the steps on the way (shield.*, activity.*) to say when each came. Every event
    /// sent to it is work for the broker and the person on the cores the decisions share, so by default it hears
    /// `shield.shown` alone: the device's decision, not the watching, is timed.
    var watchesSteps = false

    func measure(opens: Int, progress: (String) -> Void) throws -> Result {
        let raw = try rawRoundTrip(count: opens)
        progress("raw libzmq round trip: p50 \(Format.micro(raw.p50)) µs, p99 \(Format.micro(raw.p99)) µs over \(raw.count)")
        let (shield, cpuPerOpen) = try shieldDecisions(opens: opens, progress: progress)
        progress("shield decision: p50 \(Format.micro(shield.p50)) µs, p99 \(Format.micro(shield.p99)) µs over \(shield.count)")
        return Result(shield: shield, rawRoundTrip: raw, cpuPerOpen: cpuPerOpen)
    }

    /// A DEALER asks, a ROUTER on another thread (its own context, as another process would have) echoes.
    func rawRoundTrip(count: Int) throws -> Percentiles {
        let endpoint = "ipc://\(directory)/raw.sock"
        let router = try Socket(try Context(), .router)
        try router.bind(endpoint)
        let echo = Worker("raw-echo") {
            defer { router.close() }
            try router.setReceiveTimeout(milliseconds: 5000)
            for _ in 0..<(count + 100) {
                guard let frames = try router.receive() else { throw BenchFailure("raw round trip: the echo heard nothing for 5 s") }
                _ = try router.send(frames)
            }
        }
        let dealer = try Socket(try Context(), .dealer)
        defer { dealer.close() }
        try dealer.setReceiveTimeout(milliseconds: 5000)
        try dealer.connect(endpoint)
        let message: [Frame] = [Array(repeating: 0x78, count: 200)]
        var histogram = Percentiles.histogram()
        for index in 0..<(count + 100) {  // the first 100 warm the connection up and are not counted
            let sent = monotonicNanoseconds()
            _ = try dealer.send(message)
            guard try dealer.receive() != nil else { throw BenchFailure("raw round trip: no echo within 5 s") }
            if index >= 100 { _ = histogram.record(monotonicNanoseconds() - sent) }
        }
        try echo.join()
        return Percentiles(histogram)
    }

    /// `opens` times: open Instagram (shielded by the habit lock), wait for `shield.shown`, go home; the percentiles,
    /// and the CPU per open of the broker and every process below it (µs).
    func shieldDecisions(opens: Int, progress: (String) -> Void) throws -> (Percentiles, cpuPerOpen: Double) {
        let broker = try LiveBroker(installation, directory: directory + "/live")
        defer { broker.stop() }
        let subscriptions = watchesSteps ? ["shield.", "activity."] : ["shield.shown"]
        let person = Person(connection: try broker.connect(Hello(name: "bench-person", role: .tool, subscriptions: subscriptions)))
        defer { person.connection.close() }
        // The companion app asks for authorization when first opened (the configuration approves it) and the
        // monitor puts the lock in place; wait until an open is shielded.
        try person.input("open", ["app": "Habit Lock"])
        try person.input("home")
        let ready = monotonicNanoseconds() + 20_000_000_000
        while true {
            // Not `input`: the device replies to the open after the plugins have handled it, so after `shield.shown`.
            try person.send("open", ["app": "Instagram"])
            if try person.waitForShield(milliseconds: 500) { try person.input("home"); break }
            try person.input("home")
            guard monotonicNanoseconds() < ready else { throw BenchFailure("shield latency: Instagram was never shielded within 20 s") }
        }
        var histogram = Percentiles.histogram()
        var steps: [String: Histogram<UInt64>] = [:]
        let cpuBefore = ProcessTreeCPU.read(root: broker.processIdentifier)
        let personBefore = cpuNanoseconds(CLOCK_PROCESS_CPUTIME_ID)
        for index in 1...opens {
            let opened = monotonicNanoseconds()
            person.seen = [:]
            try person.send("open", ["app": "Instagram"])
            guard try person.waitForShield(milliseconds: 5000) else { throw BenchFailure("shield latency: open \(index) was not shielded within 5 s") }
            _ = histogram.record(monotonicNanoseconds() - opened)
            if watchesSteps {
                for (topic, time) in person.seen { _ = steps[topic, default: Percentiles.histogram()].record(time - opened) }
            }
            try person.input("home")
            if index % 5000 == 0 { progress("shield decision: \(index)/\(opens) opens") }
        }
        let personAfter = cpuNanoseconds(CLOCK_PROCESS_CPUTIME_ID)
        let spent = ProcessTreeCPU.read(root: broker.processIdentifier).spent(since: cpuBefore)
        let cpu = spent.secondsByProgram
        let perOpen = { (seconds: Double) in seconds / Double(opens) * 1e6 }
        var line = "shield decision, CPU per open and its way home (µs): the broker and all below it \(Format.micro(perOpen(cpu.values.reduce(0, +))))"
        if let personBefore, let personAfter, personAfter >= personBefore {
            line += ", the person (this bench) \(Format.micro(perOpen(Double(personAfter - personBefore) / 1e9)))"
        }
        if spent.inOneReadingOnly > 0 { line += "; \(spent.inOneReadingOnly) process(es) started or ended within the opens, not counted" }
        progress(line)
        for (program, seconds) in cpu.sorted(by: { $0.value > $1.value }) where seconds > 0 {
            progress("  \(Format.micro(perOpen(seconds)).leftPadding(10)) µs  \(program)")
        }
        if watchesSteps {
            let medians = steps.map { (topic: $0.key, median: Double($0.value.valueAtPercentile(50)) / 1000) }.sorted { $0.median < $1.median }
            progress("shield decision, where the time goes (median µs after the open was sent, first arrival of each topic at the person):")
            for step in medians { progress("  \(Format.micro(step.median).leftPadding(10)) µs  \(step.topic)") }
        }
        return (Percentiles(histogram), perOpen(cpu.values.reduce(0, +)))
    }

    /// The person, as `shieldbus do` acts: a tool publishing `input.<verb>.request` and watching `shield.shown`.
    final class Person {
        let connection: BusConnection
        private var next = 0
        /// When each topic first arrived since it was last cleared (monotonic ns).
        var seen: [String: UInt64] = [:]

        init(connection: BusConnection) { self.connection = connection }

        /// Sends an input and returns its correlation id without waiting.
        @discardableResult
        func send(_ verb: String, _ body: [String: String] = [:]) throws -> String {
            next += 1
            let corr = "bench-\(next)"
            try connection.publish(Publish(topic: "input.\(verb).request", body: .object(body.mapValues(JSONValue.string)), corr: corr))
            return corr
        }

        /// Sends an input and waits for the device's reply.
        func input(_ verb: String, _ body: [String: String] = [:]) throws {
            let corr = try send(verb, body)
            let deadline = monotonicMilliseconds() + 5000
            while monotonicMilliseconds() < deadline {
                switch try connection.receive(timeoutMilliseconds: 500) {
                case .event(let envelope, _)? where envelope.corr == corr && envelope.isReply:
                    guard envelope.bodyValue["ok"]?.boolValue == true else { throw BenchFailure("input \(verb) refused: \(envelope.bodyValue.jsonText)") }
                    return
                case .error(let report)?: throw BenchFailure("input \(verb): \(report.message)")
                default: continue
                }
            }
            throw BenchFailure("input \(verb): no reply within 5 s")
        }

        /// Waits for the next `shield.shown`; false when none came in time.
        func waitForShield(milliseconds: Int64) throws -> Bool {
            let deadline = monotonicMilliseconds() + milliseconds
            while monotonicMilliseconds() < deadline {
                guard case .event(let envelope, _)? = try connection.receive(timeoutMilliseconds: 100) else { continue }
                if seen[envelope.topic] == nil { seen[envelope.topic] = monotonicNanoseconds() }
                if envelope.topic == "shield.shown" { return true }
            }
            return false
        }
    }
}
