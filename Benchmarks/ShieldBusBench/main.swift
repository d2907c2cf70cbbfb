// shieldbus-bench: events per second through the ShieldBus broker beside a plain libzmq XSUB/XPUB proxy, same load, same run.

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

do {
    let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
    exit(benchmark(options))
} catch let error as UsageError {
    guard let message = error.message else {
        print(BenchOptions.usage)
        exit(0)
    }
    note("shieldbus-bench: \(message) (see --help)")
    exit(2)
}
