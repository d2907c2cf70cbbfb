import Configuration
import Foundation

/// Where the release build's programs and the repository's configuration are.
struct Installation {
    /// The folder holding `shieldbus`, the reference plugins and this benchmark (.build/release).
    let binaries: String
    /// The repository's Config folder.
    let config: String

    static func current() throws -> Installation {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let binaries = URL(fileURLWithPath: executable).deletingLastPathComponent()
        let candidates = [FileManager.default.currentDirectoryPath + "/Config",
                          binaries.appendingPathComponent("../../../Config").standardizedFileURL.path,
                          binaries.appendingPathComponent("../../Config").standardizedFileURL.path]
        guard let config = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/default.yml") }) else {
            throw BenchFailure("cannot find the repository's Config/default.yml (looked in \(candidates.joined(separator: ", ")))")
        }
        let installation = Installation(binaries: binaries.path, config: config)
        let missing = (["shieldbus"] + Installation.referencePlugins).filter { !FileManager.default.isExecutableFile(atPath: installation.program($0)) }
        guard missing.isEmpty else {
            throw BenchFailure("missing release programs beside the benchmark: \(missing.joined(separator: ", ")) — `make bench` builds them")
        }
        return installation
    }

    static let referencePlugins = ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "report-builder", "notifier"]

    func program(_ name: String) -> String { binaries + "/" + name }
}

/// One `shieldbus run` to its end as a child process, watched from outside: wall time, journal events, how bus
/// time advanced, and the peak memory of the broker and each plugin.
struct SimulationRun {
    let wallSeconds: Double
    let events: Int
    let peaksKiB: [String: Int]
    /// Peak dirty footprint (iOS's measure of an extension's memory; `RunWatcher.dirtyKiB`) by process, in KiB.
    let dirtyPeaksKiB: [String: Int]
    let progress: [RunWatcher.Progress]
    let cpu: [RunWatcher.CPUReading]
    let started: UInt64
    /// The broker's own count of turns (hand-offs it waited for), from its `stopped` log line.
    let turns: Int?
    /// The broker's CPU by thread, each thread's largest reading (nil where `schedstat` cannot be read).
    let brokerThreads: BrokerThreads?

    var eventsPerSecond: Double { Double(events) / wallSeconds }

    /// Runs `shieldbus run --config <config> [arguments]` with a journal in `directory`; fails on a bad exit status.
    static func run(_ installation: Installation, config: String, arguments: [String], directory: String) throws -> SimulationRun {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let journal = directory + "/journal.jsonl"
        _ = FileManager.default.createFile(atPath: journal, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: installation.program("shieldbus"))
        process.arguments = ["run", "--config", config, "--quiet", "--log-level", "info", "--journal", journal,
                             "--runtime-dir", directory + "/run", "--state-dir", directory + "/state"] + arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = directory + "/stderr"
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: errors) ?? FileHandle.nullDevice
        // Its end is taken from the termination handler: `waitUntilExit` looks every 50 ms, which a day of 0.15 s
        // would read as 0.15, 0.20 or 0.25 s.
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        let started = monotonicNanoseconds()
        try process.run()
        let watcher = RunWatcher(brokerPID: process.processIdentifier, journalPath: journal)
        watcher.start()
        exited.wait()
        let ended = monotonicNanoseconds()
        let (peaks, dirtyPeaks, progress, cpu, brokerThreads) = watcher.stop()
        // 0: the scenario ran to its end; 3: it ended with lock-invariant findings, which are not this benchmark's business.
        guard process.terminationStatus == 0 || process.terminationStatus == 3 else {
            let tail = ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "").split(separator: "\n").suffix(10).joined(separator: "\n")
            throw BenchFailure("shieldbus run \(arguments.joined(separator: " ")) exited with \(process.terminationStatus):\n\(tail)")
        }
        return SimulationRun(wallSeconds: Double(ended - started) / 1e9, events: watcher.journalLines,
                             peaksKiB: peaks, dirtyPeaksKiB: dirtyPeaks, progress: progress, cpu: cpu, started: started, turns: turns(loggedIn: errors),
                             brokerThreads: brokerThreads)
    }

    /// `turns=N` from the broker's last `stopped` line in its log.
    private static func turns(loggedIn path: String) -> Int? {
        let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
        guard let line = lines.last(where: { $0.contains("stopped") && $0.contains("turns=") }) else { return nil }
        return line.split(separator: " ").first { $0.hasPrefix("turns=") }.flatMap { Int($0.dropFirst("turns=".count)) }
    }

    /// When the journal's last line was seen (within a sampling period); the process's end without a journal.
    var lastEventNanoseconds: UInt64 { progress.last?.wallNanoseconds ?? started + UInt64(wallSeconds * 1e9) }

    /// Wall time from the last journaled event to the process's end: the run's own check of its journal (the lock
    /// invariant, the expectations), the summary, the shutdown.
    var afterLastEventSeconds: Double { max(0, wallSeconds - Double(lastEventNanoseconds - started) / 1e9) }

    /// When each simulated day ended, in wall time: when the journal first reached the next day's start (bus time);
    /// the last day ends at the last event (what follows is `afterLastEventSeconds`, not a day's cost).
    func dayEnds(firstDayStart: Int64, days: Int) -> [UInt64] {
        var index = 0
        return (1...days).map { day in
            let end = firstDayStart + Int64(day) * 86_400_000
            while index < progress.count, progress[index].busTimeMilliseconds < end { index += 1 }
            return index < progress.count ? progress[index].wallNanoseconds : lastEventNanoseconds
        }
    }

    /// The wall time each simulated day cost, in seconds. Day 1 starts when the process starts (plugin start-up included).
    func costPerDay(firstDayStart: Int64, days: Int) -> [Double] {
        let ends = dayEnds(firstDayStart: firstDayStart, days: days)
        return zip([started] + ends, ends).map { Double($1 - min($1, $0)) / 1e9 }
    }

    /// The CPU each simulated day cost, in seconds, over every process of the run (the broker and all its plugins,
    /// those that ended too): unlike the wall time, it does not move with other work on the machine.
    func cpuPerDay(firstDayStart: Int64, days: Int) -> [Double] {
        let ends = dayEnds(firstDayStart: firstDayStart, days: days)
        return zip([started] + ends, ends).map { cpuSeconds(at: $1) - cpuSeconds(at: $0) }
    }

    /// The run's CPU at a wall time, interpolated between the watcher's readings (every 200 ms).
    func cpuSeconds(at wall: UInt64) -> Double {
        guard let after = cpu.firstIndex(where: { $0.wallNanoseconds >= wall }) else { return cpu.last?.cpuSeconds ?? 0 }
        guard after > 0 else { return 0 }
        let (a, b) = (cpu[after - 1], cpu[after])
        let share = Double(wall - a.wallNanoseconds) / Double(max(1, b.wallNanoseconds - a.wallNanoseconds))
        return a.cpuSeconds + (b.cpuSeconds - a.cpuSeconds) * share
    }
}

struct SimulationBench {
    struct DayResult {
        let runs: [SimulationRun]
        var median: SimulationRun { runs.sorted { $0.eventsPerSecond < $1.eventsPerSecond }[runs.count / 2] }
    }

    struct YearResult {
        let days: Int
        let counts: HeavyUserDays.Counts
        let run: SimulationRun
        /// Seconds of wall time per simulated day, day by day.
        let costPerDay: [Double]
        /// Seconds of CPU (every process of the run) per simulated day, day by day.
        let cpuPerDay: [Double]
    }

    let installation: Installation
    let directory: String

    /// `make run`'s day (Config/default.yml and its scenario), `runs` times.
    func makeRunDay(runs: Int, progress: (String) -> Void) throws -> DayResult {
        let results = try (1...runs).map { index in
            let run = try SimulationRun.run(installation, config: installation.config + "/default.yml", arguments: [], directory: "\(directory)/day-\(index)")
            progress("make run's day \(index)/\(runs): \(run.events) events in \(String(format: "%.2f", run.wallSeconds)) s (\(Format.rate(run.eventsPerSecond)) events/s)")
            return run
        }
        return DayResult(runs: results)
    }

    /// The generated heavy-user year (or its first `days`), faithful profile, every reference plugin a process.
    func heavyUserYear(days: Int, progress: (String) -> Void) throws -> YearResult {
        let generated = HeavyUserDays.benchYear(days: days).generate()
        let scenario = "\(directory)/heavy-user-\(days).yml"
        try generated.text.write(toFile: scenario, atomically: true, encoding: .utf8)
        progress("heavy-user year: \(days) days, \(generated.counts.steps) steps (at least \(generated.counts.fewestOpensInADay) app opens and \(generated.counts.fewestVisitsInADay) web visits every day); playing…")
        let run = try SimulationRun.run(installation, config: installation.config + "/default.yml",
                                        arguments: ["--scenario", scenario, "--profile", "faithful"], directory: "\(directory)/year")
        // The scenario starts at 2026-11-23T06:00 in the configuration's zone (Europe/Berlin, UTC+1 in November):
        // 05:00Z in ms since the epoch; a "day" here is 24 h of bus time from there.
        let costs = run.costPerDay(firstDayStart: 1_795_410_000_000, days: days)
        let cpu = run.cpuPerDay(firstDayStart: 1_795_410_000_000, days: days)
        progress("heavy-user year: \(run.events) events in \(String(format: "%.1f", run.wallSeconds)) s (\(Format.rate(run.eventsPerSecond)) events/s)")
        return YearResult(days: days, counts: generated.counts, run: run, costPerDay: costs, cpuPerDay: cpu)
    }
}

extension HeavyUserDays {
    /// The heavy-user year the simulation suite plays (or its first `days`), and `--write-year` writes.
    static func benchYear(days: Int) -> HeavyUserDays { HeavyUserDays(seed: 2026, days: days, profile: "faithful", pace: .heavy) }
}
