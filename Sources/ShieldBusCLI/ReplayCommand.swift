import ArgumentParser
import BusClient
import BusProtocol
import BusTools
import DeviceAPI
import Foundation

extension ShieldBus {
    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "replay",
            abstract: "Play a recorded journal onto a running broker.",
            discussion: """
            Re-publishes, in order, each recorded event that a plugin or tool published (the broker gives them \
            new sequence numbers). What the broker and the device OS published themselves — the broker-only \
            namespaces, and events whose source is broker or scenario — is skipped: the running broker makes \
            its own. Replies are skipped too (they answered requests of the recorded run), and replayed requests \
            get fresh correlation ids. With --pace, waits the recorded bus-time gaps between events (at most 60 s).
            """
        )

        @OptionGroup var bus: BusOptions

        @Argument(help: "The journal file (JSON Lines, as written by `run --journal` or `tap --record`).")
        var file: String

        @Flag(name: .long, help: "Keep the recorded time between events (real time).")
        var pace = false

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
            let envelopes: [Envelope]
            do {
                envelopes = try JournalLines.envelopes(in: Array(data))
            } catch let bad as JournalLines.BadLine {
                throw ValidationError("\(file):\(bad.line): not a journal line: \(bad.reason)")
            }
            let replayable = envelopes.filter { envelope in
                !BusTable.screenTime.isSystemOnly(envelope.topic) && !envelope.isFromSystem
                    && !envelope.topic.hasSuffix(Topic.replySuffix)
            }
            let name = BusTool.name("replay")
            let topics = Array(Set(replayable.map(\.topic))).sorted()
            let connection = try BusTool.connect(runtimeDir: bus.runtimeDir, name: name, role: .tool, subscriptions: topics)
            defer { connection.close() }
            var previous: BusTime?
            for (number, envelope) in replayable.enumerated() {
                if pace, let previous, envelope.time > previous { usleep(useconds_t(min(envelope.time - previous, 60_000)) * 1000) }
                previous = envelope.time
                // A request keeps its topic and body but gets a fresh id: the recorded one may still be in use.
                let corr = envelope.topic.hasSuffix(Topic.requestSuffix) ? "\(name)-\(number + 1)" : nil
                try connection.publish(Publish(topic: envelope.topic, body: envelope.body, corr: corr, deadline: corr == nil ? nil : envelope.deadline))
            }
            // Wait until the broker has sequenced all of them, so the count we print is true.
            var confirmed = 0
            let deadline = monotonicMilliseconds() + 10_000
            while confirmed < replayable.count && monotonicMilliseconds() < deadline {
                switch try connection.receive(timeoutMilliseconds: 500) {
                case .event(let envelope, _)? where envelope.source == name: confirmed += 1
                case .error(let report)?: printError("error: \(report.message)")
                default: continue
                }
            }
            print("replayed \(confirmed) of \(replayable.count) events from \(file) (\(envelopes.count - replayable.count) broker, device and reply events skipped)")
            if confirmed < replayable.count { throw ExitCode(1) }
        }
    }
}
