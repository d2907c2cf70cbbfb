import BusProtocol
import Foundation

/// The results as a small table for people, or as JSON for programs.
struct Report {
    let machine: MachineInfo
    let load: MachineLoad
    let options: BenchOptions
    let summaries: [LoadSummary]
    var pieces: PieceTimings?

    private var proxy: LoadSummary? { summaries.first { $0.kind == .proxy } }

    /// The broker load's median events/s over the proxy's.
    func ratio(_ summary: LoadSummary) -> Double? {
        guard summary.kind != .proxy, let proxy else { return nil }
        return summary.median.eventsPerSecond / proxy.median.eventsPerSecond
    }

    /// The ratio within each round (a broker run over the proxy run just before it), which shares the
    /// machine's momentary state and so shows how much of the spread is the machine and how much the broker.
    func roundRatios(_ summary: LoadSummary) -> [Double] {
        guard summary.kind != .proxy, let proxy else { return [] }
        return zip(summary.runs, proxy.runs).map { $0.eventsPerSecond / $1.eventsPerSecond }
    }

    var table: String {
        var lines: [String] = []
        lines.append("ShieldBus throughput: 1 publisher → \(options.subscribers) subscribers, \(options.bodyBytes)-byte JSON bodies, ipc://, \(options.events) events per run")
        lines.append("median of \(options.runs) runs after a \(options.warmupEvents)-event warm-up; every queue holds \(Format.count(Int(options.highWaterMark))) messages (no drops by design)")
        lines.append("machine: \(machine.cpuModel), \(machine.cores) cores, \(String(format: "%.1f", machine.memoryGiB)) GiB, \(machine.kernel); libzmq \(machine.libzmq); \(machine.swift); \(machine.date)")
        var busy = String(format: "other processes used %.1f CPU-s in %.1f s (%.0f%% of the machine), steal %.1f s",
                          load.othersCPUSeconds, load.seconds, load.othersShare * 100, load.stealSeconds)
        if load.othersShare > 0.05 { busy += " — the machine was not quiet: expect a wider spread" }
        lines.append(busy)
        lines.append("")
        let header = ["load".padding(46), "events/s".leftPadding(10), "deliveries/s".leftPadding(13), "runs min–max".leftPadding(19),
                      "spread".leftPadding(7), "ratio".leftPadding(6), "  per subscriber events/s (median run)", "  lost"]
        lines.append(header.joined())
        for summary in summaries {
            let median = summary.median
            let range = "\(Format.rate(summary.slowest))–\(Format.rate(summary.fastest))"
            let ratio = self.ratio(summary).map { String(format: "%.2f", $0) } ?? "—"
            let perSubscriber = median.perSubscriberRates.map(Format.rate).joined(separator: " ")
            let row = [summary.kind.title.padding(46), Format.rate(median.eventsPerSecond).leftPadding(10),
                       Format.rate(median.deliveriesPerSecond).leftPadding(13), range.leftPadding(19),
                       String(format: "%.1f%%", summary.spread * 100).leftPadding(7), ratio.leftPadding(6),
                       "  " + perSubscriber, "  " + summary.runs.map(Format.losses).joined(separator: " / ")]
            lines.append(row.joined())
        }
        lines.append("")
        lines.append("events/s = events delivered to all \(options.subscribers) subscribers ÷ time from the first publish to the last arrival at any of them;")
        lines.append("deliveries/s = the same × subscribers; ratio = broker events/s ÷ proxy events/s, medians (aim: ≥ 0.50).")
        for summary in summaries where !roundRatios(summary).isEmpty {
            let rounds = roundRatios(summary).map { String(format: "%.2f", $0) }.joined(separator: " ")
            lines.append("ratio round by round, \(summary.kind.rawValue): \(rounds)")
        }
        lines.append("")
        lines.append("where the CPU goes: µs of CPU per event from first publish to last arrival (median run; \(machine.cores) cores shared by all threads)")
        lines.append(["load".padding(46), "total".leftPadding(8), "publisher".leftPadding(11), "hub thread".leftPadding(12),
                      "subscribers".leftPadding(13), "libzmq I/O".leftPadding(12)].joined())
        for summary in summaries {
            let cpu = summary.median.cpu.microsecondsPerEvent(summary.median.published)
            lines.append([summary.kind.title.padding(46), Format.micro(cpu.total).leftPadding(8), Format.micro(cpu.publisher).leftPadding(11),
                          Format.micro(cpu.hub).leftPadding(12), Format.micro(cpu.subscribers).leftPadding(13), Format.micro(cpu.io).leftPadding(12)].joined())
        }
        lines.append("(hub thread = the broker's loop or zmq_proxy; libzmq I/O = every context's I/O thread, what the named threads do not account for)")
        if let pieces {
            lines.append("")
            lines.append(contentsOf: pieces.tableLines)
        }
        return lines.joined(separator: "\n")
    }

    var json: String {
        var loads: [JSONValue] = []
        for summary in summaries {
            var entry: [String: JSONValue] = [
                "load": .string(summary.kind.rawValue), "title": .string(summary.kind.title),
                "eventsPerSecond": .double(summary.median.eventsPerSecond.rounded()),
                "deliveriesPerSecond": .double(summary.median.deliveriesPerSecond.rounded()),
                "slowestEventsPerSecond": .double(summary.slowest.rounded()), "fastestEventsPerSecond": .double(summary.fastest.rounded()),
                "spread": .double((summary.spread * 10_000).rounded() / 10_000), "complete": .bool(summary.isComplete),
                "runs": .array(summary.runs.map(Report.json(run:))),
            ]
            if let ratio = ratio(summary) {
                entry["ratioToProxy"] = .double((ratio * 1000).rounded() / 1000)
                entry["ratioToProxyByRound"] = .array(roundRatios(summary).map { .double(($0 * 1000).rounded() / 1000) })
            }
            loads.append(.object(entry))
        }
        var report: [String: JSONValue] = [
            "machine": [
                "cpu": .string(machine.cpuModel), "cores": .int(Int64(machine.cores)),
                "memoryGiB": .double((machine.memoryGiB * 10).rounded() / 10), "kernel": .string(machine.kernel),
                "libzmq": .string(machine.libzmq), "swift": .string(machine.swift), "date": .string(machine.date),
            ],
            "machineLoad": [
                "seconds": .double(Format.rounded(load.seconds)), "othersCPUSeconds": .double(Format.rounded(load.othersCPUSeconds)),
                "othersShare": .double(Format.rounded(load.othersShare)), "stealSeconds": .double(Format.rounded(load.stealSeconds)),
            ],
            "settings": [
                "events": .int(Int64(options.events)), "runs": .int(Int64(options.runs)), "warmupEvents": .int(Int64(options.warmupEvents)),
                "subscribers": .int(Int64(options.subscribers)), "bodyBytes": .int(Int64(options.bodyBytes)), "transport": "ipc",
                "highWaterMark": .int(Int64(options.highWaterMark)),
            ],
            "loads": .array(loads),
        ]
        if let pieces { report["pieces"] = pieces.json }
        return JSONValue.object(report).jsonText
    }

    private static func json(run: RunResult) -> JSONValue {
        var entry: [String: JSONValue] = [
            "eventsPerSecond": .double(run.eventsPerSecond.rounded()), "elapsedSeconds": .double((run.elapsedSeconds * 1e6).rounded() / 1e6),
            "published": .int(Int64(run.published)), "delivered": .int(Int64(run.delivered)), "missing": .int(Int64(run.missing)),
            "outOfOrder": .int(Int64(run.outOfOrder)), "seqGaps": .int(Int64(run.seqGaps)),
            "perSubscriberEventsPerSecond": .array(run.perSubscriberRates.map { .double($0.rounded()) }),
        ]
        if let dropped = run.brokerDropped { entry["brokerDropped"] = .int(Int64(dropped)) }
        let cpu = run.cpu.microsecondsPerEvent(run.published)
        entry["cpuMicrosecondsPerEvent"] = [
            "total": .double(Format.rounded(cpu.total)), "publisher": .double(Format.rounded(cpu.publisher)),
            "hub": .double(Format.rounded(cpu.hub)), "subscribers": .double(Format.rounded(cpu.subscribers)), "libzmqIO": .double(Format.rounded(cpu.io)),
        ]
        return .object(entry)
    }
}

/// Number formatting for the table.
enum Format {
    /// `123.4k`, `1.23M`: three significant figures are all a throughput figure deserves.
    static func rate(_ value: Double) -> String {
        if value >= 1_000_000 { return String(format: "%.2fM", value / 1_000_000) }
        if value >= 1_000 { return String(format: "%.1fk", value / 1_000) }
        return String(format: "%.0f", value)
    }

    /// Microseconds with two decimals.
    static func micro(_ value: Double) -> String { String(format: "%.2f", value) }

    /// Two decimals, for JSON.
    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    static func count(_ value: Int) -> String {
        var digits = Array(String(value))
        var index = digits.count - 3
        while index > 0 { digits.insert(",", at: index); index -= 3 }
        return String(digits)
    }

    /// `0` when the run lost nothing, else what went missing.
    static func losses(_ run: RunResult) -> String {
        if run.isComplete { return "0" }
        var parts: [String] = []
        if run.missing > 0 { parts.append("\(run.missing) missing") }
        if run.outOfOrder > 0 { parts.append("\(run.outOfOrder) out of order") }
        if run.seqGaps > 0 { parts.append("\(run.seqGaps) seq gaps") }
        if let dropped = run.brokerDropped, dropped > 0 { parts.append("\(dropped) dropped by the broker") }
        let short = run.published * run.subscribers.count - run.delivered
        if parts.isEmpty && short > 0 { parts.append("\(short) short") }
        return parts.joined(separator: ", ")
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    func leftPadding(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
