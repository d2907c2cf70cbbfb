import BusClient
import BusProtocol
import Foundation

/// `shieldbus run` serving in real time without a scenario (Config/default.yml), for the figures that need a
/// live device: the shield decision and the commands' start-up.
final class LiveBroker {
    let runtimeDirectory: String
    let endpoint: String
    private let process = Process()
    /// The broker's process: its plugins and their sandboxes are below it.
    var processIdentifier: pid_t { process.processIdentifier }

    init(_ installation: Installation, directory: String) throws {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        runtimeDirectory = directory + "/run"
        endpoint = RuntimeDirectory(path: runtimeDirectory).brokerEndpoint()
        process.executableURL = URL(fileURLWithPath: installation.program("shieldbus"))
        process.arguments = ["run", "--config", installation.config + "/default.yml", "--no-scenario", "--clock", "real",
                             "--runtime-dir", runtimeDirectory, "--state-dir", directory + "/state"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// A connection as `name`, once the broker answers (it may still be starting: until it has written the
    /// runtime directory's cookie, an outside client has no credential to present).
    func connect(_ hello: Hello) throws -> BusConnection {
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while RuntimeDirectory(path: runtimeDirectory).cookie() == nil {
            guard monotonicNanoseconds() < deadline, process.isRunning else { throw BenchFailure("the broker wrote no cookie within 20 s") }
            usleep(10_000)  // polling for the file, with the deadline above
        }
        // One connection waits out the rest of the deadline: a second one, after a first whose hello was slow to be
        // answered on a busy machine, would find its name still held by the first's session (`name-taken`).
        let connection = try BusConnection(endpoint: endpoint, hello: hello)
        let now = monotonicNanoseconds()
        let remaining = now < deadline ? max(1, Int((deadline - now) / 1_000_000)) : 1
        do {
            try connection.connect(timeoutMilliseconds: remaining)
        } catch BusClientError.brokerNotAnswering {
            connection.close()
            throw BenchFailure(process.isRunning ? "the broker did not answer within 20 s" : "the broker ended before it answered")
        }
        return connection
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

/// How long `shieldbus status --json` and `shieldbus tap --count 1` take from start to their answer, with
/// hyperfine (Debian's package), against a live broker; `tap` gets an event every millisecond so it answers
/// as soon as it is connected.
struct CommandStartupBench {
    struct Timing {
        let command: String
        /// Milliseconds.
        let median: Double
        let min: Double
        /// Mean user + system CPU, which a busy machine inflates less than wall time.
        let cpu: Double
        let runs: Int
    }

    let installation: Installation
    let directory: String

    func measure(runs: Int, progress: (String) -> Void) throws -> [Timing] {
        guard let hyperfine = ["/usr/bin/hyperfine", "/usr/local/bin/hyperfine"].first(where: FileManager.default.isExecutableFile) else {
            throw BenchFailure("hyperfine is not installed (`make bench` installs it; or apt-get install hyperfine)")
        }
        let broker = try LiveBroker(installation, directory: directory + "/commands")
        defer { broker.stop() }
        let ticker = try broker.connect(Hello(name: "bench-ticker", role: .generic, subscriptions: []))
        defer { ticker.close() }
        let ticking = Ticker(connection: ticker)
        ticking.start()
        defer { ticking.stop() }

        let shieldbus = installation.program("shieldbus")
        let commands = ["\(shieldbus) status --json --runtime-dir \(broker.runtimeDirectory)",
                        "\(shieldbus) tap --count 1 --runtime-dir \(broker.runtimeDirectory)"]
        let export = directory + "/hyperfine.json"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: hyperfine)
        process.arguments = ["--warmup", "5", "--runs", String(runs), "--shell", "none", "--style", "none", "--export-json", export] + commands
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: export) else {
            throw BenchFailure("hyperfine failed (exit \(process.terminationStatus)) on: \(commands.joined(separator: "; "))")
        }
        let results = try JSONDecoder().decode(HyperfineExport.self, from: data).results
        let names = ["shieldbus status --json", "shieldbus tap --count 1"]
        let timings = zip(names, results).map { name, result in
            Timing(command: name, median: result.median * 1000, min: result.min * 1000,
                   cpu: (result.user + result.system) * 1000, runs: result.times.count)
        }
        for timing in timings { progress("\(timing.command): median \(String(format: "%.1f", timing.median)) ms, min \(String(format: "%.1f", timing.min)) ms, CPU \(String(format: "%.1f", timing.cpu)) ms over \(timing.runs) runs") }
        return timings
    }

    /// hyperfine's --export-json, the fields used here (seconds).
    private struct HyperfineExport: Decodable {
        struct Result: Decodable {
            let median: Double
            let min: Double
            let user: Double
            let system: Double
            let times: [Double]
        }
        let results: [Result]
    }

    /// Publishes `app.ping` every millisecond on its own thread until stopped.
    final class Ticker {
        private let connection: BusConnection
        private let lock = NSLock()
        private var running = true
        private var worker: Worker?

        init(connection: BusConnection) { self.connection = connection }

        func start() {
            worker = Worker("ticker") { [self] in
                while lock.withLock({ running }) {
                    try connection.publish(Publish(topic: "app.ping", body: [:]))
                    _ = try connection.receive(timeoutMilliseconds: 1)  // heartbeats both ways, and the pause
                }
            }
        }

        func stop() {
            lock.withLock { running = false }
            try? worker?.join()
        }
    }
}
