import BusProtocol
import Configuration
import Foundation

/// The totals of an explore: days, events, failures, the distinct shrunk scenarios and the coverage.
public struct ExploreTotals: Equatable, Sendable {
    public private(set) var days = 0
    public private(set) var events = 0
    public private(set) var failures = 0
    /// Each coverage counter: the days that reached it, and its total over them.
    public private(set) var coverage: [String: (days: Int, total: Int)] = [:]
    /// Per iOS release ("none" for none), when days were played on releases: days, held, defeated, failed.
    public private(set) var byRelease: [String: ReleaseTally] = [:]

    public struct ReleaseTally: Equatable, Sendable {
        public var days = 0, held = 0, defeated = 0, failed = 0
    }

    public init() {}

    public mutating func add(_ day: ExploredDay) {
        days += 1
        events += day.events
        if day.isFailure { failures += 1 }
        let release = day.release ?? "none"
        byRelease[release, default: ReleaseTally()].days += 1
        if !day.failed { byRelease[release]!.held += 1 } else if day.defeatedByRelease { byRelease[release]!.defeated += 1 } else { byRelease[release]!.failed += 1 }
        for (name, count) in day.coverage { coverage[name] = ((coverage[name]?.days ?? 0) + 1, (coverage[name]?.total ?? 0) + count) }
    }

    public var json: JSONValue {
        var totals: [String: JSONValue] = ["days": .int(Int64(days)), "events": .int(Int64(events)), "failures": .int(Int64(failures)),
                 "coverage": .object(coverage.mapValues { .object(["days": .int(Int64($0.days)), "total": .int(Int64($0.total))]) })]
        if playedReleases {
            totals["releases"] = .object(byRelease.mapValues { tally in
                .object(["days": .int(Int64(tally.days)), "held": .int(Int64(tally.held)), "defeated": .int(Int64(tally.defeated)),
                         "failures": .int(Int64(tally.failed))])
            })
        }
        return .object(totals)
    }

    /// Whether days were played on an iOS release (else the per-release tallies say nothing more than the totals).
    private var playedReleases: Bool { byRelease.keys.contains { $0 != "none" } }

    /// Per release, none first: what its days gave (a defeat is a day that held on no release), with the release's bug.
    public var releaseLines: [String] {
        guard playedReleases else { return [] }
        let releases = ["none"] + byRelease.keys.filter { $0 != "none" }.sorted()
        return ["per iOS release (a defeat failed on the release and held on none):"] + releases.map { release in
            let tally = byRelease[release] ?? ReleaseTally()
            var parts = ["\(tally.held) held"]
            if tally.defeated > 0 { parts.append("\(tally.defeated) defeated by the release") }
            if tally.failed > 0 { parts.append("\(tally.failed) failed") }
            let bug = IOSRelease(rawValue: release).map { " — \($0.summary)" } ?? ""
            return "  \(release.padding(toLength: 8, withPad: " ", startingAt: 0)) \(tally.days) day(s): \(parts.joined(separator: ", "))\(bug)"
        }
    }

    public static func == (lhs: ExploreTotals, rhs: ExploreTotals) -> Bool { lhs.json == rhs.json }

    /// "coverage (days that reached it, and how often):" then a line per product and one for the device; a counter no
    /// day reached is absent, so a promise edge missing from the line was never tested.
    public var coverageText: String {
        var groups: [String: [String]] = [:]
        for name in coverage.keys.sorted() {
            let parts = name.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            groups[parts[0], default: []].append("\(parts.count > 1 ? parts[1] : "") \(coverage[name]!.days) (×\(coverage[name]!.total))")
        }
        guard !groups.isEmpty else { return "coverage: nothing reached (no window, pass, unlock, threshold or device event in any day)" }
        let order = groups.keys.sorted { ($0 == "device" ? 1 : 0, $0) < ($1 == "device" ? 1 : 0, $1) }
        return (["coverage (days that reached it, and how many times):"] + order.map { "  \($0): \(groups[$0]!.joined(separator: ", "))" }).joined(separator: "\n")
    }
}

/// What explore prints on standard output, line by line: only what the seeds decide, so that one machine's run and the
/// merge of its shards (`ExploreMerge`) — both written by this one type from the same `ExploredDay`s — are the same
/// bytes. A failure whose shrunk scenario an earlier failure already gave is listed as that one, not again.
public struct ExploreReportWriter {
    public let run: ExploreRun
    public let json: Bool
    public private(set) var totals = ExploreTotals()
    /// The failures listed so far, by their shrunk scenario (`ExploredFailure.identity`).
    private var listed: [String: ExploredDay] = [:]
    public private(set) var distinctFailures = 0

    public init(run: ExploreRun, json: Bool) {
        self.run = run
        self.json = json
    }

    /// The report of a whole run (all shards joined): the header, each day and failure, the totals.
    public static func report(of results: ExploreResults, json: Bool) -> String {
        var writer = ExploreReportWriter(run: results.run, json: json)
        var lines = writer.header(shard: results.shard, seeds: results.shard.seeds(firstSeed: results.run.firstSeed, days: results.run.days).count)
        for day in results.days {
            lines += writer.lines(for: day)
            if day.failure != nil { lines += writer.failureLines(for: day) }
        }
        return (lines + writer.totalsLines()).map { $0 + "\n" }.joined()
    }

    /// The first lines: the run (text only), and the shard when it is one (`seeds`: how many are the shard's).
    public func header(shard: ExploreShard, seeds: Int) -> [String] {
        var lines: [String] = []
        if !json {
            let releases = run.releases.isEmpty ? "" : " × iOS none, \(run.releases.joined(separator: ", "))"
            lines.append("explore \(run.configPath) (\(run.product)): \(run.days) day(s) × \(run.profiles.joined(separator: ", "))\(releases) from seed \(run.firstSeed)")
        }
        guard !shard.isWhole else { return lines }
        if json {
            lines.append(JSONValue.object(["shard": .object(["index": .int(Int64(shard.index)), "count": .int(Int64(shard.count)),
                                                             "source": .string(shard.source), "seeds": .int(Int64(seeds))])]).jsonText)
        } else {
            lines.append("shard \(shard.name) (from \(shard.source)): \(seeds) of the \(run.days) seed(s), seed S where (S - \(run.firstSeed)) mod \(shard.count) = \(shard.index - 1)")
        }
        return lines
    }

    /// A played day: its line in `--json`; in text, a failure's account (a day that held says nothing).
    public mutating func lines(for day: ExploredDay) -> [String] {
        totals.add(day)
        if json {
            // Played on releases, the day on none says so too.
            guard !run.releases.isEmpty, day.release == nil, case .object(var line) = day.json else { return [day.json.jsonText] }
            line["ios"] = "none"
            return [JSONValue.object(line).jsonText]
        }
        guard day.failed else { return [] }
        if day.defeatedByRelease {
            return ["defeated by iOS \(day.release ?? "?"): seed \(day.seed) (\(day.profile), \(day.timeZone), from \(day.start)), which held on none: \(day.violations.first ?? day.account.first ?? "")"]
        }
        return ["FAILED seed \(day.seed) (\(day.profile), \(day.timeZone), from \(day.start), \(day.steps) steps):"] + day.account.map { "  \($0)" }
    }

    /// A day's failure once shrunk: where it is written and how to replay it, or the earlier failure it shrank to.
    public mutating func failureLines(for day: ExploredDay) -> [String] {
        guard let failure = day.failure else { return [] }
        let replay = "shieldbus run --config \(run.configPath) --scenario \(failure.file)"
        if let first = listed[failure.identity] {
            if json {
                return [JSONValue.object(["failure": .object([
                    "seed": .int(Int64(bitPattern: day.seed)), "profile": .string(day.profile),
                    "sameAs": .object(["seed": .int(Int64(bitPattern: first.seed)), "profile": .string(first.profile)]),
                ])]).jsonText]
            }
            return ["  shrunk to the same scenario as seed \(first.seed) (\(first.profile)): \(first.failure!.file)"]
        }
        listed[failure.identity] = day
        distinctFailures += 1
        if json {
            return [JSONValue.object(["failure": .object([
                "seed": .int(Int64(bitPattern: day.seed)), "profile": .string(day.profile), "file": .string(failure.file), "replay": .string(replay),
                "steps": .int(Int64(failure.steps)), "originalSteps": .int(Int64(day.steps)), "shrinkRuns": .int(Int64(failure.shrinkRuns)),
                "account": .array(failure.account.map { .string($0) }),
            ])]).jsonText]
        }
        return ["  shrunk from \(day.steps) to \(failure.steps) step(s) in \(failure.shrinkRuns) runs: \(failure.file)", "  replay: \(replay)"]
            + failure.account.map { "    \($0)" }
    }

    /// The last lines: the totals and the coverage.
    public func totalsLines() -> [String] {
        if json {
            guard case .object(var line) = totals.json else { return [] }
            line["distinctFailures"] = .int(Int64(distinctFailures))
            return [JSONValue.object(line).jsonText]
        }
        let distinct = distinctFailures < totals.failures ? ", \(distinctFailures) distinct shrunk scenario(s)" : ""
        return ["explored \(totals.days) day(s), \(totals.events) events: \(totals.failures == 0 ? "no failures" : "\(totals.failures) failure(s)\(distinct)")"]
            + totals.releaseLines + [totals.coverageText]
    }
}
