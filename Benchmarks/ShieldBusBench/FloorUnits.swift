import Broker
import BusProtocol
import DeviceAPI
import Foundation
import SQLite
import ZeroMQ

/// The costs the design's guarantees put under every virtual-time event, each measured alone with the project's own
/// parts: the ZeroMQ wrapper between two real processes, the SQLite wrapper with the stores' modes (WAL,
/// `synchronous = NORMAL`, the commit tally and its note), a journal line, and a process started and stopped in a
/// plugin's sandbox. CPU in µs (starts in ms), the median of the rounds; the rounds interleave the measurements, so a
/// busy patch of the machine hits them alike.
struct FloorUnits {
    /// The turns with the two processes wherever the scheduler puts them (on 2 cores, a wake-up often crosses to the
    /// other core), and with both held on one core (`taskset`): no wake-up crosses cores.
    var spread: TurnCosts
    var oneCore: TurnCosts
    /// A write transaction of one small row with the commit tally and its note, in each store's mode.
    var exclusiveCommit: Double
    /// The `bus.sqlite`-like save the durable turn makes, alone.
    var ledgerSave: Double
    var sharedCommit: Double
    /// One journal line written (`write` of a 300-byte line, appended).
    var journalLine: Double
    /// Starts to their ends, in ms: CPU of every process involved, and the wall time. `sandboxedPlugin` is a
    /// plugin's bare start (`pluginStart` says which program's).
    var sandboxedTrue: Start
    var sandboxedPlugin: Start
    var swiftExec: Start
    var swiftFork: Start
    var pluginStart: String

    struct Start {
        var cpu: Double
        var wall: Double
    }
}

/// Measures `FloorUnits` in `directory` (on the disk the stores of a run live on).
struct FloorBench {
    let directory: String
    let rounds: Int
    /// Turns, round trips and commits per round.
    let operations: Int
    /// Process starts per round, of each kind.
    let starts: Int

    /// An event's envelope as the bus sends it, about the size of a heavy day's.
    static let envelope: Frame = Array(#"{"seq":1,"time":"2026-11-23T07:41:00.000Z","topic":"shield.configuration.request","source":"os","body":{"application":{"bundleIdentifier":"com.burbn.instagram","token":"app.0f3c9a21e8b47d55"},"category":{"token":"category.social"},"kind":"application"},"corr":"c-000001"}"#.utf8)

    func measure(progress: (String) -> Void) throws -> FloorUnits {
        let program = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let runtime = directory + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let endpoint = "ipc://\(runtime)/bus.sock"
        // The sandbox shows the bus's socket, so one is there while plugins start, as in a run.
        let bus = try BoundRouter(endpoint)
        let ledger = try SmallRowStore(path: directory + "/bus.sqlite", access: .exclusive)
        let exclusive = try SmallRowStore(path: directory + "/exclusive.sqlite", access: .exclusive)
        let shared = try SmallRowStore(path: directory + "/shared.sqlite", access: .shared)
        let journal = try JournalFile(path: directory + "/journal.jsonl")
        let plugin = PluginStart(beside: program)
        progress("floor: a plugin's start: " + plugin.description)
        let timer = try StartTimer(program: program, plugin: plugin, runtime: runtime, endpoint: endpoint, state: directory + "/state")

        // Unmeasured: the stores' first pages, the statements, the page cache's first uses.
        for index in 0..<200 { try exclusive.write(index); try shared.write(index); try ledger.save(UInt64(index + 1)); try journal.writeLine() }
        var seq: UInt64 = 200
        _ = try timer.sandboxed(plugin: false, count: 1)
        _ = try timer.sandboxed(plugin: true, count: 1)

        let lastCore = try AllowedCores.last(of: String(contentsOfFile: "/proc/self/status", encoding: .utf8))
        var samples: [[Double]] = []
        var spreadTurns: [TurnCosts] = []
        var oneCoreTurns: [TurnCosts] = []
        var startSamples: [[FloorUnits.Start]] = []
        for round in 1...rounds {
            spreadTurns.append(try FloorTurns.measure(program: program, folder: directory + "/turns-\(round)", operations: operations, core: nil))
            oneCoreTurns.append(try FloorTurns.measure(program: program, folder: directory + "/turns-one-core-\(round)", operations: operations, core: lastCore))
            let exclusiveCost = try threadMicroseconds(per: operations) { try exclusive.write($0) }
            let saveCost = try threadMicroseconds(per: operations) { _ in seq += 1; try ledger.save(seq) }
            let sharedCost = try threadMicroseconds(per: operations) { try shared.write($0) }
            let lineCost = try threadMicroseconds(per: operations) { _ in try journal.writeLine() }
            samples.append([exclusiveCost, saveCost, sharedCost, lineCost])
            progress(String(format: "floor: round %d: round trip %.1f µs, durable turn %.1f µs (on one core %.1f, %.1f), commits %.1f / %.1f µs (CPU)", round,
                            spreadTurns[round - 1].roundTrip, spreadTurns[round - 1].durableTurn, oneCoreTurns[round - 1].roundTrip,
                            oneCoreTurns[round - 1].durableTurn, exclusiveCost, sharedCost))
            startSamples.append([try timer.sandboxed(plugin: false, count: starts), try timer.sandboxed(plugin: true, count: starts),
                                 try timer.executed(count: starts), try timer.forked(count: starts)])
        }
        withExtendedLifetime(bus) {}

        let median = { (column: Int) in FloorBench.median(samples.map { $0[column] }) }
        let startMedian = { (column: Int) in
            FloorUnits.Start(cpu: FloorBench.median(startSamples.map { $0[column].cpu }), wall: FloorBench.median(startSamples.map { $0[column].wall }))
        }
        return FloorUnits(spread: TurnCosts.median(spreadTurns), oneCore: TurnCosts.median(oneCoreTurns), exclusiveCommit: median(0),
                          ledgerSave: median(1), sharedCommit: median(2), journalLine: median(3),
                          sandboxedTrue: startMedian(0), sandboxedPlugin: startMedian(1), swiftExec: startMedian(2), swiftFork: startMedian(3),
                          pluginStart: plugin.description)
    }

    /// The calling thread's CPU per call of `body`, in µs.
    private func threadMicroseconds(per count: Int, _ body: (Int) throws -> Void) throws -> Double {
        let before = cpuNanoseconds(CLOCK_THREAD_CPUTIME_ID) ?? 0
        for index in 0..<count { try body(index) }
        return Double((cpuNanoseconds(CLOCK_THREAD_CPUTIME_ID) ?? 0) - before) / 1000 / Double(count)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// A store written one small row per transaction, in the mode of `bus.sqlite` (`.exclusive`) or of the other stores
/// (`.shared`): WAL, `synchronous = NORMAL`, each transaction counted by `CommitTally` and noted beside the file.
final class SmallRowStore {
    private let connection: SQLiteConnection
    private let tally: CommitTally
    private let value = SQLiteValue.blob(Data(repeating: 0x61, count: 100))

    init(path: String, access: SQLiteConnection.Access) throws {
        connection = try SQLiteConnection(path: path, access: access)
        try connection.enableWAL()
        tally = try CommitTally(connection: connection, path: path)
        if access == .exclusive { try connection.execute("PRAGMA secure_delete = OFF") }
        // The count's row holds the last sequence number saved, as `bus.sqlite`'s does (`DeliveryStore.schema`).
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS row (key INTEGER PRIMARY KEY, value BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY, envelope BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS commit_tally (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL, savedSeq INTEGER);
            INSERT OR IGNORE INTO commit_tally (id, n) VALUES (1, 0);
            """)
    }

    /// One small row, replaced among 64.
    func write(_ index: Int) throws {
        try tally.transaction {
            try connection.withStatement("INSERT OR REPLACE INTO row (key, value) VALUES (?, ?)", bindings: [.integer(Int64(index % 64)), value]) { try $0.run() }
        }
    }

    /// A delivery ledger's save as `bus.sqlite` makes one per batch (`DeliveryStore.write`; a store opened
    /// `.exclusive`): the event kept until acknowledged, the one acknowledged since the last save deleted, the count
    /// and the last sequence number saved in the tally's one row.
    func save(_ seq: UInt64) throws {
        try tally.transaction(countedByBody: { commits in
            try connection.withStatement("INSERT INTO pending (seq, envelope) VALUES (?, ?)",
                                         bindings: [.integer(Int64(seq)), .blob(Data(FloorBench.envelope))]) { try $0.run() }
            try connection.withStatement("DELETE FROM pending WHERE seq = ?", bindings: [.integer(Int64(seq) - 1)]) { try $0.run() }
            try connection.withStatement("UPDATE commit_tally SET n = ?, savedSeq = ? WHERE id = 1",
                                         bindings: [.integer(commits), .integer(Int64(seq))]) { try $0.run() }
        })
    }
}

/// A journal written a line per event, appended with one `write` each.
final class JournalFile {
    private let descriptor: Int32
    private let line = Array((String(decoding: FloorBench.envelope, as: UTF8.self) + "\n").utf8)

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchFailure("cannot open \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(descriptor) }

    func writeLine() throws {
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.count else { throw BenchFailure("a journal line was not written: \(String(cString: strerror(errno)))") }
    }
}

/// Starts processes to their ends and reads what they cost: CPU of every process involved (`getrusage` of the
/// reaped children, and this thread's own share of a fork) and the wall time, in ms per start.
struct StartTimer {
    let program: String
    let plugin: PluginStart
    let sandbox: SandboxedStart
    /// The monitor's sandbox as `RunPlan` makes it for `make run`: its container, its record and its App Group
    /// (read and written), its options file (read), the state folder hidden around them.
    let spec: PluginSpec
    let environment: [String: String]
    let log: String

    init(program: String, plugin: PluginStart, runtime: String, endpoint: String, state: String) throws {
        self.program = program
        self.plugin = plugin
        sandbox = try SandboxedStart(runtimeDirectory: runtime, endpoint: endpoint)
        let own = [state + "/containers/activity-monitor", state + "/cursors/activity-monitor", state + "/groups/group.com.example.shieldbus"]
        for folder in own { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let options = state + "/options/activity-monitor.json"
        try FileManager.default.createDirectory(atPath: state + "/options", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: options, contents: Data("{}".utf8))
        spec = PluginSpec(name: "activity-monitor", executable: "/bin/true", role: .monitor,
                          files: PluginFiles(own: own, readable: [options], hidden: [state]), offline: Role.monitor.runsWithoutNetwork)
        environment = ["PATH": "/usr/bin:/bin", "SHIELDBUS_PLUGIN_NAME": "activity-monitor", "SHIELDBUS_PLUGIN_ROLE": "monitor",
                       "SHIELDBUS_SUPERVISED": "1", "SHIELDBUS_SANDBOX": "bubblewrap", "SHIELDBUS_RUNTIME_DIR": runtime,
                       "SHIELDBUS_PLUGIN_OPTIONS_FILE": state + "/options/missing.json"]
        log = runtime + "/start.log"
    }

    /// In the monitor's sandbox: `/bin/true`, or (`plugin`) a plugin's bare start.
    func sandboxed(plugin started: Bool, count: Int) throws -> FloorUnits.Start {
        var spec = self.spec
        var expected: Int32 = 0
        if started { (spec.executable, spec.arguments, expected) = (plugin.executable, plugin.arguments, plugin.exitStatus) }
        return try timed(count) {
            let status = try sandbox.run(spec, environment: environment, logPath: log)
            guard status == expected << 8 else {
                throw BenchFailure("a sandboxed start of \(spec.executable) ended with wait status \(status), not exit status \(expected) (see \(log))")
            }
        }
    }

    /// This program's empty start, executed without a sandbox.
    func executed(count: Int) throws -> FloorUnits.Start {
        try timed(count) {
            let argv = [strdup(program), strdup("--floor-empty"), nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            let rc = posix_spawn(&pid, program, nil, nil, argv, environ)
            guard rc == 0 else { throw BenchFailure("cannot start \(program): \(String(cString: strerror(rc)))") }
            try StartTimer.reap(pid)
        }
    }

    /// A fork of this running program whose child exits at once: what a launch from a template costs at the least
    /// (the address space copied and torn down), beside the program's own start from `main`.
    func forked(count: Int) throws -> FloorUnits.Start {
        try timed(count) {
            let pid = fork()
            if pid == 0 { _exit(0) }
            guard pid > 0 else { throw BenchFailure("fork failed: \(String(cString: strerror(errno)))") }
            try StartTimer.reap(pid)
        }
    }

    private static func reap(_ pid: pid_t) throws {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw BenchFailure("waitpid: \(String(cString: strerror(errno)))") }
        }
        guard status == 0 else { throw BenchFailure("a started process ended with status \(status)") }
    }

    private func timed(_ count: Int, _ start: () throws -> Void) throws -> FloorUnits.Start {
        let children = rusageMicroseconds(RUSAGE_CHILDREN.rawValue)
        let thread = cpuNanoseconds(CLOCK_THREAD_CPUTIME_ID) ?? 0
        let wall = monotonicNanoseconds()
        for _ in 0..<count { try start() }
        let elapsed = Double(monotonicNanoseconds() - wall) / 1e6
        let cpu = (rusageMicroseconds(RUSAGE_CHILDREN.rawValue) - children) / 1000 + Double((cpuNanoseconds(CLOCK_THREAD_CPUTIME_ID) ?? 0) - thread) / 1e6
        return FloorUnits.Start(cpu: cpu / Double(count), wall: elapsed / Double(count))
    }
}

/// The program a plugin's start is priced by: the monitor beside the bench's own program (as `make bench-build`
/// leaves it), started bare — the loader, the runtime, its options file missing, its exit with EX_CONFIG — as
/// Benchmarks/LaunchCost/launch_cost.py starts it. Without it, the bench's own empty start stands in, and says so.
struct PluginStart {
    let executable: String
    let arguments: [String]
    /// The exit status a bare start ends with.
    let exitStatus: Int32
    let description: String

    init(beside program: String) {
        let monitor = URL(fileURLWithPath: program).deletingLastPathComponent().appendingPathComponent("activity-monitor").path
        if FileManager.default.isExecutableFile(atPath: monitor) {
            (executable, arguments, exitStatus) = (monitor, [], SupervisedExitStatus.configurationError)
            description = "the monitor's bare start (\(monitor), its options file missing)"
        } else {
            (executable, arguments, exitStatus) = (program, ["--floor-empty"], 0)
            description = "NO monitor at \(monitor) (make bench-build): the bench's own empty start (--floor-empty) stands in, a larger position-independent program"
        }
    }
}

/// The processors this process may run on, as the kernel lists them in /proc/self/status (`Cpus_allowed_list`, the
/// affinity `sched_getaffinity` reads): under a cpuset they need not be the machine's first ones.
enum AllowedCores {
    /// The highest allowed processor in a status file's text, e.g. `Cpus_allowed_list:\t0-3,8,10-11` → 11.
    static func last(of status: String) throws -> Int {
        let line = status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }
        let ranges = line.map { $0.dropFirst("Cpus_allowed_list:".count).split(separator: ",") } ?? []
        let ends = ranges.map { range in Int(range.split(separator: "-").last?.trimmingCharacters(in: .whitespaces) ?? "") }
        guard !ends.isEmpty, ends.allSatisfy({ $0 != nil && $0! >= 0 }), let last = ends.compactMap({ $0 }).max() else {
            throw BenchFailure("cannot read the processors this process may run on from /proc/self/status (\(line.map(String.init) ?? "no Cpus_allowed_list"))")
        }
        return last
    }
}
