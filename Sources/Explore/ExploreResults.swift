import BusProtocol
import Foundation

/// What makes two explores parts of one: shards join only when these are equal.
public struct ExploreRun: Equatable, Sendable {
    /// The `shieldbus` release that played the days.
    public var version: String
    /// The configuration as given (it is in the report's header and replay lines) and its text.
    public var configPath: String
    public var configText: String
    /// The products judged, `+`-joined.
    public var product: String
    public var profiles: [String]
    public var firstSeed: UInt64
    /// Seeds in the whole run (`--days`).
    public var days: Int
    public var shrinkRuns: Int
    /// Where failures are written (their paths are in the report).
    public var failuresDirectory: String
    /// The iOS releases each day is also played on (`--ios`); empty: none.
    public var releases: [String]

    public init(version: String, configPath: String, configText: String, product: String, profiles: [String], firstSeed: UInt64, days: Int,
                shrinkRuns: Int, failuresDirectory: String, releases: [String] = []) {
        self.releases = releases
        self.version = version
        self.configPath = configPath
        self.configText = configText
        self.product = product
        self.profiles = profiles
        self.firstSeed = firstSeed
        self.days = days
        self.shrinkRuns = shrinkRuns
        self.failuresDirectory = failuresDirectory
    }

    /// The fields that differ between two runs, in words (empty when they are the same run).
    public func differences(from other: ExploreRun) -> [String] {
        var said: [String] = []
        func compare<T: Equatable>(_ name: String, _ mine: T, _ theirs: T, _ text: (T) -> String = { "\($0)" }) {
            if mine != theirs { said.append("\(name) \(text(mine)) ≠ \(text(theirs))") }
        }
        compare("shieldbus version", version, other.version)
        compare("configuration", configPath, other.configPath)
        if configPath == other.configPath && configText != other.configText { said.append("configuration \(configPath): its text differs") }
        compare("product", product, other.product)
        compare("profiles", profiles, other.profiles) { $0.joined(separator: ", ") }
        compare("iOS releases", releases, other.releases) { $0.isEmpty ? "none" : $0.joined(separator: ", ") }
        compare("first seed", firstSeed, other.firstSeed)
        compare("days", days, other.days)
        compare("shrink runs", shrinkRuns, other.shrinkRuns)
        compare("failures dir", failuresDirectory, other.failuresDirectory)
        return said
    }
}

/// A played day as the report and a results file keep it: what its seed decided, nothing of the wall clock.
public struct ExploredDay: Equatable, Sendable {
    public var seed: UInt64
    public var profile: String
    public var timeZone: String
    public var start: String
    public var steps: Int
    public var events: Int
    /// Each violation, as the checker says it.
    public var violations: [String]
    /// The checker's account of a failure (`Explorer.account(of:)`), a line each.
    public var account: [String]
    public var runProblem: String?
    public var coverage: [String: Int]
    /// The failure shrunk, once it is.
    public var failure: ExploredFailure?
    /// The iOS release the day was played on (nil: none), and whether it failed there only (the release's defeat).
    public var release: String?
    public var defeatedByRelease = false

    public var failed: Bool { !violations.isEmpty || runProblem != nil }
    /// A failure of the product's own: not a release's defeat.
    public var isFailure: Bool { failed && !defeatedByRelease }

    public init(seed: UInt64, profile: String, timeZone: String, start: String, steps: Int, events: Int, violations: [String], account: [String],
                runProblem: String?, coverage: [String: Int], failure: ExploredFailure? = nil) {
        self.seed = seed
        self.profile = profile
        self.timeZone = timeZone
        self.start = start
        self.steps = steps
        self.events = events
        self.violations = violations
        self.account = account
        self.runProblem = runProblem
        self.coverage = coverage
        self.failure = failure
    }

    public init(_ outcome: DayOutcome) {
        self.init(seed: outcome.day.seed, profile: outcome.day.profile, timeZone: outcome.day.timeZone, start: outcome.day.start,
                  steps: outcome.day.steps.count, events: outcome.events, violations: outcome.violations.map(\.description),
                  account: outcome.failed ? Explorer.account(of: outcome).split(separator: "\n").map(String.init) : [],
                  runProblem: outcome.runProblem, coverage: outcome.coverage)
        release = outcome.day.release
        defeatedByRelease = outcome.defeatedByRelease
        // A release's defeat is said in a line: each violation with its kind first.
        if defeatedByRelease { violations = outcome.violations.map { "\($0.kind.rawValue): \($0)" } }
    }

    /// The day's line in `--json`, and its entry in a results file without `account` and `failure`.
    public var json: JSONValue {
        var line: [String: JSONValue] = [
            "seed": .int(Int64(bitPattern: seed)), "profile": .string(profile), "timeZone": .string(timeZone), "start": .string(start),
            "steps": .int(Int64(steps)), "events": .int(Int64(events)),
            "verdict": .string(defeatedByRelease ? "defeated-by-release" : failed ? "broken" : "held"),
            "violations": .array(violations.map { .string($0) }), "coverage": .object(coverage.mapValues { .int(Int64($0)) }),
        ]
        if let runProblem { line["runProblem"] = .string(runProblem) }
        if let release { line["ios"] = .string(release) }
        return .object(line)
    }
}

/// A failure shrunk and written out.
public struct ExploredFailure: Equatable, Sendable {
    /// The scenario file written, as the run named it.
    public var file: String
    public var steps: Int
    public var shrinkRuns: Int
    /// The checker's account of the shrunk day, a line each.
    public var account: [String]
    /// The shrunk day's scenario, as written to `file`.
    public var scenario: String

    public init(file: String, steps: Int, shrinkRuns: Int, account: [String], scenario: String) {
        self.file = file
        self.steps = steps
        self.shrinkRuns = shrinkRuns
        self.account = account
        self.scenario = scenario
    }

    public init(_ failure: ShrunkFailure) {
        self.init(file: failure.path, steps: failure.shrunk.day.steps.count, shrinkRuns: failure.shrunk.runs,
                  account: Explorer.account(of: failure.shrunk.outcome).split(separator: "\n").map(String.init), scenario: failure.scenario)
    }

    /// What makes two failures the same: the shrunk scenario, without its name and the comments (which name the seed
    /// the failure was found from, and the account).
    public var identity: String {
        scenario.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("#") && !$0.hasPrefix("name: ") }.joined(separator: "\n")
    }
}

/// A shard's results: the run, which shard, and its days in the order played (`docs/explore.md`, "Results files").
public struct ExploreResults: Equatable, Sendable {
    public static let format = "shieldbus-explore-results"
    public static let formatVersion: Int64 = 1

    public var run: ExploreRun
    public var shard: ExploreShard
    public var days: [ExploredDay]

    public init(run: ExploreRun, shard: ExploreShard, days: [ExploredDay]) {
        self.run = run
        self.shard = shard
        self.days = days
    }

    /// The days this shard has to play: its seeds, each under each profile, on no release then each release, in order.
    public var plannedDays: [(seed: UInt64, profile: String, release: String?)] {
        let releases: [String?] = run.releases.isEmpty ? [nil] : [nil] + run.releases
        return shard.seeds(firstSeed: run.firstSeed, days: run.days).flatMap { seed in
            run.profiles.flatMap { profile in releases.map { (seed, profile, $0) } }
        }
    }

    /// Whether every planned day was played (a time budget stops a run early).
    public var isComplete: Bool { days.count == plannedDays.count }

    public var json: JSONValue {
        var totals = ExploreTotals()
        for day in days { totals.add(day) }
        return .object([
            "format": .string(Self.format), "formatVersion": .int(Self.formatVersion), "shieldbusVersion": .string(run.version),
            "config": .object(["path": .string(run.configPath), "text": .string(run.configText), "product": .string(run.product)]),
            "profiles": .array(run.profiles.map { .string($0) }), "releases": .array(run.releases.map { .string($0) }),
            "firstSeed": .int(Int64(bitPattern: run.firstSeed)),
            "seedCount": .int(Int64(run.days)), "shrinkRuns": .int(Int64(run.shrinkRuns)), "failuresDir": .string(run.failuresDirectory),
            "shard": .object(["index": .int(Int64(shard.index)), "count": .int(Int64(shard.count)), "source": .string(shard.source)]),
            "complete": .bool(isComplete),
            "days": .array(days.map(Self.entry)),
            "totals": totals.json,
        ])
    }

    private static func entry(_ day: ExploredDay) -> JSONValue {
        guard case .object(var entry) = day.json else { return day.json }
        entry["account"] = .array(day.account.map { .string($0) })
        if let failure = day.failure {
            entry["failure"] = .object([
                "file": .string(failure.file), "steps": .int(Int64(failure.steps)), "shrinkRuns": .int(Int64(failure.shrinkRuns)),
                "account": .array(failure.account.map { .string($0) }), "scenario": .string(failure.scenario),
            ])
        }
        return .object(entry)
    }

    /// Reads a results file's JSON; `name` (the file) is in every error.
    public init(json: JSONValue, name: String) throws {
        var reader = Reader(name: name)
        guard json["format"]?.stringValue == Self.format else { throw reader.error("not an explore results file (no \"format\": \"\(Self.format)\")") }
        let version = try reader.int(json, "formatVersion")
        guard version == Self.formatVersion else {
            throw reader.error("results format version \(version); this shieldbus reads version \(Self.formatVersion)")
        }
        let config = try reader.value(json, "config")
        run = ExploreRun(version: try reader.string(json, "shieldbusVersion"), configPath: try reader.string(config, "path"),
                         configText: try reader.string(config, "text"), product: try reader.string(config, "product"),
                         profiles: try reader.strings(json, "profiles"), firstSeed: UInt64(bitPattern: try reader.int(json, "firstSeed")),
                         days: Int(try reader.int(json, "seedCount")), shrinkRuns: Int(try reader.int(json, "shrinkRuns")),
                         failuresDirectory: try reader.string(json, "failuresDir"),
                         releases: json["releases"] == nil ? [] : try reader.strings(json, "releases"))
        let shardJSON = try reader.value(json, "shard")
        do {
            shard = try ExploreShard(index: Int(try reader.int(shardJSON, "index")), count: Int(try reader.int(shardJSON, "count")),
                                     source: try reader.string(shardJSON, "source"))
        } catch let error as ExploreShardError {
            throw reader.error(error.description)
        }
        guard let entries = json["days"]?.arrayValue else { throw reader.error("no \"days\" array") }
        days = try entries.enumerated().map { index, entry in
            reader.context = "day \(index + 1)"
            let failure = try entry["failure"].map { failure in
                ExploredFailure(file: try reader.string(failure, "file"), steps: Int(try reader.int(failure, "steps")),
                                shrinkRuns: Int(try reader.int(failure, "shrinkRuns")), account: try reader.strings(failure, "account"),
                                scenario: try reader.string(failure, "scenario"))
            }
            guard let coverage = entry["coverage"]?.objectValue else { throw reader.error("no \"coverage\" object") }
            var day = ExploredDay(seed: UInt64(bitPattern: try reader.int(entry, "seed")), profile: try reader.string(entry, "profile"),
                               timeZone: try reader.string(entry, "timeZone"), start: try reader.string(entry, "start"),
                               steps: Int(try reader.int(entry, "steps")), events: Int(try reader.int(entry, "events")),
                               violations: try reader.strings(entry, "violations"), account: try reader.strings(entry, "account"),
                               runProblem: entry["runProblem"]?.stringValue,
                               coverage: try coverage.mapValues { value in
                                   guard let count = value.intValue else { throw reader.error("a coverage count that is not a number") }
                                   return Int(count)
                               },
                               failure: failure)
            day.release = entry["ios"]?.stringValue.flatMap { $0 == "none" ? nil : $0 }
            day.defeatedByRelease = entry["verdict"]?.stringValue == "defeated-by-release"
            return day
        }
        reader.context = nil
        // The days must be the shard's own, in the order played: a file edited by hand or cut short is refused here.
        for (index, (day, planned)) in zip(days, plannedDays).enumerated()
            where day.seed != planned.seed || day.profile != planned.profile || day.release != planned.release {
            throw reader.error("day \(index + 1) is seed \(day.seed) (\(day.profile)\(day.release.map { ", iOS \($0)" } ?? "")), but shard \(shard.name)'s day \(index + 1) is seed \(planned.seed) (\(planned.profile)\(planned.release.map { ", iOS \($0)" } ?? ""))")
        }
        guard days.count <= plannedDays.count else {
            throw reader.error("\(days.count) days, but shard \(shard.name) of \(run.days) seed(s) × \(run.profiles.count) profile(s) has \(plannedDays.count)")
        }
    }

    /// Reads a results file.
    public init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw ExploreResultsError("\(path): cannot read it") }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(data))
        } catch {
            throw ExploreResultsError("\(path): \(error)")
        }
        try self.init(json: json, name: path)
    }

    /// Writes the results file (whole or not at all).
    public func write(to path: String) throws {
        try Data((json.jsonText + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}

public struct ExploreResultsError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Reads fields of a results file, each error naming the file and where in it.
private struct Reader {
    let name: String
    var context: String?

    init(name: String) { self.name = name }

    func error(_ what: String) -> ExploreResultsError {
        ExploreResultsError("\(name): \(context.map { "\($0): " } ?? "")\(what)")
    }

    func value(_ object: JSONValue, _ key: String) throws -> JSONValue {
        guard let value = object[key] else { throw error("no \"\(key)\"") }
        return value
    }

    func string(_ object: JSONValue, _ key: String) throws -> String {
        guard let value = try value(object, key).stringValue else { throw error("\"\(key)\" is not a string") }
        return value
    }

    func int(_ object: JSONValue, _ key: String) throws -> Int64 {
        guard let value = try value(object, key).intValue else { throw error("\"\(key)\" is not a whole number") }
        return value
    }

    func strings(_ object: JSONValue, _ key: String) throws -> [String] {
        guard let values = try value(object, key).arrayValue?.map(\.stringValue), !values.contains(nil) else {
            throw error("\"\(key)\" is not an array of strings")
        }
        return values.map { $0! }
    }
}
