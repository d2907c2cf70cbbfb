import ArgumentParser
import BusClient
import BusProtocol
import BusTools
import Foundation

extension ShieldBus {
    struct Clock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clock",
            abstract: "Show or steer the running broker's bus clock: pause, resume, speed, step, jump.",
            discussion: """
            Examples:
              shieldbus clock                  time, mode, speed, paused?, next timer
              shieldbus clock pause            bus time stands still; timers wait
              shieldbus clock resume
              shieldbus clock speed 600        ten bus minutes a second (not virtual)
              shieldbus clock step             to the next timer, which fires; paused
              shieldbus clock jump +30m        forward; timers on the way fire in turn
              shieldbus clock jump 07:00       the next 07:00 on the device
              shieldbus clock jump 2026-11-24T07:00

            Bus time never runs backwards: a jump to an earlier time is refused (exit status 1), as is a speed for \
            the virtual clock (it runs as fast as its plugins answer) and a step with nothing scheduled. A step or \
            jump answers once the plugins have handled every timer on the way. Every control is journaled \
            (`clock.control.request`, its reply and `clock.changed`): `shieldbus tap clock.` shows them.
            """
        )

        @OptionGroup var bus: BusOptions

        @Argument(help: "pause, resume, speed, step or jump (none: show the clock).", completion: .list(["pause", "resume", "speed", "step", "jump"]))
        var action: String?

        @Argument(help: "The speed (for speed: 1 is real time) or the time (for jump: +30m, 07:00, 2026-11-24T07:00).")
        var value: String?

        @Flag(name: .long, help: "Print the clock as JSON.")
        var json = false

        func run() throws {
            bootstrapLogging(bus.logLevel, default: .warning)
            guard let action else { return try show() }
            var speed: Double?
            switch action {
            case "speed":
                guard let text = value, let number = Double(text), number.isFinite, number > 0 else {
                    throw ValidationError("'speed' needs how many times faster than wall time bus time runs, e.g. `shieldbus clock speed 60` (1 is real time)")
                }
                speed = number
            case "jump":
                guard value != nil else { throw ValidationError("'jump' needs a time: +30m, +2h, 07:00 or 2026-11-24T07:00") }
            case "pause", "resume", "step":
                guard value == nil else { throw ValidationError("'\(action)' takes no value") }
            default:
                throw ValidationError("unknown clock control '\(action)'; controls: pause, resume, speed, step, jump")
            }
            let answer: (clock: JSONValue, settings: JSONValue?)
            do {
                answer = try BusTool.controlClock(runtimeDir: bus.runtimeDir, action: action, speed: speed, to: action == "jump" ? value : nil)
            } catch let invalid as BusTool.Invalid {
                throw ValidationError(invalid.description)
            }
            if json { return print(answer.clock.jsonText) }
            let formatter = EventFormatter(settings: answer.settings)
            let what = ["pause": "paused", "resume": "resumed", "speed": "speed set", "step": "stepped to the next timer", "jump": "jumped"][action]!
            print("\(what): \(Self.describe(answer.clock, formatter))")
        }

        /// The clock as the running broker reports it (`status`), changing nothing.
        private func show() throws {
            let runtime = RuntimeDirectory.resolve(bus.runtimeDir)
            try runtime.checkBroker()
            let connection = try BusConnection(endpoint: runtime.brokerEndpoint(), hello: Hello(name: BusTool.name("clock"), role: .tool, subscriptions: []), runtime: runtime)
            defer { connection.close() }
            let broker = try connection.status()["broker"] ?? [:]
            var clock: [String: JSONValue] = ["clock": broker["clock"] ?? "?", "paused": broker["clockPaused"] ?? false, "time": broker["time"] ?? 0]
            if let speed = broker["clockSpeed"] { clock["speed"] = speed }
            if json { return print(JSONValue.object(clock).jsonText) }
            print(Self.describe(.object(clock), EventFormatter(settings: connection.welcome?.settings)))
        }

        /// "2026-11-24 07:00:00.000 (Europe/Berlin), scaled ×60, paused; next timer 07:01:00.000".
        static func describe(_ clock: JSONValue, _ formatter: EventFormatter) -> String {
            let (day, time) = formatter.dayAndTime(clock["time"]?.intValue ?? 0)
            var mode = clock["clock"]?.stringValue ?? "?"
            if let speed = clock["speed"]?.doubleValue { mode += " ×\(speed == speed.rounded() ? String(Int(speed)) : String(speed))" }
            var text = "\(day) \(time) (\(formatter.timeZoneName)), \(mode), \(clock["paused"]?.boolValue == true ? "paused" : "running")"
            if let next = clock["nextTimer"]?.intValue {
                let (nextDay, nextTime) = formatter.dayAndTime(next)
                text += "; next timer \(nextDay == day ? "" : nextDay + " ")\(nextTime)"
            }
            return text
        }
    }
}
