import Configuration
import Foundation

/// What `shieldbus explore` was asked to do.
public struct ExploreOptions: Sendable {
    public var days: Int
    public var seed: UInt64
    public var profiles: [String]
    public var jobs: Int
    /// Wall seconds after which no new days start (nil: no limit).
    public var timeBudget: TimeInterval?
    /// Where shrunk failures are written.
    public var failuresDirectory: String
    /// Runs the shrinker may spend on one failure.
    public var shrinkRuns: Int
    /// Where every generated day is kept as a scenario file (nil: nowhere).
    public var keptDaysDirectory: String?
    /// The part of the seeds this machine plays.
    public var shard: ExploreShard
    /// The iOS releases each day is also played on (`IOSRelease` names); with any, each day is played on none first,
    /// to tell a release's defeats from the product's own failures. Empty: no release, none named.
    public var releases: [String] = []

    public init(days: Int, seed: UInt64, profiles: [String], jobs: Int, timeBudget: TimeInterval?, failuresDirectory: String, shrinkRuns: Int,
                keptDaysDirectory: String? = nil, shard: ExploreShard = .whole) {
        self.keptDaysDirectory = keptDaysDirectory
        self.shard = shard
        self.days = days
        self.seed = seed
        self.profiles = profiles
        self.jobs = jobs
        self.timeBudget = timeBudget
        self.failuresDirectory = failuresDirectory
        self.shrinkRuns = shrinkRuns
    }
}

/// A failure, shrunk and written out.
public struct ShrunkFailure {
    public let original: DayOutcome
    public let shrunk: Shrinker.Result
    /// The scenario file written.
    public let path: String
    /// Its text.
    public let scenario: String
}

/// Generates days from the seed, plays them `jobs` at a time, and shrinks and writes each failure.
public struct Explorer {
    public let runner: DayRunner
    public let generator: DayGenerator
    public let product: String
    public let options: ExploreOptions

    public init(runner: DayRunner, generator: DayGenerator, product: String, options: ExploreOptions) {
        self.runner = runner
        self.generator = generator
        self.product = product
        self.options = options
    }

    /// The days to play, in order: for each of the shard's seeds from `seed` on, one day per profile — and with
    /// releases, that day on no release, then on each release (the same steps: a release changes the device, not the
    /// person).
    public func days() -> [Day] {
        let releases: [String?] = options.releases.isEmpty ? [nil] : [nil] + options.releases
        return options.shard.seeds(firstSeed: options.seed, days: options.days).flatMap { seed in
            options.profiles.flatMap { profile in
                let day = generator.day(seed: seed, profile: profile)
                return releases.map { release in
                    var played = day
                    played.release = release
                    return played
                }
            }
        }
    }

    /// Plays every day (until the time budget is spent), `jobs` at a time; `played` hears each outcome in the days'
    /// order, `shrinking` each failure's shrinking as it goes (the day, the runs spent, its steps now), `shrunk` each
    /// failure shrunk.
    public func explore(played playedDay: (DayOutcome) -> Void, shrinking: @escaping (_ failure: DayOutcome, _ runs: Int, _ steps: Int) -> Void = { _, _, _ in },
                        shrunk: (ShrunkFailure) -> Void) {
        let started = Date()
        let budget = options.timeBudget
        var written = Set<String>()
        // Whether each seed and profile failed on no release (outcomes come in the days' order: that day first).
        var failedOnNoRelease: [String: Bool] = [:]
        func key(_ day: Day) -> String { "\(day.seed)/\(day.profile)" }
        // A day that fails on a release where it held on none is the release's defeat, not the product's failure:
        // it is reported as such and not shrunk.
        func defeated(_ outcome: DayOutcome) -> Bool {
            outcome.day.release != nil && outcome.failed && failedOnNoRelease[key(outcome.day)] == false
        }
        runner.play(days(), jobs: options.jobs, startsMore: { budget.map { Date().timeIntervalSince(started) <= $0 } ?? true },
                    quiesces: { $0.failed && $0.isShrinkable && options.shrinkRuns > 0 && !defeated($0) }) { played in
            var outcome = played
            if outcome.day.release == nil { failedOnNoRelease[key(outcome.day)] = outcome.failed }
            outcome.defeatedByRelease = defeated(outcome)
            if let kept = options.keptDaysDirectory { keep(outcome, in: kept) }
            playedDay(outcome)
            guard outcome.failed, !outcome.defeatedByRelease else { return }
            // A run that could not be played is written as it was: shrinking needs a failure to keep.
            var shrinker = Shrinker(runner: runner, jobs: options.jobs, maximumRuns: options.shrinkRuns)
            shrinker.progress = { runs, steps in shrinking(outcome, runs, steps) }
            let result = outcome.isShrinkable ? shrinker.shrink(outcome) : Shrinker.Result(day: outcome.day, outcome: outcome, runs: 0)
            var name = "\(product)-seed\(outcome.day.seed)" + (outcome.day.release.map { "-ios\($0)" } ?? "")
            if written.contains(name) { name += "-\(outcome.day.profile)" }
            written.insert(name)
            let path = options.failuresDirectory + "/\(name).yml"
            let scenario = result.day.scenarioText(name: name, comment: Self.account(of: result.outcome))
            Self.writeFailure(scenario, to: path)
            shrunk(ShrunkFailure(original: outcome, shrunk: result, path: path, scenario: scenario))
        }
    }

    /// Writes a shrunk failure's scenario (the merge of shards writes theirs here too); a file that cannot be
    /// written is said on standard error, and the failure is still reported.
    public static func writeFailure(_ scenario: String, to path: String) {
        do {
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            try scenario.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("explore: cannot write \(path): \(error)\n".utf8))
        }
    }

    /// Writes a played day as a scenario file, its verdict in its comment.
    private func keep(_ outcome: DayOutcome, in directory: String) {
        let name = "\(product)-seed\(outcome.day.seed)-\(outcome.day.profile)" + (outcome.day.release.map { "-ios\($0)" } ?? "")
        let path = directory + "/\(name).yml"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let verdict = outcome.failed ? Self.account(of: outcome) : "held"
            try outcome.day.scenarioText(name: name, comment: verdict).write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("explore: cannot keep \(path): \(error)\n".utf8))
        }
    }

    /// The checker's account of a failure, in words: each violation, and who last decided.
    public static func account(of outcome: DayOutcome) -> String {
        var lines = outcome.violations.map { "\($0.kind.rawValue): \($0)" }
        if let problem = outcome.runProblem { lines.append("run: \(problem)") }
        if let decider = outcome.lastDecider { lines.append("last to write the ManagedSettings stores before it: \(decider)") }
        return lines.joined(separator: "\n")
    }
}
