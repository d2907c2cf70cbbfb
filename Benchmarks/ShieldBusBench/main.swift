// shieldbus-bench: ShieldBus's speed — bus throughput beside plain libzmq, the simulated day and year, the shield decision, command start-up, explore's days, the floor the guarantees set.

import BusProtocol
import Configuration
import Foundation

/// Writes a line to standard error (progress and failures; standard output holds only the results).
func note(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Runs the chosen suites and prints their reports, then every figure beside its baseline and target. The exit
/// status says whether everything ran and every event reached every subscriber (a missed target is not a failure).
func benchmark(_ options: BenchOptions) -> Int32 {
    let machine = MachineInfo.current()
    var figures = FigureTable(machine: machine, mode: options.quick ? "quick" : "full")
    let before = MachineLoad.Reading.now()
    var throughputJSON: String?
    var complete = true
    do {
        if options.suites.contains(.throughput) {
            let report = try throughput(options)
            complete = report.summaries.allSatisfy(\.isComplete)
            if options.json { throughputJSON = report.json } else { print(report.table) }
            for summary in report.summaries {
                guard let ratio = report.ratio(summary) else { continue }
                let lean = summary.kind == .broker
                figures.figures.append(Figure(name: lean ? "throughput, lean subscribers ÷ plain proxy" : "throughput, BusConnection subscribers ÷ plain proxy",
                                              value: ratio, unit: "ratio", baseline: lean ? Baseline.leanRatio : Baseline.sdkRatio,
                                              target: lean ? 0.9 : 0.7, better: .higher))
            }
        }
        if options.suites.contains(.floor) { figures.figures += try floorSuite(options) }
        let others = options.suites.filter { $0 != .throughput && $0 != .floor }
        if !others.isEmpty {
            let scratch = try ScratchDirectory(prefix: "sbsim")
            let installation = try Installation.current()
            for suite in others {
                switch suite {
                case .simulation: figures.figures += try simulation(options, installation, scratch.path)
                case .latency: figures.figures += try latency(options, installation, scratch.path)
                case .commands: figures.figures += try commands(options, installation, scratch.path)
                case .explore: figures.figures += try explore(options, installation, scratch.path)
                case .throughput, .floor: break
                }
            }
        }
    } catch {
        note("shieldbus-bench: \(error)")
        return 1
    }
    figures.load = MachineLoad(from: before, to: MachineLoad.Reading.now(), cores: machine.cores)
    if options.json {
        print("{\"figures\":\(figures.json.jsonText)" + (throughputJSON.map { ",\"throughput\":\($0)" } ?? "") + "}")
    } else {
        print(figures.table)
    }
    return complete ? 0 : 1
}

func throughput(_ options: BenchOptions) throws -> Report {
    let bench = try Bench(options)
    note("throughput: \(options.events) events × \(options.subscribers) subscribers, \(options.bodyBytes)-byte bodies, \(options.runs) runs per load")
    let before = MachineLoad.Reading.now()
    let summaries = try bench.run(progress: note)
    let load = MachineLoad(from: before, to: MachineLoad.Reading.now(), cores: MachineInfo.current().cores)
    var report = Report(machine: MachineInfo.current(), load: load, options: options, summaries: summaries, pieces: nil)
    // Below the aim, say where the time goes without being asked.
    let belowAim = summaries.contains { summary in report.ratio(summary).map { $0 < 0.5 } ?? false }
    if options.pieces || belowAim {
        note("timing the broker's pieces alone…")
        report.pieces = try PieceTimings.measure(bodyBytes: options.bodyBytes, subscribers: options.subscribers)
    }
    return report
}

func simulation(_ options: BenchOptions, _ installation: Installation, _ directory: String) throws -> [Figure] {
    let bench = SimulationBench(installation: installation, directory: directory)
    let day = try bench.makeRunDay(runs: options.dayRuns, progress: note).median
    let year = try bench.heavyUserYear(days: options.yearDays, progress: note)
    let scale = 365 / Double(year.days)
    let extrapolated = year.days == 365 ? "" : "extrapolated from \(year.days) days"
    var figures = [
        Figure(name: "make run's day (\(day.events) events)", value: day.eventsPerSecond, unit: "events/s",
               baseline: Baseline.makeRunDayEventsPerSecond, target: 10_000, better: .higher),
        Figure(name: "heavy-user year, wall time", value: year.run.wallSeconds * scale, unit: "s",
               baseline: Baseline.yearSeconds, target: 15, better: .lower, note: extrapolated),
        Figure(name: "heavy-user year (\(Format.count(year.run.events)) events in \(year.days) days)", value: year.run.eventsPerSecond,
               unit: "events/s", baseline: Baseline.yearEventsPerSecond, target: nil, better: .higher),
        Figure(name: "heavy-user year, after its last event (check, shutdown)", value: year.run.afterLastEventSeconds * scale, unit: "s",
               baseline: Baseline.yearAfterLastEventSeconds, target: nil, better: .lower, note: extrapolated),
    ]
    // The broker's own share: its loop's thread per journal event (the target bounds it), libzmq's I/O threads beside.
    if let threads = year.run.brokerThreads {
        let events = Double(max(year.run.events, 1))
        figures.append(Figure(name: "broker CPU per event, heavy days: its loop's thread", value: threads.loopSeconds / events * 1e6,
                              unit: "µs", baseline: nil, target: 10, better: .lower))
        figures.append(Figure(name: "broker CPU per event, heavy days: libzmq I/O threads", value: threads.ioThreadsSeconds / events * 1e6,
                              unit: "µs", baseline: nil, target: nil, better: .lower))
    }
    // A turn is a hand-off the broker waits for (docs/protocol.md § 9): the unit a virtual run pays in wake-ups.
    for (name, run) in [("make run's day", day), ("heavy-user days", year.run)] {
        guard let turns = run.turns else { continue }
        figures.append(Figure(name: "turns per event, \(name) (\(Format.count(turns)))", value: Double(turns) / Double(max(run.events, 1)),
                              unit: "ratio", baseline: Baseline.turnsPerEvent[name], target: nil, better: .lower))
    }
    let curve = DayCostCurve(costs: year.costPerDay, measure: "wall ms")
    let cpuCurve = DayCostCurve(costs: year.cpuPerDay, measure: "CPU ms, every process of the run")
    note(curve.text)
    note(cpuCurve.text)
    if let flatness = curve.lastOverFirst {
        figures.append(Figure(name: "cost of a simulated day, last week ÷ first week", value: flatness, unit: "ratio",
                              baseline: Baseline.dayCostLastOverFirst, target: 1.2, better: .lower))
    }
    // The same in CPU: other work on the machine moves the wall time of a stretch, not its CPU.
    if let flatness = cpuCurve.lastOverFirst {
        figures.append(Figure(name: "CPU of a simulated day, last week ÷ first week", value: flatness, unit: "ratio",
                              baseline: nil, target: 1.2, better: .lower))
    }
    for name in ["broker"] + Installation.referencePlugins {
        guard let kib = year.run.peaksKiB[name] else { continue }
        figures.append(Figure(name: "peak RSS during the year, \(name)", value: Double(kib) / 1024, unit: "MiB",
                              baseline: Baseline.peakMiB[name], target: nil, better: .lower))
        // iOS ends a DeviceActivityMonitor extension whose footprint (dirty memory) passes about 6 MB; the monitor is
        // the one that matters. Resident clean pages (code, libraries) do not count there (RunWatcher.dirtyKiB).
        guard let dirty = year.run.dirtyPeaksKiB[name] else { continue }
        figures.append(Figure(name: "peak dirty footprint during the year, \(name)", value: Double(dirty) / 1024, unit: "MiB",
                              baseline: nil, target: name == "activity-monitor" ? 6 : nil, better: .lower))
    }
    return figures
}

func latency(_ options: BenchOptions, _ installation: Installation, _ directory: String) throws -> [Figure] {
    let bench = ShieldLatencyBench(installation: installation, directory: directory, watchesSteps: options.shieldSteps)
    let result = try bench.measure(opens: options.opens, progress: note)
    let shield = result.shield, raw = result.rawRoundTrip
    return [
        Figure(name: "shield decision p50 (\(shield.count) opens)", value: shield.p50, unit: "µs", baseline: Baseline.shieldP50, target: nil, better: .lower),
        Figure(name: "shield decision p99", value: shield.p99, unit: "µs", baseline: Baseline.shieldP99, target: 1000, better: .lower),
        Figure(name: "shield decision p99.9", value: shield.p999, unit: "µs", baseline: Baseline.shieldP999, target: nil, better: .lower),
        Figure(name: "shield CPU per open and way home, broker and below", value: result.cpuPerOpen, unit: "µs",
               baseline: nil, target: nil, better: .lower),
        Figure(name: "raw libzmq round trip p50 / p99 (same run)", value: raw.p50, unit: "µs", baseline: nil, target: nil, better: .neither,
               note: String(format: "p99 %.1f µs", raw.p99)),
        Figure(name: "shield decision p99 ÷ raw round trip p99", value: shield.p99 / raw.p99, unit: "ratio",
               baseline: Baseline.shieldP99OverRaw, target: 3, better: .lower),
    ]
}

func commands(_ options: BenchOptions, _ installation: Installation, _ directory: String) throws -> [Figure] {
    let timings = try CommandStartupBench(installation: installation, directory: directory).measure(runs: options.commandRuns, progress: note)
    return timings.map { timing in
        Figure(name: "\(timing.command), median of \(timing.runs)", value: timing.median, unit: "ms",
               baseline: timing.command.contains("status") ? Baseline.statusMilliseconds : Baseline.tapMilliseconds, target: 15, better: .lower,
               note: String(format: "min %.1f ms, CPU %.1f ms", timing.min, timing.cpu))
    }
}

func explore(_ options: BenchOptions, _ installation: Installation, _ directory: String) throws -> [Figure] {
    let bench = ExploreSpeedBench(installation: installation, directory: directory)
    return try ExploreSpeedBench.products.flatMap { product in
        try ExploreSpeedBench.profiles.map { profile in
            let result = try bench.measure(product: product, profile: profile, days: max(options.exploreDays / 2, 1), progress: note)
            return Figure(name: "explore \(product), \(profile), days per second", value: result.daysPerSecond, unit: "days/s",
                          baseline: nil, target: profile == "faithful" ? 15 : 8, better: .higher,
                          note: String(format: "%d days in %.1f s, %.2f CPU-s a day, %d failed", result.days, result.wallSeconds,
                                       result.cpuSeconds / Double(max(result.days, 1)), result.failures))
        }
    }
}

/// The least CPU per journal event the guarantees allow, from unit costs measured on this machine, beside the targets.
func floorSuite(_ options: BenchOptions) throws -> [Figure] {
    let scratch = try ScratchDirectory(prefix: "sbfloor")
    let bench = FloorBench(directory: scratch.path, rounds: options.floorRounds, operations: options.floorOperations, starts: options.floorStarts)
    note("floor: \(options.floorRounds) rounds of \(options.floorOperations) turns, round trips and commits and \(options.floorStarts) starts of each kind")
    return try withExtendedLifetime(scratch) { Floor(units: try bench.measure(progress: note)).figures }
}

/// The idle-sessions bench: the two phases' round trips, and whether the p99 stayed within 2×.
func idleSessionsBenchmark(_ options: BenchOptions, idle: Int) -> Int32 {
    do {
        let machine = MachineInfo.current()
        var template = Array("/tmp/sbidle-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchFailure("cannot create a temporary folder in /tmp") }
        let directory = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        note("shieldbus-bench: \(options.roundTrips) round trips alone, then beside \(idle) idle heartbeating sessions")
        let bench = IdleSessionsBench(idleSessions: idle, roundTrips: options.roundTrips, paceMilliseconds: 2, directory: directory,
                                      log: StandardErrorCapture(path: directory + "/broker.log"))
        let phases = try bench.run(progress: note)
        let ratio = phases[1].percentile(0.99) / max(phases[0].percentile(0.99), 1)
        if options.json {
            let rows: [JSONValue] = phases.map { phase in
                ["idleSessions": .int(Int64(phase.idleSessions)), "p50us": .double(Format.rounded(phase.percentile(0.5))),
                 "p99us": .double(Format.rounded(phase.percentile(0.99))), "maxus": .double(Format.rounded(phase.percentile(1))),
                 "brokerCPUPercent": .double(Format.rounded(phase.brokerCPUShare * 100))]
            }
            print(JSONValue.object(["machine": .string("\(machine.cpuModel), \(machine.cores) cores"), "date": .string(machine.date),
                                    "phases": .array(rows), "p99Ratio": .double(Format.rounded(ratio))]).jsonText)
        } else {
            print("machine: \(machine.cpuModel), \(machine.cores) cores, \(machine.kernel); libzmq \(machine.libzmq); \(machine.swift); \(machine.date)")
            print("idle sessions   round trip p50 µs   p99 µs     max µs      broker CPU")
            for phase in phases {
                print(String(phase.idleSessions).padding(16) + Format.micro(phase.percentile(0.5)).padding(20) + Format.micro(phase.percentile(0.99)).padding(11)
                      + Format.micro(phase.percentile(1)).padding(12) + String(format: "%.1f %%", phase.brokerCPUShare * 100))
            }
            print("p99 with \(idle) idle sessions ÷ p99 alone: \(String(format: "%.2f", ratio)) (aim: at most 2)")
        }
        return ratio <= 2 ? 0 : 1
    } catch {
        note("shieldbus-bench: \(error)")
        return 1
    }
}

/// The abuse bench: each abuse's round trips beside the quiet ones, and whether every p99 stayed within 2×.
func abuseBenchmark(_ options: BenchOptions) -> Int32 {
    do {
        let machine = MachineInfo.current()
        var template = Array("/tmp/sbabuse-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchFailure("cannot create a temporary folder in /tmp") }
        let directory = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        note("shieldbus-bench: \(options.roundTrips) round trips of a well-behaved client, quiet and beside each abuse, \(options.runs) round(s); the median of each figure")
        let bench = AbuseBench(roundTrips: options.roundTrips, paceMilliseconds: 2, directory: directory,
                               log: StandardErrorCapture(path: directory + "/broker.log"))
        let phases = try bench.run(rounds: options.runs, progress: note)
        let quiet = max(phases[0].p99, 1)
        let ratios = phases.map { $0.p99 / quiet }
        if options.json {
            let rows: [JSONValue] = zip(phases, ratios).map { phase, ratio in
                ["abuse": .string(phase.abuse.rawValue), "p50us": .double(Format.rounded(phase.p50)),
                 "p99us": .double(Format.rounded(phase.p99)), "p99Ratio": .double(Format.rounded(ratio)),
                 "p99usPerRound": .array(phase.p99s.map { .double(Format.rounded($0)) }),
                 "brokerCPUPercent": .double(Format.rounded(phase.brokerCPUShare * 100)),
                 "residentMBAfter": .double(Format.rounded(phase.residentMegabytesAfter)),
                 "memoryReturnSeconds": phase.secondsToReturn.map { .double(Format.rounded($0)) } ?? .null,
                 "refusals": .object(phase.refusals.mapValues(JSONValue.int))]
            }
            print(JSONValue.object(["machine": .string("\(machine.cpuModel), \(machine.cores) cores"), "date": .string(machine.date), "rounds": .int(Int64(options.runs)),
                                    "loadAverage": .string(((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").prefix(3).joined(separator: " ")), "phases": .array(rows)]).jsonText)
        } else {
            print("machine: \(machine.cpuModel), \(machine.cores) cores, \(machine.kernel); libzmq \(machine.libzmq); \(machine.swift); \(machine.date)")
            print("medians of \(options.runs) round(s); memory after: the largest; refused: every round's")
            print("abuse               p50 µs      p99 µs      p99 ÷ quiet   broker CPU   memory after   back within   refused")
            for (phase, ratio) in zip(phases, ratios) {
                let refused = phase.refusals.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                print(phase.abuse.rawValue.padding(20) + Format.micro(phase.p50).padding(12) + Format.micro(phase.p99).padding(12)
                      + String(format: "%.2f", ratio).padding(14) + String(format: "%.1f %%", phase.brokerCPUShare * 100).padding(13)
                      + String(format: "%.0f MB", phase.residentMegabytesAfter).padding(15)
                      + (phase.secondsToReturn.map { String(format: "%.1f s", $0) } ?? "> \(AbuseBench.returnLimitSeconds) s").padding(14)
                      + (refused.isEmpty ? "—" : refused))
            }
            print("aim: every p99 within 2× of the quiet one, and the memory back within seconds")
        }
        return ratios.allSatisfy { $0 <= 2 } && phases.allSatisfy({ $0.secondsToReturn != nil }) ? 0 : 1
    } catch {
        note("shieldbus-bench: \(error)")
        return 1
    }
}

/// Writes the heavy-user year's first `days` days to `file`, saying what it wrote.
func writeYear(days: Int, to file: String) -> Int32 {
    let generated = HeavyUserDays.benchYear(days: days).generate()
    do {
        try generated.text.write(toFile: file, atomically: true, encoding: .utf8)
    } catch {
        note("shieldbus-bench: cannot write \(file): \(error.localizedDescription)")
        return 1
    }
    note("wrote \(file): the heavy-user year's first \(days) day(s), \(generated.counts.steps) steps; play them with `shieldbus run --scenario \(file) --profile faithful`")
    return 0
}

// An empty Swift program's start, for the floor suite: nothing before this line but the runtime's own start.
if CommandLine.arguments.dropFirst().first == "--floor-empty" { exit(0) }
if CommandLine.arguments.dropFirst().first == "--floor-turns" { exit(FloorTurns.serve(Array(CommandLine.arguments.dropFirst(2)))) }
if CommandLine.arguments.dropFirst().first == "--floor-peer" { exit(FloorPeer.serve(Array(CommandLine.arguments.dropFirst(2)))) }
if CommandLine.arguments.dropFirst().first == "--abuser" { exit(AbuserProcess.serve(Array(CommandLine.arguments.dropFirst(2)))) }
do {
    let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
    if let idle = options.idleSessions { exit(idleSessionsBenchmark(options, idle: idle)) }
    if options.abuse { exit(abuseBenchmark(options)) }
    if let file = options.writeYear { exit(writeYear(days: options.yearDays, to: file)) }
    exit(benchmark(options))
} catch let error as UsageError {
    guard let message = error.message else {
        print(BenchOptions.usage)
        exit(0)
    }
    note("shieldbus-bench: \(message) (see --help)")
    exit(2)
}
