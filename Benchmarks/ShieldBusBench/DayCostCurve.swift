import Foundation

/// What each simulated day of a long run cost (wall time, or CPU), summed up over stretches of the run: flat when
/// a day late in the year costs what a day early in it did.
struct DayCostCurve {
    /// Seconds, day by day (day 1 includes starting the broker and the plugins).
    let costs: [Double]
    /// What was measured, for the heading: "wall ms" or "CPU ms, every process".
    let measure: String

    /// Stretches of the run: (first day, last day), both counted from 1.
    var stretches: [(Int, Int)] {
        [(1, 1), (2, 7), (8, 30), (31, 91), (92, 182), (183, 365)]
            .filter { $0.0 <= costs.count }
            .map { ($0.0, min($0.1, costs.count)) }
    }

    /// The mean cost of a day, in seconds, over days `first` to `last`.
    func mean(_ first: Int, _ last: Int) -> Double {
        let days = costs[(first - 1)..<last]
        return days.reduce(0, +) / Double(days.count)
    }

    /// The last 7 days' mean cost over days 2–8's (day 1 pays for start-up); nil for runs under 15 days.
    var lastOverFirst: Double? {
        guard costs.count >= 15 else { return nil }
        return mean(costs.count - 6, costs.count) / mean(2, 8)
    }

    var text: String {
        var lines = ["cost per simulated day (\(measure) per day of bus time, mean over each stretch):"]
        for (first, last) in stretches {
            let name = first == last ? "day \(first)" : "days \(first)–\(last)"
            lines.append("  \(name.padding(16)) \(String(format: "%8.1f", mean(first, last) * 1000)) ms")
        }
        if let ratio = lastOverFirst { lines.append(String(format: "  last week ÷ days 2–8: %.2f", ratio)) }
        return lines.joined(separator: "\n")
    }
}

/// A private temporary folder, removed with this object. Short, because an ipc:// socket path must fit in 107 bytes.
final class ScratchDirectory {
    let path: String

    init(prefix: String) throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchFailure("cannot create a temporary folder in /tmp") }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
