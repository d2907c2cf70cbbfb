import ArgumentParser
import BusProtocol
import Configuration
import Explore
import Foundation
import LockInvariant

extension ShieldBus {
    struct ExploreCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "explore",
            abstract: "Generate days of a person, play each through the broker and plugins, and shrink any that breaks the product.",
            discussion: """
            Each day is generated from a seed (apps picked and not, habits, web pages in public and private \
            tabs, shield buttons, force-quits, hours in the background, restarts, iOS updates, device clock and \
            time-zone changes, DST dates, broker crashes, authorization revoked and allowed again), played in virtual time by `shieldbus run` child \
            processes, and checked against the promise of each of the configuration's products (docs/promises.md), \
            with the app actions and the presses past a cap that the promise names. A degraded run (a plugin that \
            stopped answering, a callback loop) fails too. The totals end with the coverage: how many days reached \
            each edge of each promise.

            A failing day is shrunk — fewer steps, shorter gaps, fewer apps — to a small scenario that fails the \
            same way, written to <failures-dir>/<product>-seed<S>.yml, with the command that replays it. \
            The same seed gives the same days and the same verdicts. Exits 3 when a day failed.
            """
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
        // days played one per core leave part of the machine idle (docs/benchmarks.md, "Explore: days at once").
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

        @Flag(name: .long, help: "One JSON object per line: each day's verdict, each failure, and the totals.")
        var json = false

        func validate() throws {
            guard ["faithful", "ios-realistic", "both"].contains(profile) else { throw ValidationError("--profile must be faithful, ios-realistic or both, not '\(profile)'") }
            guard days >= 0 else { throw ValidationError("--days must not be negative") }
            guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
            if let ios, ios != "all", ios != "none", IOSRelease(rawValue: ios) == nil {
                let suggestion = closest(to: ios, in: IOSRelease.names + ["all"]).map { " — did you mean '\($0)'?" } ?? ""
                throw ValidationError("--ios must be all, none or one of \(IOSRelease.names.joined(separator: ", ")), not '\(ios)'\(suggestion)")
            }
            if let timeBudget, Scenario.duration(timeBudget) == nil { throw ValidationError("--time-budget takes a duration like 90s, 10m or 1h30m, not '\(timeBudget)'") }
        }

        func run() throws {
            let configPath = try DefaultFiles.configurationPath(config)
            let configuration: ShieldBusConfiguration, catalog: AppCatalog
            do {
                configuration = try ShieldBusConfiguration.load(path: configPath)
                catalog = try DefaultFiles.catalog(for: configuration)
                try configuration.validateReferences(catalog: catalog)
            } catch let error as ConfigurationError {
                printError("error: \(error)")
                throw ExitCode(2)
            }
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
            let work = NSTemporaryDirectory() + "shieldbus-explore-\(getpid())"
            defer { try? FileManager.default.removeItem(atPath: work) }
            let runner = DayRunner(executable: executable, configurationPath: configPath, configuration: configuration, catalog: catalog, workDirectory: work,
                                   models: DefaultFiles.promiseModels)
            var options = ExploreOptions(days: days, seed: seed, profiles: profile == "both" ? ["faithful", "ios-realistic"] : [profile], jobs: jobs,
                                         timeBudget: timeBudget.flatMap(Scenario.duration), failuresDirectory: failuresDir, shrinkRuns: shrinkRuns,
                                         keptDaysDirectory: keepDays)
            options.releases = ios == "all" ? IOSRelease.names : ios.flatMap { $0 == "none" ? nil : [$0] } ?? []
            let explorer = Explorer(runner: runner, generator: DayGenerator(surface: ProductSurface(configuration: configuration, catalog: catalog)),
                                    product: product, options: options)
            let report = ExploreReport(json: json, configPath: configPath, total: explorer.days().count, releases: options.releases)
            let started = Date()
            if !json {
                let releases = options.releases.isEmpty ? "" : " × iOS none, \(options.releases.joined(separator: ", "))"
                print("explore \(configPath) (\(product)): \(days) day(s) × \(options.profiles.joined(separator: ", "))\(releases) from seed \(seed), \(jobs) at a time")
            }
            explorer.explore(played: report.record, shrinking: report.shrinking, shrunk: report.record)
            report.finish(wallSeconds: Date().timeIntervalSince(started))
            if report.failures > 0 { throw ExitCode(3) }
        }
    }
}

/// What explore prints: on standard output only what the seed decides (so two runs compare byte for byte);
/// progress and wall times on standard error — a bar on a terminal, else a line per finished day — with the time
/// spent and an estimate of the time left, and the shrinking of a failure as it goes.
private extension Array where Element == String {
    /// The first two elements (the second empty if there is none).
    var pair: (String, String) { (first ?? "", count > 1 ? self[1] : "") }
}

final class ExploreReport {
    let json: Bool
    let configPath: String
    let total: Int
    /// The iOS releases played besides none (empty: no release asked for, none reported).
    let releases: [String]
    /// Per release ("none" for none): days played, held, defeated by the release, failed.
    private(set) var byRelease: [String: ReleaseTally] = [:]
    private(set) var played = 0
    private(set) var events = 0
    private(set) var failures = 0
    /// Each coverage counter: the days that reached it, and its total over them.
    private(set) var coverage: [String: (days: Int, total: Int)] = [:]
    private let showsProgress = isatty(STDERR_FILENO) == 1
    private let started = Date()

    struct ReleaseTally {
        var days = 0, held = 0, defeated = 0, failed = 0
    }

    init(json: Bool, configPath: String, total: Int, releases: [String] = []) {
        self.releases = releases
        self.json = json
        self.configPath = configPath
        self.total = total
    }

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
        played += 1
        events += outcome.events
        if outcome.failed && !outcome.defeatedByRelease { failures += 1 }
        let release = outcome.day.release ?? "none"
        byRelease[release, default: ReleaseTally()].days += 1
        if !outcome.failed { byRelease[release]!.held += 1 } else if outcome.defeatedByRelease { byRelease[release]!.defeated += 1 } else { byRelease[release]!.failed += 1 }
        for (name, count) in outcome.coverage { coverage[name] = ((coverage[name]?.days ?? 0) + 1, (coverage[name]?.total ?? 0) + count) }
        if json {
            var line: [String: JSONValue] = [
                "seed": .int(Int64(bitPattern: outcome.day.seed)), "profile": .string(outcome.day.profile), "timeZone": .string(outcome.day.timeZone),
                "start": .string(outcome.day.start), "steps": .int(Int64(outcome.day.steps.count)), "events": .int(Int64(outcome.events)),
                "verdict": .string(outcome.defeatedByRelease ? "defeated-by-release" : outcome.failed ? "broken" : "held"),
                "violations": .array(outcome.violations.map { .string($0.description) }),
                "coverage": .object(outcome.coverage.mapValues { .int(Int64($0)) }),
            ]
            if let problem = outcome.runProblem { line["runProblem"] = .string(problem) }
            if !releases.isEmpty { line["ios"] = .string(release) }
            print(JSONValue.object(line).jsonText)
        } else if outcome.defeatedByRelease {
            clearProgress()
            let first = outcome.violations.first.map { "\($0.kind.rawValue): \($0)" } ?? outcome.runProblem ?? ""
            print("defeated by iOS \(release): seed \(outcome.day.seed) (\(outcome.day.profile), \(outcome.day.timeZone), from \(outcome.day.start)), which held on none: \(first)")
        } else if outcome.failed {
            clearProgress()
            print("FAILED seed \(outcome.day.seed) (\(outcome.day.profile), \(outcome.day.timeZone), from \(outcome.day.start), \(outcome.day.steps.count) steps):")
            for line in Explorer.account(of: outcome).split(separator: "\n") { print("  \(line)") }
        }
        fflush(stdout)
        drawProgress()
    }

    func record(_ failure: ShrunkFailure) {
        let replay = "shieldbus run --config \(configPath) --scenario \(failure.path)"
        if json {
            print(JSONValue.object([
                "failure": .object([
                    "seed": .int(Int64(bitPattern: failure.original.day.seed)), "profile": .string(failure.original.day.profile),
                    "file": .string(failure.path), "replay": .string(replay), "steps": .int(Int64(failure.shrunk.day.steps.count)),
                    "originalSteps": .int(Int64(failure.original.day.steps.count)), "shrinkRuns": .int(Int64(failure.shrunk.runs)),
                    "account": .array(Explorer.account(of: failure.shrunk.outcome).split(separator: "\n").map { .string(String($0)) }),
                ]),
            ]).jsonText)
        } else {
            clearProgress()
            print("  shrunk from \(failure.original.day.steps.count) to \(failure.shrunk.day.steps.count) step(s) in \(failure.shrunk.runs) runs: \(failure.path)")
            print("  replay: \(replay)")
            for line in Explorer.account(of: failure.shrunk.outcome).split(separator: "\n") { print("    \(line)") }
        }
        fflush(stdout)
        drawProgress()
    }

    func finish(wallSeconds: Double) {
        clearProgress()
        if json {
            let counters = coverage.mapValues { JSONValue.object(["days": .int(Int64($0.days)), "total": .int(Int64($0.total))]) }
            var totals: [String: JSONValue] = ["days": .int(Int64(played)), "events": .int(Int64(events)), "failures": .int(Int64(failures)),
                                               "coverage": .object(counters)]
            if !releases.isEmpty {
                totals["releases"] = .object(byRelease.mapValues { tally in
                    .object(["days": .int(Int64(tally.days)), "held": .int(Int64(tally.held)), "defeated": .int(Int64(tally.defeated)), "failures": .int(Int64(tally.failed))])
                })
            }
            print(JSONValue.object(totals).jsonText)
        } else {
            print("explored \(played) day(s), \(events) events: \(failures == 0 ? "no failures" : "\(failures) failure(s)")")
            if !releases.isEmpty { print(releaseText) }
            print(coverageText)
        }
        let rate = wallSeconds > 0 ? Double(played) / wallSeconds : 0
        printError(String(format: "explore: %d day(s) in %.0f s (%.2f days/s, %.0f events/s)", played, wallSeconds, rate, wallSeconds > 0 ? Double(events) / wallSeconds : 0))
    }

    /// Per release, in order (none first): what its days gave. A defeat is a day that held on no release.
    var releaseText: String {
        let lines = (["none"] + releases).map { release -> String in
            let tally = byRelease[release] ?? ReleaseTally()
            var parts = ["\(tally.held) held"]
            if tally.defeated > 0 { parts.append("\(tally.defeated) defeated by the release") }
            if tally.failed > 0 { parts.append("\(tally.failed) failed") }
            let bug = IOSRelease(rawValue: release).map { " — \($0.summary)" } ?? ""
            return "  \(release.padding(toLength: 8, withPad: " ", startingAt: 0)) \(tally.days) day(s): \(parts.joined(separator: ", "))\(bug)"
        }
        return (["per iOS release (a defeat failed on the release and held on none):"] + lines).joined(separator: "\n")
    }

    /// "coverage (days that reached it, and how often):" then a line per product and one for the device; a counter no
    /// day reached is absent, so a promise edge missing from the line was never tested.
    var coverageText: String {
        var groups: [String: [String]] = [:]
        for name in coverage.keys.sorted() {
            let (group, counter) = name.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }.pair
            groups[group, default: []].append("\(counter) \(coverage[name]!.days) (×\(coverage[name]!.total))")
        }
        guard !groups.isEmpty else { return "coverage: nothing reached (no window, pass, unlock, threshold or device event in any day)" }
        let order = groups.keys.sorted { ($0 == "device" ? 1 : 0, $0) < ($1 == "device" ? 1 : 0, $1) }
        return (["coverage (days that reached it, and how many times):"] + order.map { "  \($0): \(groups[$0]!.joined(separator: ", "))" }).joined(separator: "\n")
    }

    private func drawProgress() {
        guard showsProgress else {
            // Not on a terminal (a log, CI): a line per finished day.
            return FileHandle.standardError.write(Data("explore: \(played)/\(total) days · \(failures) failure(s) · \(timing)\n".utf8))
        }
        let width = 30, done = total == 0 ? width : min(width, played * width / total)
        let bar = String(repeating: "#", count: done) + String(repeating: "-", count: width - done)
        FileHandle.standardError.write(Data("\r[\(bar)] \(played)/\(total) days · \(events) events · \(failures) failure(s) · \(timing)".utf8))
    }

    private func clearProgress() {
        guard showsProgress else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
