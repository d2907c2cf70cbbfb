// shieldbus-bench: events per second through the ShieldBus broker beside a plain libzmq XSUB/XPUB proxy, same load, same run.

import BusProtocol
import Foundation

/// Writes a line to standard error (progress and failures; standard output holds only the results).
func note(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Runs the benchmark and prints its report; the exit status says whether every event reached every subscriber.
func benchmark(_ options: BenchOptions) -> Int32 {
    do {
        let machine = MachineInfo.current()
        let bench = try Bench(options)
        note("shieldbus-bench: \(options.events) events × \(options.subscribers) subscribers, \(options.bodyBytes)-byte bodies, \(options.runs) runs per load")
        let before = MachineLoad.Reading.now()
        let summaries = try bench.run(progress: note)
        let load = MachineLoad(from: before, to: MachineLoad.Reading.now(), cores: machine.cores)
        var report = Report(machine: machine, load: load, options: options, summaries: summaries, pieces: nil)
        // Below the aim, say where the time goes without being asked.
        let belowAim = summaries.contains { summary in report.ratio(summary).map { $0 < 0.5 } ?? false }
        if options.pieces || belowAim {
            note("timing the broker's pieces alone…")
            report.pieces = try PieceTimings.measure(bodyBytes: options.bodyBytes, subscribers: options.subscribers)
        }
        print(options.json ? report.json : report.table)
        return summaries.allSatisfy(\.isComplete) ? 0 : 1
    } catch {
        note("shieldbus-bench: \(error)")
        return 1
    }
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

do {
    let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
    if let idle = options.idleSessions { exit(idleSessionsBenchmark(options, idle: idle)) }
    exit(benchmark(options))
} catch let error as UsageError {
    guard let message = error.message else {
        print(BenchOptions.usage)
        exit(0)
    }
    note("shieldbus-bench: \(message) (see --help)")
    exit(2)
}
