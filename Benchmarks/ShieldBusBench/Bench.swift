import Foundation

/// Runs every chosen load: a warm-up each, then the measured runs interleaved (proxy, broker, …, proxy, broker, …)
/// so that whatever else the machine does drifts over all loads alike.
final class Bench {
    let options: BenchOptions
    let directory: String
    private let loads: [Load]
    let brokerLog: StandardErrorCapture

    init(_ options: BenchOptions) throws {
        self.options = options
        // Short and private: an ipc:// socket path must fit in 107 bytes.
        var template = Array("/tmp/sbbench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchFailure("cannot create a temporary folder in /tmp") }
        directory = String(cString: made)
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

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// The summaries, in the order the loads were chosen. `progress` gets one line per run.
    func run(progress: (String) -> Void) throws -> [LoadSummary] {
        do {
            return try runAll(progress: progress)
        } catch {
            // The temporary folder goes with this object; keep what the broker logged in the message.
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
