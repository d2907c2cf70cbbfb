import ArgumentParser
import BusClient
import BusProtocol
import BusTools
import Foundation

extension ShieldBus {
    struct Tap: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tap",
            abstract: "Watch the bus live: one line per event, in sequence order.",
            discussion: """
            Each line shows bus time, sequence number, topic, source and a compact body. Give topic \
            prefixes (e.g. `shield.` `deviceactivity.`) to see only those. A tap joins and leaves at any \
            time without disturbing anyone; if it cannot keep up it says how many events it missed.
            """
        )

        @OptionGroup var bus: BusOptions

        @Flag(name: .long, help: "Print JSON Lines (one envelope per line) instead of text.")
        var json = false

        @Option(name: .long, help: ArgumentHelp("Also write every event to this journal file.", valueName: "file"))
        var record: String?

        @Option(name: .long, help: ArgumentHelp("Stop after this many events.", valueName: "n"))
        var count: Int?

        @Argument(help: "Topic prefixes to show (default: everything).")
        var prefixes: [String] = []

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let connection = try BusTool.connect(runtimeDir: bus.runtimeDir, name: BusTool.name("tap"), role: .tap,
                                                 subscriptions: prefixes.isEmpty ? [""] : prefixes)
            defer { connection.close() }
            var recorder: FileHandle?
            if let record {
                do { recorder = try JournalFile.openForWriting(record, appending: false).handle } catch {
                    throw ValidationError("cannot write the journal file \(record)")
                }
            }
            defer { try? recorder?.close() }
            connection.onGap = { missed in
                printError("⚠ tap missed \(missed.count) event(s) (deliveries \(missed.lowerBound)–\(missed.upperBound)): it could not keep up")
            }
            var formatter = EventFormatter(settings: connection.welcome?.settings)
            var seen = 0
            let output = FileHandle.standardOutput
            while count.map({ seen < $0 }) ?? true {
                guard let message = try connection.receive(timeoutMilliseconds: 1000) else { continue }
                switch message {
                case .event(let envelope, _):
                    seen += 1
                    let encoded = WireCodec.encodeEnvelope(envelope)
                    if let recorder { recorder.write(Data(encoded + [0x0A])) }
                    // Nothing from the bus reaches the terminal raw: a body or a corr may hold escape sequences.
                    if json {
                        output.write(Data((TerminalText.escapedJSON(String(decoding: encoded, as: UTF8.self)) + "\n").utf8))
                    } else {
                        output.write(Data((formatter.lines(for: envelope).map(TerminalText.escaped).joined(separator: "\n") + "\n").utf8))
                    }
                case .error(let report):
                    printError("error from broker: \(TerminalText.escaped(report.message))")
                case .bye(let reason):
                    printError("the broker left: \(reason)")
                    return
                default:
                    break
                }
            }
        }
    }
}
