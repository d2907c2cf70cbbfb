import BusProtocol
import Foundation

/// The totals of an explore: days, events, failures, the distinct shrunk scenarios and the coverage.
public struct ExploreTotals: Equatable, Sendable {
    public private(set) var days = 0
    public private(set) var events = 0
    public private(set) var failures = 0
    /// Each coverage counter: the days that reached it, and its total over them.
    public private(set) var coverage: [String: (days: Int, total: Int)] = [:]

    public init() {}

    public mutating func add(_ day: ExploredDay) {
        days += 1
        events += day.events
        if day.failed { failures += 1 }
        for (name, count) in day.coverage { coverage[name] = ((coverage[name]?.days ?? 0) + 1, (coverage[name]?.total ?? 0) + count) }
    }

    public var json: JSONValue {
        .object(["days": .int(Int64(days)), "events": .int(Int64(events)), "failures": .int(Int64(failures)),
                 "coverage": .object(coverage.mapValues { .object(["days": .int(Int64($0.days)), "total": .int(Int64($0.total))]) })])
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
            lines.append("explore \(run.configPath) (\(run.product)): \(run.days) day(s) × \(run.profiles.joined(separator: ", ")) from seed \(run.firstSeed)")
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
        if json { return [day.json.jsonText] }
        guard day.failed else { return [] }
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
        return ["explored \(totals.days) day(s), \(totals.events) events: \(totals.failures == 0 ? "no failures" : "\(totals.failures) failure(s)\(distinct)")",
                totals.coverageText]
    }
}
