import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import Synchronization
import LockInvariant

/// What one day's run gave: its events and the verdict.
public struct DayOutcome: Sendable {
    public let day: Day
    public let events: Int
    public let violations: [LockViolation]
    /// The run itself went wrong (it did not end cleanly, or the bus was degraded): nil when healthy.
    public let runProblem: String?
    /// The kind of the run's first problem (`RunHealth.Problem.kind`, or `exit` / `unplayable`): what a shrunk day keeps.
    public let runProblemKind: String?
    /// The plugin (or the OS) that last wrote the ManagedSettings stores before the first violation began.
    public let lastDecider: String?
    public let wallMilliseconds: Int64
    /// What the day exercised: "<product>: <counter>" and "device: <counter>" → count.
    public var coverage: [String: Int] = [:]
    /// It failed on its iOS release where the same day held on none: the release's bug defeated the product
    /// (`Explorer.explore` decides it; docs/fidelity.md).
    public var defeatedByRelease = false

    public var failed: Bool { !violations.isEmpty || runProblem != nil }

    /// Whether this outcome fails the way `other` did: a violation of the same kind on the same target, or (for a day
    /// with none) a run problem of the same kind.
    public func failsLike(_ other: DayOutcome) -> Bool {
        if let first = other.violations.first { return violations.contains { $0.kind == first.kind && $0.target == first.target } }
        guard let kind = other.runProblemKind else { return false }
        return runProblemKind == kind
    }

    /// Whether shrinking can keep this failure: a violation, or a degraded run (not one that could not be played at all).
    public var isShrinkable: Bool { !violations.isEmpty || (runProblemKind != nil && runProblemKind != "unplayable") }
}

/// Plays days through the real broker and plugins — `shieldbus run` child processes, in virtual time — and
/// checks each journal against the lock invariant of the configuration's product.
public final class DayRunner: @unchecked Sendable {
    public let executable: String
    public let configurationPath: String
    public let configuration: ShieldBusConfiguration
    public let catalog: AppCatalog
    let workDirectory: String
    /// Where the promises' models are found.
    let models: PromiseModels
    private let launches = DayLaunches()
    /// Where days are forked from, one per worker; nil: every day is executed (`SHIELDBUS_PLAIN_DAYS=1`).
    private let templates: BrokerTemplates?
    /// Told each played day's journal as read (tests: a day's journal must not depend on the days its worker played before).
    var journalRead: (@Sendable (Day, Data) -> Void)?
    private let counter = NSLock()
    private var runs = 0

    /// `forksDays`: days are forked from broker templates that keep their workers' sandboxes, else each is executed
    /// with sandboxes of its own (nil: unless `SHIELDBUS_PLAIN_DAYS=1`); `cores`: the processors the workers that fork
    /// them are held on (`WorkerCores`).
    public init(executable: String, configurationPath: String, configuration: ShieldBusConfiguration, catalog: AppCatalog, workDirectory: String,
                models: PromiseModels = .none, forksDays: Bool? = nil, cores: WorkerCores = .allowed()) {
        self.models = models
        self.executable = executable
        self.configurationPath = configurationPath
        self.configuration = configuration
        self.catalog = catalog
        self.workDirectory = workDirectory
        templates = (forksDays ?? BrokerTemplate.isWanted()) ? BrokerTemplates(executable: executable, configurationPath: configurationPath, workDirectory: workDirectory, cores: cores) : nil
    }

    /// Plays one day and judges it. Once the explore is stopping (`stopPlaying`) no day starts, and none returns: the
    /// process is ending, and a run cut short is no verdict.
    public func run(_ day: Day) -> DayOutcome {
        guard launches.begin() else { Self.waitForTheEnd() }
        let outcome = playOne(day)
        guard launches.end() else { Self.waitForTheEnd() }
        return outcome
    }

    /// Starts no more days, stops the `shieldbus run` processes of those in play, and returns once their folders are
    /// removed (killing what has not stopped after `timeout`): the explore may then remove its own folder and end.
    public func stopPlaying(timeout: TimeInterval) {
        launches.stopAll(timeout: timeout)
        templates?.stopAll()
    }

    /// Ends the broker templates once no more days are to be played (the process ending ends them too).
    public func finish() {
        templates?.stopAll()
    }

    private static func waitForTheEnd() -> Never {
        while true { sleep(3600) }
    }

    /// `forked`: the day's `shieldbus run` is forked from a broker template (when there are), else executed. A day
    /// forked from a template that keeps its worker's sandboxes is played in the worker's folder, which the day
    /// empties; any other in a folder of its own, removed after it.
    private func playOne(_ day: Day, forked: Bool = true) -> DayOutcome {
        let started = Date()
        let template = forked ? templates?.take() : nil
        defer { if let template { templates?.give(template) } }
        let worker = template.flatMap { $0.keepsSandboxes ? $0.worker : nil }
        let directory = worker?.path ?? workDirectory + "/run-\(nextRunNumber())"
        defer { if worker == nil { try? FileManager.default.removeItem(atPath: directory) } }
        func outcome(events: Int = 0, violations: [LockViolation] = [], problem: String?, kind: String? = nil, lastDecider: String? = nil) -> DayOutcome {
            DayOutcome(day: day, events: events, violations: violations, runProblem: problem, runProblemKind: problem == nil ? nil : kind ?? "unplayable",
                       lastDecider: lastDecider,
                       wallMilliseconds: Int64(Date().timeIntervalSince(started) * 1000))
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let scenarioPath = Self.scenarioPath(in: directory), journalPath = Self.journalPath(in: directory), errorPath = directory + "/stderr"
            // A worker's folder holds the last day's files: none of them may be taken for this day's.
            if worker != nil { for path in [scenarioPath, journalPath, errorPath] { unlink(path) } }
            // The day's folder is new and no one reads it before the run starts: files written in place, not through
            // Foundation's atomic writes (a temporary file, an fsync and a rename each, for a folder removed at the end).
            try day.scenarioText(name: "explore-\(day.seed)").write(toFile: scenarioPath, atomically: false, encoding: .utf8)
            let errorDescriptor = open(errorPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            let arguments = Self.runArguments(configurationPath: configurationPath, directory: directory, endpoint: worker?.endpoint)
            let status: Int32
            if let template, errorDescriptor >= 0 {
                let played = template.play(arguments, day: "the day of seed \(day.seed)", errors: errorDescriptor, launches: launches)
                close(errorDescriptor)
                guard case .ended(let ended) = played else {
                    // Not started, or its process died with the template: played again by exec, in a folder of its own.
                    guard !launches.isStopping else { return outcome(problem: "the explore stopped") }
                    if worker == nil { try? FileManager.default.removeItem(atPath: directory) }
                    return playOne(day, forked: false)
                }
                status = ended
            } else {
                status = try execute(arguments, errorDescriptor: errorDescriptor)
            }
            let journalData = FileManager.default.contents(atPath: journalPath)
            if let journalData { journalRead?(day, journalData) }
            // The day's own journal, just written by the broker that validated its bodies.
            let journal = try journalData.map { try JournalLines.envelopes(in: Array($0), checkingBodies: false) } ?? []
            guard status == 0 || status == 3 else {
                let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
                return outcome(events: journal.count, problem: "the run exited with status \(status): \(errors.split(separator: "\n").suffix(3).joined(separator: " / "))",
                               kind: "exit")
            }
            var health = RunHealth()
            for envelope in journal { health.read(envelope) }
            let checker = try LockInvariantChecker(configuration: configuration, catalog: catalog, timeZone: TimeZone(identifier: day.timeZone), models: models)
            let (verdicts, device) = checker.verdictsAndDeviceCoverage(for: journal)
            if let failure = verdicts.compactMap(\.modelFailure).first { return outcome(events: journal.count, problem: "the promise could not be judged: \(failure)") }
            let violations = verdicts.flatMap(\.violations)
            let decider = violations.first?.decidedBy
            let problems = health.problems
            var played = outcome(events: journal.count, violations: violations,
                                 problem: problems.isEmpty ? nil : "the run was degraded: \(problems.map(\.detail).joined(separator: "; "))",
                                 kind: problems.first?.kind, lastDecider: decider)
            for verdict in verdicts { for (name, count) in verdict.coverage.counts { played.coverage["\(verdict.product): \(name)"] = count } }
            for (name, count) in device.counts { played.coverage["device: \(name)"] = count }
            return played
        } catch {
            return outcome(problem: "the run could not be played: \(error)")
        }
    }

    /// The `shieldbus run` arguments of a day played in `directory`, on `endpoint` when a worker's kept sandboxes serve
    /// it: its scenario, journal and folders are named by the folder alone, so every day of a worker has the same ones
    /// and its broker template reads them once (`broker-template`), not in each day it forks.
    public static func runArguments(configurationPath: String, directory: String, endpoint: String?) -> [String] {
        // The day's journal is judged by explore, so its broker judges nothing (`--no-check`).
        ["run", "--config", configurationPath, "--scenario", scenarioPath(in: directory), "--journal", journalPath(in: directory),
         "--runtime-dir", directory + "/run", "--state-dir", directory + "/state", "--quiet", "--no-check"]
            + (endpoint.map { ["--endpoint", $0] } ?? [])
    }

    private static func scenarioPath(in directory: String) -> String { directory + "/day.yml" }
    private static func journalPath(in directory: String) -> String { directory + "/journal.jsonl" }

    /// Executes `shieldbus ARGUMENTS` and waits for it: its exit status, or the number of the signal that ended it.
    private func execute(_ arguments: [String], errorDescriptor: Int32) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = errorDescriptor < 0 ? nil : FileHandle(fileDescriptor: errorDescriptor, closeOnDealloc: true)
        process.standardError = errors
        // Its end is taken from the termination handler: `waitUntilExit` looks every 50 ms, a pause after every day.
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        try? errors?.close()  // the child has its copy; explore plays thousands of days in one process
        launches.started(process.processIdentifier)
        exited.wait()
        launches.exited(process.processIdentifier)
        return process.terminationStatus
    }

    /// Plays days `jobs` at a time; the outcomes come back in the days' order.
    public func run(_ days: [Day], jobs: Int) -> [DayOutcome] {
        let outcomes = Mutex([DayOutcome?](repeating: nil, count: days.count))
        DispatchQueue.concurrentPerform(iterations: min(max(1, jobs), max(1, days.count))) { worker in
            var index = worker
            while index < days.count {
                let outcome = run(days[index])
                outcomes.withLock { $0[index] = outcome }
                index += max(1, jobs)
            }
        }
        return outcomes.withLock { $0.map { $0! } }
    }

    /// Plays `days` with `jobs` workers, each taking the next day as soon as it is free (days differ in length by
    /// up to ten times, so a batch that waits for its slowest day leaves workers idle), and hands each outcome to
    /// `handle` on the calling thread in the days' order. No new day starts once `startsMore` says no. Before an
    /// outcome for which `quiesces` holds, the days in flight finish and no new one starts until `handle` returns
    /// (a failure is shrunk with every job).
    public func play(_ days: [Day], jobs: Int, startsMore: @escaping @Sendable () -> Bool,
                     quiesces: (DayOutcome) -> Bool, handle: (DayOutcome) -> Void) {
        let pool = DayPool(count: days.count)
        let workers = min(max(1, jobs), max(1, days.count))
        for _ in 0..<workers {
            Thread.detachNewThread { [self] in
                while let index = pool.take(startsMore) { pool.finish(index, with: run(days[index])) }
                pool.retire()
            }
        }
        var next = 0
        while let outcome = pool.outcome(at: next, workers: workers, quiescing: quiesces) {
            handle(outcome)
            pool.resume()
            next += 1
        }
    }

    private func nextRunNumber() -> Int {
        counter.withLock {
            runs += 1
            return runs
        }
    }
}

/// The shared state of `DayRunner.play`: which day is next, the outcomes not yet handed on, and whether workers may
/// start new days.
private final class DayPool: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private var next = 0
    private var inFlight = 0
    private var retired = 0
    private var paused = false
    private var stopped = false
    private var outcomes: [Int: DayOutcome] = [:]

    init(count: Int) { self.count = count }

    /// The next day to play, or nil when there is none or no new day may start.
    func take(_ startsMore: () -> Bool) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while paused && !stopped { condition.wait() }
        guard !stopped, next < count, startsMore() else {
            stopped = true
            return nil
        }
        next += 1
        inFlight += 1
        return next - 1
    }

    func finish(_ index: Int, with outcome: DayOutcome) {
        condition.lock()
        outcomes[index] = outcome
        inFlight -= 1
        condition.broadcast()
        condition.unlock()
    }

    func retire() {
        condition.lock()
        retired += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the outcome of day `index`; nil when that day was never started. When `quiescing` holds for it, the
    /// pool is paused and the days in flight have finished when it returns.
    func outcome(at index: Int, workers: Int, quiescing: (DayOutcome) -> Bool) -> DayOutcome? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let outcome = outcomes.removeValue(forKey: index) {
                if quiescing(outcome) {
                    paused = true
                    while inFlight > 0 { condition.wait() }
                }
                return outcome
            }
            if index >= next && retired == workers { return nil }
            condition.wait()
        }
    }

    /// Lets workers start new days again after a pause.
    func resume() {
        condition.lock()
        paused = false
        condition.broadcast()
        condition.unlock()
    }
}
