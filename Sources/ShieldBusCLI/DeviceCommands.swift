import ArgumentParser
import BusClient
import BusProtocol
import Foundation

extension BusTool {
    /// Sends the person's action to the running device (`input.<verb>.request`) and returns the reply's value,
    /// or throws the device's error.
    static func input(runtimeDir: String?, _ verb: String, _ body: JSONValue = [:]) throws -> JSONValue {
        let name = BusTool.name("do")
        let connection = try connect(runtimeDir: runtimeDir, name: name, role: .tool, subscriptions: [])
        defer { connection.close() }
        let corr = "\(name)-1"
        try connection.publish(Publish(topic: "input.\(verb).request", body: body, corr: corr))
        let deadline = monotonicMilliseconds() + 5000
        while monotonicMilliseconds() < deadline {
            switch try connection.receive(timeoutMilliseconds: 500) {
            case .event(let envelope, _)? where envelope.corr == corr && envelope.isReply:
                let reply = envelope.bodyValue
                if reply["ok"]?.boolValue == true { return reply["value"] ?? [:] }
                throw CommandFailure(reply["error"]?["message"]?.stringValue ?? "the device refused: \(reply.jsonText)")
            case .error(let report)?:
                throw CommandFailure(report.message)
            default:
                continue
            }
        }
        throw BusClientError.brokerNotAnswering(endpoint: RuntimeDirectory.resolve(runtimeDir).brokerEndpoint(), waitedMilliseconds: 5000)
    }
}

extension ShieldBus {
    struct Do: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "do",
            abstract: "Act as the person on the running device: open an app, press a shield button, visit a page, …",
            discussion: """
            Examples:
              shieldbus do open Instagram
              shieldbus do press primary
              shieldbus do visit https://www.instagram.com/explore --tab 2 --private
              shieldbus do close | home | restart
              shieldbus do habit "Read 10 pages"
              shieldbus do force-quit "Habit Lock"
            """
        )

        @OptionGroup var bus: BusOptions

        @Argument(help: "open, close, home, visit, close-tab, press, habit, restart, force-quit.")
        var action: String

        @Argument(help: "The app, URL, button (primary/secondary) or habit.")
        var value: String?

        @Option(name: .long, help: "The browser tab, for visit and close-tab.")
        var tab: Int = 1

        @Flag(name: .long, help: "Visit in a private tab (no usage is recorded).")
        var `private` = false

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            var body: [String: JSONValue] = [:]
            switch action {
            case "open", "force-quit":
                guard let value else { throw ValidationError("'\(action)' needs an app name") }
                body["app"] = .string(value)
            case "close": if let value { body["app"] = .string(value) }
            case "visit":
                guard let value else { throw ValidationError("'visit' needs a URL") }
                body = ["url": .string(value), "tab": .int(Int64(tab)), "private": .bool(`private`)]
            case "close-tab": body["tab"] = .int(Int64(tab))
            case "press":
                guard let value, ["primary", "secondary"].contains(value) else { throw ValidationError("'press' needs primary or secondary") }
                body["button"] = .string(value)
            case "habit": body["habit"] = .string(value ?? "habit")
            case "home", "restart": break
            default: throw ValidationError("unknown action '\(action)'; see --help")
            }
            _ = try BusTool.input(runtimeDir: bus.runtimeDir, action, .object(body))
            print("done: \(action)\(value.map { " \($0)" } ?? "")")
        }
    }

    struct Authorize: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer the app's FamilyControls authorization request, or revoke it (as in Settings).",
            discussion: "Revoking removes the app's shields and stops its monitoring."
        )
        @OptionGroup var bus: BusOptions
        @Argument(help: "approve, deny or revoke.") var answer: String

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let words = ["approve": "approved", "deny": "denied", "revoke": "revoked"]
            guard let word = words[answer] else { throw ValidationError("the answer is approve, deny or revoke") }
            _ = try BusTool.input(runtimeDir: bus.runtimeDir, "authorize", ["answer": .string(word)])
            print("authorization \(word)")
        }
    }

    struct Pick: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The FamilyActivityPicker: print the opaque tokens for the apps, categories and domains named.",
            discussion: "Example: shieldbus pick --app Instagram --app TikTok --category games --domain reddit.com"
        )
        @OptionGroup var bus: BusOptions
        @Option(name: .customLong("app"), help: "An app (name or bundle id); repeat for more.") var apps: [String] = []
        @Option(name: .customLong("category"), help: "A category id (e.g. social, games); repeat for more.") var categories: [String] = []
        @Option(name: .customLong("domain"), help: "A web domain; repeat for more.") var domains: [String] = []

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let value = try BusTool.input(runtimeDir: bus.runtimeDir, "pick", [
                "apps": .array(apps.map(JSONValue.string)), "categories": .array(categories.map(JSONValue.string)),
                "domains": .array(domains.map(JSONValue.string)),
            ])
            print(value["selection"]?.jsonText ?? value.jsonText)
        }
    }

    struct OSUpdate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "os-update",
            abstract: "Update iOS on the running device: every token is regenerated (FB14237883)."
        )
        @OptionGroup var bus: BusOptions

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            _ = try BusTool.input(runtimeDir: bus.runtimeDir, "os-update")
            print("iOS updated: tokens regenerated")
        }
    }

    struct Notification: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Act on notifications on the running device.",
            subcommands: [Tap.self]
        )

        struct Tap: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Tap a notification (the latest when no id is given): the app comes to the foreground.")
            @OptionGroup var bus: BusOptions
            @Argument(help: "The notification's id.") var id: String?

            func run() throws {
                bootstrapLogging(bus.logLevel, default: .warning)
                _ = try BusTool.input(runtimeDir: bus.runtimeDir, "notification-tap", id.map { ["id": .string($0)] } ?? [:])
                print("tapped \(id ?? "the latest notification")")
            }
        }
    }
}
