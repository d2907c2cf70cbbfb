import ArgumentParser
import BusClient
import BusProtocol
import BusTools
import Foundation

extension ShieldBus {
    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Inject one event onto the bus and print the sequence number it got.",
            discussion: """
            Example: shieldbus send app.hello '{"from":"me"}'
            To act as the person on the device (open an app, press a button), use `shieldbus do`.
            """
        )

        @OptionGroup var bus: BusOptions

        @Argument(help: "The topic, e.g. app.note.added (events only the system produces, such as activity.*, are refused).")
        var topic: String

        @Argument(help: "The body: one JSON object.")
        var body: String = "{}"

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            // Namespaces are the broker's to judge: it knows those the configuration declares.
            if let problem = Topic.syntaxProblem(with: topic) { throw ValidationError(problem.description) }
            let parsed: JSONValue
            do {
                parsed = try JSONValue(parsing: body)
            } catch {
                throw ValidationError("the body is not JSON: \(error)")
            }
            guard parsed.objectValue != nil else { throw ValidationError("the body must be a JSON object ({…}), not \(parsed.kindName)") }
            let name = BusTool.name("send")
            let connection = try BusTool.connect(runtimeDir: bus.runtimeDir, name: name, role: .tool, subscriptions: [topic])
            defer { connection.close() }
            try connection.publish(Publish(topic: topic, body: parsed))
            let deadline = monotonicMilliseconds() + 3000
            while monotonicMilliseconds() < deadline {
                switch try connection.receive(timeoutMilliseconds: 500) {
                case .event(let envelope, _)? where envelope.source == name && envelope.topic == topic:
                    print("sent \(topic) as #\(envelope.seq) at bus time \(envelope.time)")
                    return
                case .error(let report)?:
                    printError("error: the broker refused the event: \(report.message)")
                    throw ExitCode(1)
                default:
                    continue
                }
            }
            printError("error: the broker did not confirm the event within 3 s")
            throw ExitCode(1)
        }
    }
}
