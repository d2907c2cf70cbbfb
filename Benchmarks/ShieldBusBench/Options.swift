/// The benchmark's command line, parsed by hand (swift-argument-parser is not a dependency of this target).
struct BenchOptions {
    /// Events the publisher sends in each measured run.
    var events = 200_000
    /// Measured runs per load; the median one is reported.
    var runs = 3
    /// Events in the unmeasured warm-up run of each load.
    var warmupEvents = 20_000
    var subscribers = 5
    /// Size of every event body, in bytes (a JSON object).
    var bodyBytes = 200
    /// Print JSON instead of the table.
    var json = false
    /// Time the broker's pieces (receive, decode, sequence, encode, send) alone even when the aim is met.
    var pieces = false
    /// Which loads to run.
    var loads: [LoadKind] = LoadKind.allCases
    /// Which measurements to make.
    var suites: [Suite] = Suite.allCases
    /// Smaller runs everywhere (a minute or two instead of many): the year is cut to `yearDays`, fewer opens,
    /// fewer command runs, shorter throughput runs.
    var quick = false
    /// Days of the generated heavy-user year to play.
    var yearDays = 365
    /// Times `make run`'s day is played (the median is reported).
    var dayRuns = 3
    /// Shielded app opens timed for the shield decision.
    var opens = 20_000
    /// The latency suite's person also watches the steps between the open and `shield.shown`, to say when each came.
    var shieldSteps = false
    /// Runs of each command under hyperfine.
    var commandRuns = 100
    /// Days of each product `shieldbus explore` plays (half under each profile).
    var exploreDays = 1_000
    /// The floor suite's rounds (the median is reported), turns, round trips and commits per round, and process
    /// starts of each kind per round.
    var floorRounds = 9
    var floorOperations = 3_000
    var floorStarts = 20

    /// The quick mode's sizes.
    mutating func makeQuick() {
        quick = true
        events = 50_000
        warmupEvents = 5_000
        yearDays = 30
        dayRuns = 1
        opens = 2_000
        commandRuns = 20
        exploreDays = 40
        floorRounds = 7
        floorOperations = 1_000
        floorStarts = 8
    }
    /// Instead of throughput: a client's round trip with this many idle, heartbeating sessions beside it.
    var idleSessions: Int?
    /// Round trips measured per phase of the idle-sessions bench.
    var roundTrips = 2_000
    /// Instead of throughput: a client's round trip beside each abuse of docs/security.md § 6.
    var abuse = false
    /// Instead of measuring: write the heavy-user year's first `yearDays` days, as the simulation suite plays them,
    /// to this scenario file (for a profile of the same days: docs/benchmarks.md, "Reproducing a profile").
    var writeYear: String?

    /// The limit given to every queue: twice the largest run, so no queue can fill and nothing is dropped for
    /// lack of room (losses are still counted, so a limit too small would show).
    var highWaterMark: Int32 { Int32(clamping: max(100_000, max(events, warmupEvents) * 2)) }

    static let usage = """
    usage: shieldbus-bench [--quick] [--suites LIST] [--year-days N] [--day-runs N] [--opens N] [--command-runs N] [--explore-days N] [--floor-rounds N]
                           [--events N] [--runs N] [--warmup N] [--subscribers N] [--body-bytes N]
                           [--only proxy,broker,broker-sdk] [--pieces] [--shield-steps] [--json] [--help]
           shieldbus-bench --idle-sessions N [--round-trips N] [--json]
           shieldbus-bench --abuse [--round-trips N] [--runs N] [--json]
           shieldbus-bench --write-year FILE [--year-days N]

    ShieldBus's speed, every figure beside its baseline and target (docs/benchmarks.md), in six suites:
      throughput   the broker beside a plain libzmq XSUB/XPUB proxy, same load, same run: 1 publisher,
                   N subscribers (threads), every event counted on arrival and checked for gaps
      simulation   make run's day in events/s; the generated heavy-user year (faithful profile, every reference
                   plugin a process): wall time, cost per simulated day over the year, peak memory of each process
      latency      the shield decision (app opened → shield.shown, real-time clock) beside a raw libzmq round trip
      commands     shieldbus status and tap start-up, with hyperfine
      explore      shieldbus explore on habit-lock, focus-window and speed-bump: N days each, half under each profile
                   (two at a time per core, no shrinking): days per second per profile and the CPU of a day
      floor        the least CPU per journal event the guarantees allow, from unit costs measured here with the
                   project's own parts: a libzmq round trip between two processes, a minimal durable turn (a
                   bus.sqlite-like save, the hand-off, a handled-record transaction, the ack), both where the
                   scheduler puts the processes and held on one core (taskset), a WAL commit in
                   each store's mode (exclusive, shared), a journal line, /bin/true and a plugin's bare start (the
                   monitor beside this program) started and stopped in a plugin's bwrap sandbox (the real plan), an
                   empty Swift program executed and a running one forked;
                   then Σ count per event × unit cost, the year's and make run's day's floors and the broker
                   loop's with today's commits on its thread, each beside its target and whether the target is
                   reachable above it (CPU of every process and thread, median of the rounds)

      --quick           small runs (about 4 minutes in all): a 30-day year, 1 day run, 2000 opens, 20 command
                        runs, 40 explore days per product, 50000-event throughput runs, 7 floor rounds of 1000; the
                        year and 1,000 explore days are then extrapolated from the days played
      --suites LIST     suites to run, comma-separated: throughput, simulation, latency, commands, explore, floor
                        (default all)
      --year-days N     days of the heavy-user year to play (default 365)
      --day-runs N      plays of make run's day; the median is reported (default 3)
      --opens N         shielded app opens timed (default 20000)
      --command-runs N  runs of each command under hyperfine (default 100)
      --explore-days N  days of each product explore plays, half under each profile (default 1000)
      --floor-rounds N  rounds of the floor suite's measurements; the median is reported (default 9, quick 7)

      --events N        events per measured run (default 200000)
      --runs N          measured runs per load; the median is reported (default 3)
      --warmup N        events in the unmeasured warm-up run (default 20000; 0 skips it)
      --subscribers N   subscribers (default 5)
      --body-bytes N    body size in bytes, at least 64 (default 200)
      --only LIST       loads to run, comma-separated: proxy, broker, broker-sdk (default all)
      --pieces          time the broker's pieces alone even when the ratio reaches 0.50 (below it, they always are)
      --shield-steps    the latency suite's person also watches shield.* and activity.* and says when each step first
                        arrived (what it is sent costs CPU beside the decisions it times)
      --json            print the results as JSON

    With --idle-sessions N: one client's round trip (publish, receive its own event) p50/p99, through a broker
    alone and then through one holding N idle sessions that only heartbeat; the aim is a p99 within 2× (issue 10).
      --round-trips N   round trips per phase, one every 2 ms (default 2000)

    With --abuse: the same client's round trip through a quiet broker and beside each abuse of docs/security.md § 6
    (churn, subscription flood, correlation-id claims, slow consumers), a fresh broker each; the aim is every p99
    within 2× of the quiet one. The sequence is played --runs times (default 3), interleaved; each figure is the
    median of its rounds.

    With --write-year FILE: writes the heavy-user year's first --year-days days (faithful, heavy pace), the scenario
    the simulation suite plays, to FILE and exits: `shieldbus run --scenario FILE` plays the same days under
    a profiler (docs/benchmarks.md, "Reproducing a profile").
    """

    /// Parses `arguments` (without the program name); throws a message for the user on a bad argument.
    static func parse(_ arguments: [String]) throws -> BenchOptions {
        var options = BenchOptions()
        var rest = arguments[...]
        func value(for flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
            return next
        }
        func count(for flag: String, minimum: Int) throws -> Int {
            let text = try value(for: flag)
            guard let number = Int(text.replacingOccurrences(of: "_", with: "")), number >= minimum else {
                throw UsageError("\(flag) wants a whole number of at least \(minimum), got '\(text)'")
            }
            return number
        }
        /// A comma-separated list of names of `Choice`'s cases: each once, in the usual order.
        func choices<Choice: RawRepresentable & CaseIterable & Equatable>(_ type: Choice.Type, for flag: String, named what: String) throws -> [Choice]
            where Choice.RawValue == String {
            let chosen = try value(for: flag).split(separator: ",").map { name in
                guard let choice = Choice(rawValue: String(name)) else {
                    throw UsageError("unknown \(what) '\(name)'; \(what)s: \(Choice.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return choice
            }
            return Choice.allCases.filter(chosen.contains)
        }
        if arguments.contains("--quick") { options.makeQuick() }  // first, so that explicit sizes win
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": continue
            case "--suites": options.suites = try choices(Suite.self, for: argument, named: "suite")
            case "--year-days": options.yearDays = try count(for: argument, minimum: 1)
            case "--day-runs": options.dayRuns = try count(for: argument, minimum: 1)
            case "--opens": options.opens = try count(for: argument, minimum: 1)
            case "--command-runs": options.commandRuns = try count(for: argument, minimum: 2)
            case "--explore-days": options.exploreDays = try count(for: argument, minimum: 2)
            case "--floor-rounds": options.floorRounds = try count(for: argument, minimum: 1)
            case "--events": options.events = try count(for: argument, minimum: 1)
            case "--runs": options.runs = try count(for: argument, minimum: 1)
            case "--warmup": options.warmupEvents = try count(for: argument, minimum: 0)
            case "--subscribers": options.subscribers = try count(for: argument, minimum: 1)
            case "--body-bytes": options.bodyBytes = try count(for: argument, minimum: BodyMaker.minimumBytes)
            case "--only": options.loads = try choices(LoadKind.self, for: argument, named: "load")
            case "--idle-sessions": options.idleSessions = try count(for: argument, minimum: 1)
            case "--round-trips": options.roundTrips = try count(for: argument, minimum: 10)
            case "--abuse": options.abuse = true
            case "--write-year": options.writeYear = try value(for: argument)
            case "--pieces": options.pieces = true
            case "--shield-steps": options.shieldSteps = true
            case "--json": options.json = true
            case "--help", "-h": throw UsageError(nil)
            default: throw UsageError("unknown argument '\(argument)'")
            }
        }
        return options
    }
}

/// A bad command line (or `--help`, which has no message).
struct UsageError: Error {
    let message: String?
    init(_ message: String?) { self.message = message }
}

/// The benchmark's measurements.
enum Suite: String, CaseIterable {
    case throughput, simulation, latency, commands, explore, floor
}

/// The loads the benchmark can put through.
enum LoadKind: String, CaseIterable {
    /// libzmq's own XSUB/XPUB proxy: the baseline.
    case proxy
    /// The ShieldBus broker, with subscribers that read frames as lean as the proxy's subscribers do.
    case broker
    /// The ShieldBus broker, with subscribers using the SDK's `BusConnection` (what a Swift plugin pays).
    case brokerSDK = "broker-sdk"

    var title: String {
        switch self {
        case .proxy: return "plain libzmq XSUB/XPUB proxy"
        case .broker: return "ShieldBus broker (lean subscribers)"
        case .brokerSDK: return "ShieldBus broker (BusConnection subscribers)"
        }
    }
}
