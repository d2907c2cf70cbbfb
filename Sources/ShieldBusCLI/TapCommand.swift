import ArgumentParser
import BusClient
import BusProtocol
import BusTools
import Configuration
import DeviceAPI
import Foundation

extension ShieldBus {
    struct Tap: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tap",
            abstract: "Watch the bus live: one line per event, in sequence order.",
            discussion: """
            Each line shows bus time, sequence number, topic, source and a compact body (the whole body when the \
            output is not a terminal). Give topic patterns to see only those: a prefix (`shield.`) or a glob \
            (`deviceactivity.*.reply`); hide some with --exclude and pick senders with --source. A tap joins and \
            leaves at any time without disturbing anyone; if it cannot keep up it says how many events it missed.

            Examples:
              shieldbus tap --exclude state.changed
              shieldbus tap 'deviceactivity.*' --source broker
              shieldbus tap --format '{time} {topic} {body}' | grep Instagram
              shieldbus tap --wait        # before the broker starts; follows it across restarts
              shieldbus tap --from 120    # the broker's journal from event #120, then live (also --from -10m, --from 2026-11-24T07:00)
              shieldbus tap --rates --exclude clock.   # events per second, per topic, every second (--json for JSON Lines)
            """
        )

        @OptionGroup var bus: BusOptions

        @Flag(name: .long, help: "Print JSON Lines (one envelope per line) instead of text.")
        var json = false

        @Option(name: .long, help: ArgumentHelp("Also write every event shown to this journal file.", valueName: "file"))
        var record: String?

        @Option(name: .long, help: ArgumentHelp("Stop after this many events.", valueName: "n"))
        var count: Int?

        @Option(name: .long, help: ArgumentHelp("Hide topics matching this prefix or glob; repeat for more.", valueName: "pattern"))
        var exclude: [String] = []

        @Option(name: .customLong("source"), help: ArgumentHelp("Show only events from this sender (a plugin's name, broker, scenario); repeat for more.", valueName: "name"))
        var sources: [String] = []

        @Option(name: .long, help: ArgumentHelp("A line per event from this template: {day} {time} {seq} {topic} {source} {corr} {body}.", valueName: "template"))
        var format: String?

        @Flag(name: .long, help: "Wait for a broker to start, and when it leaves, for the next one (saying which events passed meanwhile).")
        var wait = false

        @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("First the events the broker journaled from this one on: a seq, a span back from bus time now (-10m, -2h) or a local date-time (2026-11-24T07:00); then live.", valueName: "seq|time"))
        var from: String?

        @Flag(name: .long, help: "Instead of the events, every second of wall time the events per second of each topic shown, busiest first, stamped in bus time on the device's clock (--json: one object a second; --count: how many seconds).")
        var rates = false

        @Flag(name: .long, help: "No colors (also when NO_COLOR is set or the output is not a terminal).")
        var noColor = false

        @Argument(help: "Topic prefixes or globs to show (default: everything).",
                  completion: .custom { _ in BusTable.screenTime.namespaces.map { $0 + "." } })
        var patterns: [String] = []

        func validate() throws {
            if let format, !EventFormatter.templateFields.contains(where: { format.contains("{\($0)}") }) {
                throw ValidationError("--format names no field; use some of {\(EventFormatter.templateFields.joined(separator: "} {"))}")
            }
            if json, format != nil { throw ValidationError("--json and --format both say how to print; choose one") }
            if let count, count <= 0 { throw ValidationError("--count must be positive") }
            if rates, format != nil || from != nil {
                throw ValidationError("--rates prints events per second, not events: it takes no \(format != nil ? "--format" : "--from")")
            }
            if let from, HistoryStart(from) == nil {
                throw ValidationError("--from is a seq (120), a span back from now (-10m, -2h) or a local date-time (2026-11-24T07:00), not '\(from)'")
            }
        }

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let filter = TapFilter(include: patterns, exclude: exclude, sources: Set(sources))
            var recorder: FileHandle?
            if let record {
                do { recorder = try JournalFile.openForWriting(record, appending: false).handle } catch {
                    throw ValidationError("cannot write the journal file \(record)")
                }
            }
            defer { try? recorder?.close() }
            let onTerminal = isatty(STDOUT_FILENO) == 1
            let color = onTerminal && !noColor && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
            var printer = TapPrinter(json: json, template: format, color: color, wholeBodies: !onTerminal, recorder: recorder)
            if rates { return try showRates(filter: filter, recorder: recorder) }
            // The last sequence number the bus had issued as far as this tap knows (from a welcome or an event), and
            // the last event received: a reconnection says what went by, or that a new bus began.
            var lastKnownSeq: UInt64?
            var lastSeen: Envelope?
            // Where the broker run followed began numbering (a restarted one numbers on past what the last set aside).
            var runFirstSeq: UInt64?
            var shown = 0
            /// A welcome: the first sets where the tap counts from; a later one says what went by, or that a new bus began.
            func welcomed(_ welcome: Welcome) {
                printer.adopt(settings: welcome.settings)
                defer { runFirstSeq = welcome.firstSeq }
                guard let known = lastKnownSeq else {
                    lastKnownSeq = welcome.seq
                    return
                }
                let said = TapReconnection(lastSeen: lastSeen, lastKnownSeq: known, runFirstSeq: runFirstSeq,
                                           seesEveryEvent: TapFilter(include: patterns).subscriptions == [""])
                    .notice(for: welcome, journalPath: RuntimeDirectory.resolve(bus.runtimeDir).journalPath())
                if let text = said.text { printError(text) }
                lastKnownSeq = said.lastKnownSeq
            }
            repeat {
                // Also a run's `bus.stopping`, to know the tap saw it to its end (the numbers after it were never used).
                let connection = try connect(reconnecting: lastKnownSeq != nil, alsoHearing: [Topic.busStopping])
                defer { connection.close() }
                // A broker that was killed says no goodbye: the connection says hello to the next one itself, and is
                // welcomed inside `receive`.
                connection.onReconnect = { welcome in
                    printError("reconnected to the broker (the last one went silent without a goodbye)")
                    welcomed(welcome)
                }
                if let from, lastKnownSeq == nil, let welcome = connection.welcome {
                    printer.adopt(settings: welcome.settings)
                    try showHistory(from: from, through: welcome, filter: filter, printer: &printer, shown: &shown)
                    if count.map({ shown >= $0 }) ?? false { return }
                }
                if let welcome = connection.welcome { welcomed(welcome) }
                while count.map({ shown < $0 }) ?? true {
                    guard let message = try connection.receive(timeoutMilliseconds: 1000) else { continue }
                    switch message {
                    case .event(let envelope, _):
                        lastKnownSeq = max(lastKnownSeq ?? 0, envelope.seq)
                        lastSeen = envelope
                        guard filter.shows(envelope) else { continue }
                        shown += 1
                        printer.print(envelope)
                    case .error(let report):
                        printError("error from broker: \(TerminalText.escaped(report.message))")
                    case .bye(let reason):
                        printError("the broker left: \(reason)")
                        guard wait else {
                            if let count { throw CommandFailure("the broker left after \(shown) of the \(count) event(s) asked for") }
                            return
                        }
                        printError("waiting for the next broker…")
                        break
                    default:
                        continue
                    }
                    if case .bye = message { break }
                }
            } while wait && count.map({ shown < $0 }) ?? true
        }

        /// The events the broker journaled from `from` through its welcome to this tap (the tap delivers what follows).
        private func showHistory(from: String, through welcome: Welcome, filter: TapFilter, printer: inout TapPrinter, shown: inout Int) throws {
            guard let path = RuntimeDirectory.resolve(bus.runtimeDir).journalPath() else {
                throw CommandFailure("--from reads the broker's journal, and this broker writes none: start it with `shieldbus run --journal FILE`")
            }
            let zone = welcome.settings["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
            let start = HistoryStart(from)!
            var history: [Envelope] = []
            _ = try JournalHistory.read(path: path, after: start.seqAfter, through: welcome.seq, patienceMilliseconds: 2000) { envelope in
                if start.includes(envelope, now: welcome.time, timeZone: zone), filter.shows(envelope) { history.append(envelope) }
            }
            for envelope in history where count.map({ shown < $0 }) ?? true {
                shown += 1
                printer.print(envelope)
            }
        }

        /// Every second of wall time, the events per second of each topic the filter shows, until --count seconds; each
        /// report is stamped with bus time on the device's clock (a scaled clock's hour passes in a few reports).
        private func showRates(filter: TapFilter, recorder: FileHandle?) throws {
            var tally = TopicRates()
            var reports = 0
            repeat {
                // The clock's changes too, to stamp each report in bus time on the device's clock (never counted unless shown).
                let connection = try connect(reconnecting: reports > 0, alsoHearing: [Topic.clockChanged])
                defer { connection.close() }
                var windowStart = monotonicMilliseconds()
                let welcome = connection.welcome ?? Welcome(name: "", time: 0, seq: 0, clock: "real", heartbeatMilliseconds: 0)
                var busClock = BusClockReading(welcome: welcome, at: windowStart)
                let zone = EventFormatter(settings: welcome.settings).timeZone
                while count.map({ reports < $0 }) ?? true {
                    let now = monotonicMilliseconds()
                    if now >= windowStart + 1000 {
                        let window = tally.close(after: Double(now - windowStart) / 1000)
                        windowStart = now
                        reports += 1
                        let end = date(busTime: busClock.now(at: now))
                        print(json ? window.json(endingAt: end).jsonText : window.line(endingAt: end, timeZone: zone))
                        fflush(nil)
                        continue
                    }
                    guard let message = try connection.receive(timeoutMilliseconds: Int(windowStart + 1000 - now)) else { continue }
                    switch message {
                    case .event(let envelope, _):
                        busClock.note(envelope, at: monotonicMilliseconds())
                        guard filter.shows(envelope) else { continue }
                        recorder?.write(Data(WireCodec.encodeEnvelope(envelope) + [0x0A]))
                        tally.count(envelope)
                    case .error(let report):
                        printError("error from broker: \(TerminalText.escaped(report.message))")
                    case .bye(let reason):
                        printError("the broker left: \(reason)")
                        guard wait else {
                            if let count { throw CommandFailure("the broker left after \(reports) of the \(count) second(s) of rates asked for") }
                            return
                        }
                        printError("waiting for the next broker…")
                    default:
                        continue
                    }
                    if case .bye = message { break }
                }
            } while count.map({ reports < $0 }) ?? true
        }

        /// Connects, or with --wait tries again every half second until a broker answers.
        private func connect(reconnecting: Bool, alsoHearing extra: [String] = []) throws -> BusConnection {
            let subscriptions = TapFilter(include: patterns).subscriptions
            while true {
                do {
                    let connection = try BusTool.connect(runtimeDir: bus.runtimeDir, name: BusTool.name("tap"), role: .tap,
                                                         subscriptions: subscriptions.contains("") ? subscriptions : subscriptions + extra)
                    connection.onGap = { missed in
                        printError("⚠ tap missed \(missed.count) event(s) (deliveries \(missed.lowerBound)–\(missed.upperBound)): it could not keep up")
                    }
                    if reconnecting { printError("reconnected to the broker") }
                    return connection
                } catch where wait {
                    usleep(500_000)  // a person's tool polling for a broker to appear; nothing on the bus to wait on yet
                }
            }
        }
    }
}

/// Where `tap --from` starts in the journal: after a seq, a span back from bus time now, or a local date-time.
enum HistoryStart {
    case seq(UInt64)
    case before(milliseconds: Int64)
    case at(LocalDateTime)

    init?(_ text: String) {
        if let seq = UInt64(text), seq > 0 {
            self = .seq(seq)
        } else if text.hasPrefix("-"), let seconds = Scenario.duration(String(text.dropFirst())), seconds > 0 {
            self = .before(milliseconds: Int64(seconds * 1000))
        } else if let local = LocalDateTime(parsing: text) {
            self = .at(local)
        } else {
            return nil
        }
    }

    /// The journal is read after this seq (0: from its start).
    var seqAfter: UInt64 {
        if case .seq(let seq) = self { return seq - 1 }
        return 0
    }

    /// Whether `envelope` is at or after the start, with bus time `now` and the device's zone.
    func includes(_ envelope: Envelope, now: BusTime, timeZone: TimeZone) -> Bool {
        switch self {
        case .seq: return true
        case .before(let milliseconds): return envelope.time >= now - milliseconds
        case .at(let local): return Double(envelope.time) / 1000 >= local.resolve(in: timeZone).timeIntervalSince1970
        }
    }
}

/// How a tap prints an event: JSON Lines, a template, or the formatter's lines; never raw bytes to a terminal.
struct TapPrinter {
    let json: Bool
    let template: String?
    let color: Bool
    let wholeBodies: Bool
    let recorder: FileHandle?
    private var formatter = EventFormatter(settings: nil)
    private let output = FileHandle.standardOutput

    init(json: Bool, template: String?, color: Bool, wholeBodies: Bool, recorder: FileHandle?) {
        self.json = json
        self.template = template
        self.color = color
        self.wholeBodies = wholeBodies
        self.recorder = recorder
    }

    /// The broker's settings (its zone) from its welcome.
    mutating func adopt(settings: JSONValue?) {
        formatter = EventFormatter(settings: settings)
        if wholeBodies { formatter.maximumBodyCharacters = .max }
    }

    mutating func print(_ envelope: Envelope) {
        let encoded = WireCodec.encodeEnvelope(envelope)
        if let recorder { recorder.write(Data(encoded + [0x0A])) }
        // Nothing from the bus reaches the terminal raw: a body or a corr may hold escape sequences.
        let text: String
        if json {
            text = TerminalText.escapedJSON(String(decoding: encoded, as: UTF8.self))
        } else if let template {
            text = TerminalText.escaped(formatter.line(for: envelope, template: template))
        } else {
            var lines = formatter.lines(for: envelope).map(TerminalText.escaped)
            // The topic in its namespace's color, added after escaping (a topic holds no control characters).
            if color, let code = EventFormatter.color(of: envelope.topic), let range = lines[lines.count - 1].range(of: " \(envelope.topic) ") {
                lines[lines.count - 1].replaceSubrange(range, with: " \u{1B}[\(code)m\(envelope.topic)\u{1B}[0m ")
            }
            text = lines.joined(separator: "\n")
        }
        output.write(Data((text + "\n").utf8))
    }
}
