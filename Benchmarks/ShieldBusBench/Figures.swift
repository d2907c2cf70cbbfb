import BusProtocol
import Foundation

/// One headline figure of `make bench`, beside its baseline (measured before issue 12's changes, see
/// docs/benchmarks.md) and its target.
struct Figure {
    enum Better { case higher, lower, neither }

    let name: String
    let value: Double
    let unit: String
    let baseline: Double?
    /// The target's bound, when there is one, and which side of it is good.
    let target: Double?
    let better: Better
    /// A note shown after the target (e.g. how a figure was extrapolated).
    var note = ""
    /// A floor the guarantees set under the target (the `floor` suite), not a measurement of the target's run: it
    /// says whether the target is `reachable`, never whether it is `met`.
    var isFloor = false

    /// Whether the measured run achieved its target.
    var met: Bool? { isFloor ? nil : onTheGoodSide }

    /// For a floor: whether the target lies at or above it, so that what the floor counts does not rule it out.
    var reachable: Bool? { isFloor ? onTheGoodSide : nil }

    private var onTheGoodSide: Bool? {
        guard let target else { return nil }
        switch better {
        case .higher: return value >= target
        case .lower: return value <= target
        case .neither: return nil
        }
    }

    var targetText: String {
        guard let target else { return "—" }
        switch better {
        case .higher: return "≥ \(Figure.number(target))"
        case .lower: return "≤ \(Figure.number(target))"
        case .neither: return Figure.number(target)
        }
    }

    static func number(_ value: Double) -> String {
        if value >= 10_000 { return Format.rate(value) }
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }
}

/// The baselines: the code before the speed work (main at c4bace3, release build, dynamically linked), measured on
/// a 2-core machine partly busy with builds; the year from 30 days played. The throughput ratios are the issue's own
/// medians. What a run measures is compared with these and with its targets, never asserted.
enum Baseline {
    static let yearSeconds: Double? = 1030
    static let yearEventsPerSecond: Double? = 953
    static let dayCostLastOverFirst: Double? = 1.26
    /// Measured apart, on a quiet machine (main at 61a9a96): the whole 365-day year's time from its last event to the
    /// end, the check nearly all of it.
    static let yearAfterLastEventSeconds: Double? = 54
    static let makeRunDayEventsPerSecond: Double? = 716
    static let leanRatio: Double? = 0.35
    static let sdkRatio: Double? = 0.21
    static let shieldP50: Double? = 5644
    static let shieldP99: Double? = 67_961
    static let shieldP999: Double? = 182_800
    static let shieldP99OverRaw: Double? = 28.3
    static let statusMilliseconds: Double? = 31.9
    static let tapMilliseconds: Double? = 35.6
    /// Counted from journals (1,295 turns for 1,368 events); the heavy days were not counted at c4bace3.
    static let turnsPerEvent: [String: Double] = ["make run's day": 0.95]
    static let peakMiB: [String: Double] = [
        "broker": 56.9, "activity-monitor": 28.3, "shield-renderer": 28.7, "action-delegate": 24.5,
        "companion-app": 28.7, "report-builder": 29.4, "notifier": 29.0,
    ]
}

/// Everything one `make bench` measured, as the summary table (or JSON).
struct FigureTable {
    let machine: MachineInfo
    let mode: String
    var figures: [Figure] = []
    /// How busy the machine was with other work over the whole benchmark.
    var load: MachineLoad?

    var table: String {
        var lines = ["", "ShieldBus figures (\(mode)) — machine: \(machine.cpuModel), \(machine.cores) cores, \(String(format: "%.1f", machine.memoryGiB)) GiB, \(machine.kernel); \(machine.swift); \(machine.date)"]
        if let load {
            let quiet = load.othersShare > 0.05 ? " — not quiet: times are longer than on a quiet machine" : ""
            lines.append(String(format: "other processes used %.0f%% of the machine over the %.0f s of this benchmark (steal %.1f s)",
                                load.othersShare * 100, load.seconds, load.stealSeconds) + quiet)
        }
        lines.append(["figure".padding(58), "now".leftPadding(10), "baseline".leftPadding(10), "target".leftPadding(10), "  met"].joined())
        for figure in figures {
            let met = figure.met.map { $0 ? "yes" : "NO" } ?? "—"
            lines.append([(figure.name + " (\(figure.unit))").padding(58), Figure.number(figure.value).leftPadding(10),
                          (figure.baseline.map(Figure.number) ?? "—").leftPadding(10), figure.targetText.leftPadding(10),
                          "  " + met + (figure.note.isEmpty ? "" : "  " + figure.note)].joined())
        }
        return lines.joined(separator: "\n")
    }

    var json: JSONValue {
        .object([
            "mode": .string(mode), "date": .string(machine.date), "othersShare": .double(Format.rounded(load?.othersShare ?? 0)),
            "machine": .string("\(machine.cpuModel), \(machine.cores) cores, \(machine.kernel)"),
            "figures": .array(figures.map { figure in
                var entry: [String: JSONValue] = ["name": .string(figure.name), "unit": .string(figure.unit), "value": .double(Format.rounded(figure.value))]
                if let baseline = figure.baseline { entry["baseline"] = .double(baseline) }
                if figure.target != nil { entry["target"] = .string(figure.targetText) }
                if let met = figure.met { entry["met"] = .bool(met) }
                if let reachable = figure.reachable { entry["reachable"] = .bool(reachable) }
                if !figure.note.isEmpty { entry["note"] = .string(figure.note) }
                return .object(entry)
            }),
        ])
    }
}
