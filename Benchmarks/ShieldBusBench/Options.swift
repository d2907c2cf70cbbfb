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
    /// Instead of throughput: a client's round trip with this many idle, heartbeating sessions beside it.
    var idleSessions: Int?
    /// Round trips measured per phase of the idle-sessions bench.
    var roundTrips = 2_000

    /// The limit given to every queue: twice the largest run, so no queue can fill and nothing is dropped for
    /// lack of room (losses are still counted, so a limit too small would show).
    var highWaterMark: Int32 { Int32(clamping: max(100_000, max(events, warmupEvents) * 2)) }

    static let usage = """
    usage: shieldbus-bench [--events N] [--runs N] [--warmup N] [--subscribers N] [--body-bytes N]
                           [--only proxy,broker,broker-sdk] [--pieces] [--json] [--help]
           shieldbus-bench --idle-sessions N [--round-trips N] [--json]

    Throughput through the ShieldBus broker beside a plain libzmq XSUB/XPUB proxy, same load, same run:
    1 publisher, N subscribers (threads), every event counted on arrival and checked for gaps.

      --events N        events per measured run (default 200000)
      --runs N          measured runs per load; the median is reported (default 3)
      --warmup N        events in the unmeasured warm-up run (default 20000; 0 skips it)
      --subscribers N   subscribers (default 5)
      --body-bytes N    body size in bytes, at least 64 (default 200)
      --only LIST       loads to run, comma-separated: proxy, broker, broker-sdk (default all)
      --pieces          time the broker's pieces alone even when the ratio reaches 0.50 (below it, they always are)
      --json            print the results as JSON

    With --idle-sessions N: one client's round trip (publish, receive its own event) p50/p99, through a broker
    alone and then through one holding N idle sessions that only heartbeat; the aim is a p99 within 2× (issue 10).
      --round-trips N   round trips per phase, one every 2 ms (default 2000)
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
        while let argument = rest.popFirst() {
            switch argument {
            case "--events": options.events = try count(for: argument, minimum: 1)
            case "--runs": options.runs = try count(for: argument, minimum: 1)
            case "--warmup": options.warmupEvents = try count(for: argument, minimum: 0)
            case "--subscribers": options.subscribers = try count(for: argument, minimum: 1)
            case "--body-bytes": options.bodyBytes = try count(for: argument, minimum: BodyMaker.minimumBytes)
            case "--only":
                let names = try value(for: argument).split(separator: ",").map(String.init)
                let chosen = try names.map { name in
                    guard let load = LoadKind(rawValue: name) else {
                        throw UsageError("unknown load '\(name)'; loads: \(LoadKind.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    return load
                }
                options.loads = LoadKind.allCases.filter(chosen.contains)  // each once, in the usual order
            case "--idle-sessions": options.idleSessions = try count(for: argument, minimum: 1)
            case "--round-trips": options.roundTrips = try count(for: argument, minimum: 10)
            case "--pieces": options.pieces = true
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
