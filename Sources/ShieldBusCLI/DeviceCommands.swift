import ArgumentParser
import BusClient
import BusProtocol
import BusTools
import DeviceAPI
import Foundation
import RunPlanning

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
              shieldbus do habit Read          (one the product's app offers: its habits: in the configuration)
              shieldbus do app-action skip-tonight        (a control in the product's own app; --app NAME with several)
              shieldbus do force-quit "Habit Lock"
              shieldbus do switch-tab --tab 2 | close-tab --tab 2
              shieldbus do authorize approve | deny | revoke
              shieldbus do set-clock +2h       (the phone's own clock; also -- -30m, 2026-11-24T09:00)
              shieldbus do time-zone America/New_York
              shieldbus do crash-broker        (killed, started again on the same state)

            The device answers once the plugins have handled the action: "done" and what is on screen after it \
            (the app in front, and the shield over it if one came up), or an error — the command then exits with \
            status 1: a press with no shield up or on a button the shield does not draw, a habit the product's app \
            does not offer, a tap with no notification waiting, or a plugin that could not record the action (a full or read-only App-Group store). Exit status \
            4: a plugin the action was for acts on nothing — given up on after a crash loop, or stopped — and is \
            named; nothing it would have done was done (`shieldbus plugin restart NAME` once it is fixed).
            With --json: {"done", "action", "handled", "screen"} or {"done": false, "action", "error": {"code", \
            "message", "plugins": [{"name", "why"}]}}.
            """
        )

        @OptionGroup var bus: BusOptions

        @Argument(help: ArgumentHelp(PersonInput.actions.joined(separator: ", ") + "."), completion: .list(PersonInput.actions))
        var action: String

        @Argument(help: "The app, URL, button (primary/secondary), habit, app action, answer (approve/deny/revoke), clock setting or time zone.", completion: .custom { _ in ["primary", "secondary"] + DefaultFiles.appNames() })
        var value: String?

        @Option(name: .long, help: "The browser tab, for visit, close-tab and switch-tab.")
        var tab: Int = 1

        @Flag(name: .long, help: "Visit in a private tab (no usage is recorded).")
        var `private` = false

        @Option(name: .long, help: ArgumentHelp("The product app an app-action is tapped in (needed on a device with several).", valueName: "app"),
                completion: .custom { _ in DefaultFiles.appNames() })
        var app: String?

        @Flag(name: .long, help: "Print the outcome as JSON (the error too, on standard output).")
        var json = false

        /// The exit status when a plugin the action was for acts on nothing (given up on, or stopped).
        static let pluginsCouldNotActStatus: Int32 = 4

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            let input: PersonInput
            do {
                input = try PersonInput(action: action, value: value, tab: tab, isPrivate: `private`, app: app)
            } catch let error as PersonInput.Invalid {
                throw ValidationError(error.description)
            }
            let what = "\(action)\(value.map { " \($0)" } ?? "")"
            // The device answers once the plugins have handled the action, with an error if one could not record it.
            let outcome: JSONValue
            do {
                outcome = try BusTool.input(runtimeDir: bus.runtimeDir, input.verb, input.body)
            } catch let refusal as DeviceRefusal {
                let couldNotAct = refusal.code == "plugins-could-not-act"
                if json {
                    print(JSONValue.object(["done": false, "action": .string(what),
                                            "error": refusal.details ?? .object(["code": refusal.code.map(JSONValue.string) ?? .null, "message": .string(refusal.message)])]).jsonText)
                    throw ExitCode(couldNotAct ? Self.pluginsCouldNotActStatus : 1)
                }
                guard couldNotAct else { throw refusal }
                printError("not done: \(what) — \(refusal.message)")
                throw ExitCode(Self.pluginsCouldNotActStatus)
            }
            if json {
                var report = outcome.objectValue ?? [:]
                (report["done"], report["action"]) = (.bool(outcome["handled"]?.boolValue != false), .string(what))
                return print(JSONValue.object(report).jsonText)
            }
            let screen = (try? DeviceAPICoding.decode(InputOutcome.self, from: outcome.jsonBytes))?.screen.map { " — \(Self.describe($0))" } ?? ""
            if outcome["handled"]?.boolValue == false {
                print("sent: \(what)\(screen) (the plugins had not finished handling it when the device answered; `shieldbus status` shows any error)")
            } else {
                print("done: \(what)\(screen)")
            }
        }

        /// What the person sees, in a few words: "Instagram under a shield: “A speed bump” (drawn by shield)".
        static func describe(_ screen: DeviceLook) -> String {
            let front = screen.app?.application.localizedDisplayName
                ?? screen.web.map { "\($0.webDomain.domain) in tab \($0.tab)\($0.isPrivate ? " (private)" : "")" }
                ?? screen.shield?.target.displayName
            guard let front else { return "the home screen" }
            guard let shield = screen.shield else { return "\(front) in use" }
            let title = shield.configuration.title.map { ": “\($0.text)”" } ?? ""
            return "\(front) under a shield\(title) (drawn by \(shield.renderedBy))"
        }
    }

    struct Authorize: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "authorize",
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
            commandName: "pick",
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
            let input = try PersonInput(action: "os-update")
            _ = try BusTool.input(runtimeDir: bus.runtimeDir, input.verb, input.body)
            print("iOS updated: tokens regenerated")
        }
    }

    struct Notification: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "notification",
            abstract: "Act on notifications on the running device.",
            subcommands: [Tap.self]
        )

        struct Tap: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "tap", abstract: "Tap a notification (the latest when no id is given): the app comes to the foreground.")
            @OptionGroup var bus: BusOptions
            @Argument(help: "The notification's id.") var id: String?

            func run() throws {
                bootstrapLogging(bus.logLevel, default: .warning)
                let input = try PersonInput(action: "notification-tap", value: id)
                _ = try BusTool.input(runtimeDir: bus.runtimeDir, input.verb, input.body)
                print("tapped \(id ?? "the latest notification")")
            }
        }
    }
}
