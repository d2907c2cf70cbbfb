import Foundation

/// Shrinks a failing day to a small one that still fails the same way: fewer steps, shorter gaps, fewer apps.
///
/// Each candidate is played for real, so the budget is counted in runs. Candidates are tried `jobs` at a time and
/// the first failing one in a fixed order is kept, so the result does not depend on which run finished first.
public struct Shrinker {
    public let runner: DayRunner
    public let jobs: Int
    public let maximumRuns: Int
    /// Hears the shrinking go on after each batch of runs: the runs spent, and the steps the smallest failing day has.
    public var progress: (_ runs: Int, _ steps: Int) -> Void = { _, _ in }

    public init(runner: DayRunner, jobs: Int, maximumRuns: Int = 80) {
        self.runner = runner
        self.jobs = max(1, jobs)
        self.maximumRuns = maximumRuns
    }

    public struct Result {
        public init(day: Day, outcome: DayOutcome, runs: Int) {
            self.day = day
            self.outcome = outcome
            self.runs = runs
        }

        public let day: Day
        public let outcome: DayOutcome
        public let runs: Int
    }

    public func shrink(_ failure: DayOutcome) -> Result {
        var best = failure
        var runs = 0
        /// The first candidate (in order) that fails like the original, if any; counts the runs.
        func firstFailing(_ candidates: [Day]) -> DayOutcome? {
            var start = 0
            while start < candidates.count && runs < maximumRuns {
                let batch = Array(candidates[start..<min(candidates.count, start + jobs, start + maximumRuns - runs)])
                runs += batch.count
                let found = runner.run(batch, jobs: jobs).first(where: { $0.failsLike(failure) })
                progress(runs, (found ?? best).day.steps.count)
                if let found { return found }
                start += batch.count
            }
            return nil
        }
        // Fewer steps: remove chunks, halving their size; a removed step's gap goes to the next one, so the
        // steps that remain keep their times.
        var chunk = max(1, best.day.steps.count / 2)
        while chunk >= 1 && runs < maximumRuns {
            var index = 0
            while index < best.day.steps.count && runs < maximumRuns {
                let candidates = stride(from: index, to: best.day.steps.count, by: chunk).prefix(jobs).map { Self.removing($0..<min($0 + chunk, best.day.steps.count), from: best.day) }
                if let found = firstFailing(candidates) {
                    best = found
                } else {
                    index += chunk * candidates.count
                }
            }
            chunk /= 2
        }
        // Shorter gaps: halve each gap (and the tail) while it still fails.
        for position in (0...best.day.steps.count).reversed() where runs < maximumRuns {
            while runs < maximumRuns {
                var candidate = best.day
                if position == candidate.steps.count {
                    guard candidate.tail > 120 else { break }
                    candidate.tail /= 2
                } else {
                    guard candidate.steps[position].gap > 10 else { break }
                    candidate.steps[position].gap /= 2
                }
                guard let found = firstFailing([candidate]) else { break }
                best = found
            }
        }
        // Fewer apps: every other app the day opens becomes the one it opens most (the product's own app is never swapped).
        let apps = best.day.steps.compactMap(\.app)
        if let common = Dictionary(grouping: apps, by: { $0 }).max(by: { ($0.value.count, $1.key) < ($1.value.count, $0.key) })?.key {
            for app in Set(apps).subtracting([common]).sorted() where runs < maximumRuns {
                var candidate = best.day
                for index in candidate.steps.indices where candidate.steps[index].app == app {
                    candidate.steps[index].action = candidate.steps[index].action.replacingOccurrences(of: app, with: common)
                    candidate.steps[index].app = common
                }
                if let found = firstFailing([candidate]) { best = found }
            }
        }
        return Result(day: best.day, outcome: best, runs: runs)
    }

    static func removing(_ range: Range<Int>, from day: Day) -> Day {
        var shorter = day
        let removedGaps = day.steps[range].reduce(0) { $0 + $1.gap }
        shorter.steps.removeSubrange(range)
        if range.lowerBound < shorter.steps.count {
            shorter.steps[range.lowerBound].gap += removedGaps
        } else {
            shorter.tail += removedGaps
        }
        return shorter
    }
}
