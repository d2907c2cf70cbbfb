import ArgumentParser
import BusProtocol
import Configuration
import Explore
import Foundation
import LockInvariant
import RunPlanning

extension ShieldBus {
    struct ExploreCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "explore",
            abstract: "Generate days of a person, play each through the broker and plugins, and shrink any that breaks the product.",
            // The generated usage would end in `<subcommand>`: explore itself takes none; `merge` is the one it has.
            usage: """
            shieldbus explore [--config <file>] [--days <n>] [--seed <s>] [--profile <profile>] [--jobs <j>] [--time-budget <duration>] \
            [--failures-dir <dir>] [--shrink-runs <n>] [--keep-days <dir>] [--json] [--shard <I/N>] [--results <file>]
              shieldbus explore merge <file> ... [--json] [--results <file>]
            """,
            discussion: """
            Each day is generated from a seed (apps picked and not, habits, web pages in public and private \
            tabs, shield buttons, force-quits, hours in the background, restarts, iOS updates, device clock and \
            time-zone changes, DST dates, broker crashes, authorization revoked and allowed again), played in virtual time by `shieldbus run` child \
            processes, and checked against the promise of each of the configuration's products (docs/promises.md), \
            with the app actions and the presses past a cap that the promise names. A degraded run (a plugin that \
            stopped answering or crashed, a callback loop) fails too. The totals end with the coverage: how many days reached \
            each edge of each promise.

            A failing day is shrunk — fewer steps, shorter gaps, fewer apps — to a small scenario that fails the \
            same way, written to <failures-dir>/<product>-seed<S>.yml, with the command that replays it. \
            The same seed gives the same days and the same verdicts. Exits 3 when a day failed.

            Across machines: each plays a shard (--shard I/N, or the index its batch engine sets) and writes \
            --results FILE; `shieldbus explore merge FILES…` joins them into the report one machine gives \
            (docs/explore.md, "Across machines").
            """,
            subcommands: [Merge.self]
        )

        @Option(name: .long, help: ArgumentHelp("The configuration (each product that declares a promise is judged by it).", valueName: "file"))
        var config: String?

        @Option(name: .long, help: ArgumentHelp("Days to generate (per profile).", valueName: "n"))
        var days = 50

        @Option(name: .long, help: ArgumentHelp("The first day's seed; day i has seed S + i.", valueName: "s"))
        var seed: UInt64 = 1

        @Option(name: .long, help: ArgumentHelp("faithful, ios-realistic or both.", valueName: "profile"), completion: .list(["faithful", "ios-realistic", "both"]))
        var profile = "both"

        // Twice the cores: a virtual day keeps less than a core busy (its processes wait on each other's turns), so
        // days played one per core leave part of the machine idle (docs/benchmarks.md, "Explore and launches").
        @Option(name: .long, help: ArgumentHelp("Also play each day on an iOS release whose documented Screen Time bugs the device reproduces (\(IOSRelease.names.joined(separator: ", "))), or on all of them: each day is played on no release first, and a day that fails only on a release is reported as that release's defeat, not the product's failure (docs/fidelity.md).", valueName: "release|all"),
                completion: .list(IOSRelease.names + ["all", "none"]))
        var ios: String?

        @Option(name: .long, help: ArgumentHelp("Days played at once, each by its own broker and plugins (default: twice the machine's cores: a day's processes wait on each other's turns, so one day per core leaves cores idle).", valueName: "j"))
        var jobs = 2 * ProcessInfo.processInfo.activeProcessorCount

        @Option(name: .long, help: ArgumentHelp("Start no new day after this much wall time, e.g. 10m or 1h.", valueName: "duration"))
        var timeBudget: String?

        @Option(name: .long, help: ArgumentHelp("Where shrunk failures are written.", valueName: "dir"))
        var failuresDir = "explore-failures"

        @Option(name: .long, help: ArgumentHelp("Runs the shrinker may spend on one failure.", valueName: "n"))
        var shrinkRuns = 60

        @Option(name: .long, help: ArgumentHelp("Also keep every generated day here, as a scenario file (<product>-seed<S>-<profile>.yml) to replay with `shieldbus run --scenario`.", valueName: "dir"))
        var keepDays: String?

        @Option(name: .long, help: ArgumentHelp("Where the days are played, each in a folder of its own removed once judged (default: TMPDIR when set, else /dev/shm when it is a tmpfs with 32 MB free per day at once, else /tmp; the first line says which).", valueName: "dir"))
        var workDir: String?

        @Flag(name: .long, help: "One JSON object per line: each day's verdict, each failure, and the totals.")
        var json = false

        @Flag(name: .long, help: "Leave each worker's processes where the scheduler puts them (also SHIELDBUS_NO_PIN=1). By default worker i, with its broker template, kept sandboxes and every day's broker and plugins, is held on the i-th processor this may run on (modulo their number): a day's turns then wake no process on another processor.")
        var noPin = false

        @Option(name: .long, help: ArgumentHelp("Play only shard I of N of the seeds (counted from 1): seed S is shard (S - first seed) mod N + 1's. Without it, taken from SHIELDBUS_SHARD=I/N, a Kubernetes Indexed Job's JOB_COMPLETION_INDEX with SHIELDBUS_SHARD_COUNT, or a Slurm job array's SLURM_ARRAY_TASK_ID, _COUNT and _MIN.", valueName: "I/N"))
        var shard: String?

        @Option(name: .long, help: ArgumentHelp("Write the results here (JSON: the days with their verdicts, the totals, the coverage, each failure with its shrunk scenario), for `shieldbus explore merge`.", valueName: "file"))
        var results: String?

        func validate() throws {
            guard ["faithful", "ios-realistic", "both"].contains(profile) else { throw ValidationError("--profile must be faithful, ios-realistic or both, not '\(profile)'") }
            guard days >= 0 else { throw ValidationError("--days must not be negative") }
            guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
            if let ios, ios != "all", ios != "none", IOSRelease(rawValue: ios) == nil {
                let suggestion = closest(to: ios, in: IOSRelease.names + ["all"]).map { " — did you mean '\($0)'?" } ?? ""
                throw ValidationError("--ios must be all, none or one of \(IOSRelease.names.joined(separator: ", ")), not '\(ios)'\(suggestion)")
            }
            if let timeBudget, Scenario.duration(timeBudget) == nil { throw ValidationError("--time-budget takes a duration like 90s, 10m or 1h30m, not '\(timeBudget)'") }
            if let shard { _ = try Self.shard(shard) }
        }

        /// The shard to play: `--shard`, else the one a batch engine's environment names, else the whole run.
        static func shard(_ option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ExploreShard {
            do {
                if let option { return try ExploreShard(parsing: option, source: "--shard") }
                return try ExploreShard.fromEnvironment(environment) ?? .whole
            } catch let error as ExploreShardError {
                throw ValidationError(error.description)
            }
        }

        func run() throws {
            let configPath = try DefaultFiles.configurationPath(config)
            let loaded: LoadedConfiguration
            do {
                loaded = try LoadedConfiguration(path: configPath)
            } catch let error as ConfigurationError {
                printError("error: \(error)")
                throw ExitCode(2)
            }
            let (configuration, catalog) = (loaded.configuration, loaded.catalog)
            let products: [String]
            do {
                products = try LockInvariantChecker(configuration: configuration, catalog: catalog, models: DefaultFiles.promiseModels).products.map(\.name)
            } catch let error as ConfigurationError {
                printError("error: \(error)")
                throw ExitCode(2)
            }
            guard !products.isEmpty else {
                printError("error: \(LockReport.noPromise(configuration)); there is nothing to explore against")
                throw ExitCode(2)
            }
            let product = products.joined(separator: "+")
            guard let executable = Bundle.main.executablePath else { throw CommandFailure("cannot find the shieldbus executable to start runs with") }
            let folders: DayFolders
            do { folders = try DayFolders(under: workDir, daysAtOnce: jobs) } catch {
                printError("error: \(error)")
                throw ExitCode(2)
            }
            defer { folders.remove() }
            let runner = DayRunner(executable: executable, configurationPath: configPath, configuration: configuration, catalog: catalog,
                                   workDirectory: folders.path,
                                   models: DefaultFiles.promiseModels, cores: WorkerCores.allowed(wanted: noPin ? false : nil))
            ExploreStop.install(runner: runner, folders: folders)
            let shard = try Self.shard(self.shard)
            // Found before the days are played, not after hours of them.
            if let results {
                let folder = (results as NSString).deletingLastPathComponent
                guard FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder) else {
                    printError("error: cannot write the results to \(results): \(folder.isEmpty ? "." : folder) is not a folder this can write in")
                    throw ExitCode(2)
                }
            }
            var options = ExploreOptions(days: days, seed: seed, profiles: profile == "both" ? ["faithful", "ios-realistic"] : [profile], jobs: jobs,
                                         timeBudget: timeBudget.flatMap(Scenario.duration), failuresDirectory: failuresDir, shrinkRuns: shrinkRuns,
                                         keptDaysDirectory: keepDays, shard: shard)
            options.releases = ios == "all" ? IOSRelease.names : ios.flatMap { $0 == "none" ? nil : [$0] } ?? []
            let explorer = Explorer(runner: runner, generator: DayGenerator(surface: ProductSurface(configuration: configuration, catalog: catalog)),
                                    product: product, options: options)
            guard let configText = try? String(contentsOfFile: configPath, encoding: .utf8) else { throw CommandFailure("cannot read \(configPath)") }
            let run = ExploreRun(version: ShieldBus.version, configPath: configPath, configText: configText, product: product, profiles: options.profiles,
                                 firstSeed: seed, days: days, shrinkRuns: shrinkRuns, failuresDirectory: failuresDir, releases: options.releases)
            let report = ExploreReport(run: run, shard: shard, json: json)
            let started = Date()
            printError("explore: \(jobs) day(s) at a time, in \(folders.path) (\(folders.choice))")
            explorer.explore(played: report.record, shrinking: report.shrinking, shrunk: report.record)
            runner.finish()
            report.finish(wallSeconds: Date().timeIntervalSince(started))
            if let results {
                do {
                    try report.results.write(to: results)
                } catch {
                    printError("error: cannot write the results to \(results): \(error)")
                    throw ExitCode(1)
                }
            }
            if report.results.days.contains(where: \.isFailure) { throw ExitCode(3) }
        }
    }
}

/// What explore prints: on standard output only what the seeds decide, written by `ExploreReportWriter` (so that a
/// merge of shards prints the same bytes); progress and wall times on standard error — a bar on a terminal, else a
/// line per finished day — with the time spent and an estimate of the time left, and the shrinking of a failure as it
/// goes. It keeps the days as a results file has them.
final class ExploreReport {
    private var writer: ExploreReportWriter
    private(set) var results: ExploreResults
    private let total: Int
    private let showsProgress = isatty(STDERR_FILENO) == 1
    private let started = Date()

    init(run: ExploreRun, shard: ExploreShard, json: Bool) {
        writer = ExploreReportWriter(run: run, json: json)
        results = ExploreResults(run: run, shard: shard, days: [])
        total = results.plannedDays.count
        emit(writer.header(shard: shard, seeds: shard.seeds(firstSeed: run.firstSeed, days: run.days).count))
    }

    private var played: Int { writer.totals.days }

    /// "1m02s, about 8m40s left": the time spent, and the time the days not yet played take at the rate so far.
    private var timing: String {
        let elapsed = Date().timeIntervalSince(started)
        guard played > 0, played < total else { return Self.duration(elapsed) }
        return "\(Self.duration(elapsed)), about \(Self.duration(elapsed / Double(played) * Double(total - played))) left"
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole >= 3600 { return String(format: "%dh%02dm", whole / 3600, whole % 3600 / 60) }
        return whole >= 60 ? String(format: "%dm%02ds", whole / 60, whole % 60) : "\(whole)s"
    }

    /// A failure being shrunk: how far it has come.
    func shrinking(_ failure: DayOutcome, runs: Int, steps: Int) {
        let line = "shrinking seed \(failure.day.seed) (\(failure.day.profile)): \(runs) run(s), \(failure.day.steps.count) → \(steps) step(s) · \(Self.duration(Date().timeIntervalSince(started)))"
        FileHandle.standardError.write(Data((showsProgress ? "\r\u{1B}[K" + line : line + "\n").utf8))
    }

    func record(_ outcome: DayOutcome) {
        let day = ExploredDay(outcome)
        results.days.append(day)
        emit(writer.lines(for: day))
    }

    func record(_ failure: ShrunkFailure) {
        // The failure is the last day's: explore hands it on before the next day.
        guard let last = results.days.indices.last else { return }
        results.days[last].failure = ExploredFailure(failure)
        emit(writer.failureLines(for: results.days[last]))
    }

    func finish(wallSeconds: Double) {
        clearProgress()
        for line in writer.totalsLines() { print(line) }
        fflush(nil)
        let rate = wallSeconds > 0 ? Double(played) / wallSeconds : 0
        printError(String(format: "explore: %d day(s) in %.0f s (%.2f days/s, %.0f events/s)", played, wallSeconds, rate,
                          wallSeconds > 0 ? Double(writer.totals.events) / wallSeconds : 0))
    }

    private func emit(_ lines: [String]) {
        if !lines.isEmpty { clearProgress() }
        for line in lines { print(line) }
        fflush(nil)
        drawProgress()
    }

    private func drawProgress() {
        guard played > 0 else { return }
        let failures = writer.totals.failures
        guard showsProgress else {
            // Not on a terminal (a log, CI): a line per finished day.
            return FileHandle.standardError.write(Data("explore: \(played)/\(total) days · \(failures) failure(s) · \(timing)\n".utf8))
        }
        let width = 30, done = total == 0 ? width : min(width, played * width / total)
        let bar = String(repeating: "#", count: done) + String(repeating: "-", count: width - done)
        FileHandle.standardError.write(Data("\r[\(bar)] \(played)/\(total) days · \(writer.totals.events) events · \(failures) failure(s) · \(timing)".utf8))
    }

    private func clearProgress() {
        guard showsProgress else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
