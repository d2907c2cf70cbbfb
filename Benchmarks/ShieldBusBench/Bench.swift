import Foundation

/// Runs every chosen load: a warm-up each, then the measured runs interleaved (proxy, broker, …, proxy, broker, …)
/// so that whatever else the machine does drifts over all loads alike.
final class Bench {
    let options: BenchOptions
    let directory: String
    private let scratch: ScratchDirectory
    private let loads: [Load]
    let brokerLog: StandardErrorCapture

    init(_ options: BenchOptions) throws {
        self.options = options
        scratch = try ScratchDirectory(prefix: "sbbench")
        directory = scratch.path
        let brokerLog = StandardErrorCapture(path: directory + "/broker.log")
        self.brokerLog = brokerLog
        let shape = LoadShape(subscribers: options.subscribers, bodies: BodyMaker(bytes: options.bodyBytes), directory: directory,
                              highWaterMark: options.highWaterMark)
        loads = options.loads.map { kind in
            switch kind {
            case .proxy: return ProxyLoad(shape: shape)
            case .broker, .brokerSDK: return BrokerLoad(shape: shape, kind: kind, log: brokerLog)
            }
        }
    }

    /// The summaries, in the order the loads were chosen. `progress` gets one line per run.
    func run(progress: (String) -> Void) throws -> [LoadSummary] {
        do {
            return try runAll(progress: progress)
        } catch {
            // The temporary folder goes with this object (its scratch directory); keep what the broker logged in the message.
            let log = (try? String(contentsOfFile: brokerLog.path, encoding: .utf8)) ?? ""
            let tail = log.split(separator: "\n").suffix(10).joined(separator: "\n")
            throw BenchFailure(tail.isEmpty ? "\(error)" : "\(error)\nthe broker's last log lines:\n\(tail)")
        }
    }

    private func runAll(progress: (String) -> Void) throws -> [LoadSummary] {
        var index = 0
        if options.warmupEvents > 0 {
            for load in loads {
                index += 1
                let result = try load.run(events: options.warmupEvents, index: index)
                progress("warm-up   \(load.kind.rawValue.padding(12)) \(Format.rate(result.eventsPerSecond)) events/s")
            }
        }
        var results: [LoadKind: [RunResult]] = [:]
        for round in 1...options.runs {
            for load in loads {
                index += 1
                let result = try load.run(events: options.events, index: index)
                results[load.kind, default: []].append(result)
                let lost = result.isComplete ? "" : "  INCOMPLETE: \(Format.losses(result))"
                progress("run \(round)/\(options.runs)   \(load.kind.rawValue.padding(12)) \(Format.rate(result.eventsPerSecond)) events/s\(lost)")
            }
        }
        return loads.map { LoadSummary(kind: $0.kind, runs: results[$0.kind] ?? []) }
    }
}
