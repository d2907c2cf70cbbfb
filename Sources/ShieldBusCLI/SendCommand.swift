import ArgumentParser
import BusClient
import BusProtocol
import BusTools
import Foundation

extension ShieldBus {
    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Inject events onto the bus and print the sequence number each got.",
            discussion: """
            Examples:
              shieldbus send app.hello '{"from":"me"}'
              shieldbus send --stdin < events.jsonl     # one {"topic":…,"body":{…}} per line (tap --json lines too)
            To act as the person on the device (open an app, press a button), use `shieldbus do`.
            """
        )

        @OptionGroup var bus: BusOptions

        @Argument(help: "The topic, e.g. app.note.added (events only the system produces, such as activity.*, are refused).")
        var topic: String?

        @Argument(help: "The body: one JSON object.")
        var body: String = "{}"

        @Flag(name: .long, help: "Read the events from standard input, one JSON object with `topic` and `body` per line.")
        var stdin = false

        @Flag(name: .long, help: "Print one JSON object per event sent: topic, seq, time (bus time, ms since 1970).")
        var json = false

        func validate() throws {
            if stdin {
                guard topic == nil else { throw ValidationError("--stdin reads the topics from standard input: give no topic") }
            } else {
                guard let topic else { throw ValidationError("give a topic (and a body), or --stdin") }
                _ = try Self.event(topic: topic, body: body)
            }
        }

        /// A topic and body as the broker takes them, or a usage mistake saying what is wrong.
        static func event(topic: String, body: String) throws -> Publish {
            // Namespaces are the broker's to judge: it knows those the configuration declares.
            if let problem = Topic.syntaxProblem(with: topic) { throw ValidationError(problem.description) }
            let parsed: JSONValue
            do {
                parsed = try JSONValue(parsing: body)
            } catch {
                throw ValidationError("the body is not JSON: \(error)")
            }
            guard parsed.objectValue != nil else { throw ValidationError("the body must be a JSON object ({…}), not \(parsed.kindName)") }
            return Publish(topic: topic, body: parsed)
        }

        /// One line of standard input: `{"topic": …, "body": {…}}` (other fields, as in a tap's JSON line, are ignored).
        static func event(line: String) throws -> Publish {
            let value: JSONValue
            do { value = try JSONValue(parsing: line) } catch { throw ValidationError("not JSON: \(error)") }
            guard let topic = value["topic"]?.stringValue else { throw ValidationError("no \"topic\" (a string)") }
            return try event(topic: topic, body: (value["body"] ?? [:]).jsonText)
        }

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let name = BusTool.name("send")
            // Each event comes back to its sender with its seq: subscribed to its topic, or to everything when the
            // topics come from standard input.
            let connection = try BusTool.connect(runtimeDir: bus.runtimeDir, name: name, role: .tool, subscriptions: [stdin ? "" : topic!])
            defer { connection.close() }
            let sender = EventSender(connection: connection, name: name, json: json)
            guard stdin else { return try sender.send(try Self.event(topic: topic!, body: body)) }
            var number = 0, bad = 0
            while let line = readLine(strippingNewline: true) {
                number += 1
                guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
                do {
                    try sender.send(try Self.event(line: line))
                } catch {
                    bad += 1
                    printError("error: line \(number): \((error as? ValidationError)?.message ?? "\(error)"); not sent")
                }
            }
            if bad > 0 { throw CommandFailure("\(bad) of the lines were not sent (above)") }
            if number == 0 { throw CommandFailure("standard input held no event: nothing was sent") }
        }
    }
}

/// Publishes events as a tool and waits, for each, for the broker to deliver it back (its seq and bus time).
struct EventSender {
    let connection: BusConnection
    let name: String
    let json: Bool

    func send(_ event: Publish) throws {
        try connection.publish(event)
        let deadline = monotonicMilliseconds() + 3000
        while monotonicMilliseconds() < deadline {
            switch try connection.receive(timeoutMilliseconds: 500) {
            case .event(let envelope, _)? where envelope.source == name && envelope.topic == event.topic:
                if json {
                    print(JSONValue.object(["topic": .string(event.topic), "seq": .int(Int64(envelope.seq)), "time": .int(envelope.time)]).jsonText)
                } else {
                    let (day, time) = EventFormatter(settings: connection.welcome?.settings).dayAndTime(envelope.time)
                    print("sent \(event.topic) as #\(envelope.seq) at \(day) \(time) (bus time)")
                }
                fflush(nil)
                return
            case .error(let report)?:
                throw CommandFailure("the broker refused \(event.topic): \(report.message)")
            default:
                continue
            }
        }
        throw CommandFailure("the broker did not confirm \(event.topic) within 3 s")
    }
}
