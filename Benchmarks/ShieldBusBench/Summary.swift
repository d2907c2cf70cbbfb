/// One load's measured runs, summarised: the median run, and how far the runs spread around it.
struct LoadSummary {
    let kind: LoadKind
    /// Measured runs, in the order they ran.
    let runs: [RunResult]

    /// The run with the median events/s (the middle one; of an even count, the lower middle).
    var median: RunResult {
        let sorted = runs.sorted { $0.eventsPerSecond < $1.eventsPerSecond }
        return sorted[(sorted.count - 1) / 2]
    }

    var slowest: Double { runs.map(\.eventsPerSecond).min() ?? 0 }
    var fastest: Double { runs.map(\.eventsPerSecond).max() ?? 0 }

    /// (fastest − slowest) / median, as a fraction.
    var spread: Double { (fastest - slowest) / median.eventsPerSecond }

    /// Whether every run delivered every event to every subscriber, in order, with no drops.
    var isComplete: Bool { runs.allSatisfy(\.isComplete) }
}
