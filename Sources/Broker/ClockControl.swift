// ClockControl: a tool pauses the bus clock, changes its speed, steps it to the next timer or moves it forward
// (`clock.control.request`, protocol.md § 7.4); the broker answers with the clock as it is and says so on the bus.

import BusProtocol
import Foundation

/// The broker's own service for `clock.control.request`. Each control is answered (`clock.control.reply`, the clock's
/// state or an error) and, when it changed something, told to every tap as `clock.changed` — both journaled, so a
/// journal shows why time stood still or leapt. Bus time never runs backwards: a jump goes forward only, timer by timer.
final class ClockControl: BrokerService {
    let subscriptions = [Topic.clockControlRequest]
    private var bus: (any ServiceBus)!
    private let clock: BusClock
    private let time: TimeKeeper

    init(clock: BusClock, time: TimeKeeper) {
        self.clock = clock
        self.time = time
    }

    /// The controls, as the request's `action` names them.
    static let actions = ["pause", "resume", "speed", "step", "jump"]
    /// The fastest a clock may be made to run (a year in under nine hours of wall time).
    static let maximumSpeed = 1_000.0

    func attach(to bus: any ServiceBus) { self.bus = bus }

    func handle(_ request: Envelope) {
        guard request.corr != nil else { return }  // nobody would hear the answer
        let body = request.bodyValue
        let action = body["action"]?.stringValue ?? ""
        if time.isMovingOn {
            return refuse(request, "clock-busy", "the clock is still moving forward for an earlier step or jump; try again once it has answered")
        }
        switch action {
        case "pause":
            guard !clock.isPaused else { return refuse(request, "already-paused", "the bus clock is paused already; nothing changed") }
            clock.pause()
            changed(request, action)
        case "resume":
            guard clock.isPaused else { return refuse(request, "not-paused", "the bus clock is running already; nothing changed") }
            clock.play()
            changed(request, action)
        case "speed":
            guard !clock.isVirtual else {
                return refuse(request, "clock-virtual", "the virtual clock runs as fast as its plugins answer and has no speed: pause it, step it or jump it (a speed needs `shieldbus run --clock real` or `--clock scaled`)")
            }
            guard let speed = body["speed"]?.doubleValue, speed.isFinite, speed > 0, speed <= Self.maximumSpeed else {
                return refuse(request, "bad-request", "'speed' needs 'speed': how many times faster than wall time bus time runs, above 0 and at most \(Int(Self.maximumSpeed)) (1 is real time)")
            }
            // A real clock runs at ×1: asked for the rate it runs at, the clock would not change.
            let current: Double = if case .scaled(let running) = clock.clockMode { running } else { 1 }
            guard speed != current else {
                return refuse(request, "speed-unchanged", "the bus clock runs at ×\(speed == speed.rounded() ? String(Int(speed)) : String(speed)) already; nothing changed")
            }
            clock.setSpeed(speed)
            changed(request, action)
        case "step":
            guard let next = time.nextBusTimer() else {
                return refuse(request, "nothing-scheduled", "nothing is scheduled on the bus clock: there is no timer to step to")
            }
            let from = clock.now()
            time.moveOn(to: max(next, from), runsOn: false) { [unowned self] in changed(request, action, from: from) }
        case "jump":
            let from = clock.now()
            let to: BusTime
            if let absolute = body["time"]?.intValue {
                to = absolute
            } else if let forward = body["by"]?.intValue {
                to = from + forward
            } else {
                return refuse(request, "bad-request", "'jump' needs 'time' (bus time, ms since the epoch) or 'by' (ms forward)")
            }
            guard to > from else {
                return refuse(request, "clock-backwards", "bus time never runs backwards: \(Self.described(to)) is not after now (\(Self.described(from))); a jump goes forward only")
            }
            let runsOn = !clock.isPaused
            time.moveOn(to: to, runsOn: runsOn) { [unowned self] in changed(request, action, from: from) }
        default:
            refuse(request, "bad-request", "unknown clock control '\(action)'; controls: \(Self.actions.joined(separator: ", "))")
        }
    }

    /// A bus time as a person reads it (UTC; the broker knows no device zone).
    static func described(_ time: BusTime) -> String {
        "\(Date(timeIntervalSince1970: Double(time) / 1000)) (\(time) ms)"
    }

    /// The clock as it is: mode, whether paused, speed (scaled), bus time and the next timer's instant.
    static func state(of clock: BusClock, nextTimer: BusTime?) -> [String: JSONValue] {
        var state: [String: JSONValue] = ["clock": .string(clock.mode), "paused": .bool(clock.isPaused), "time": .int(clock.now())]
        if case .scaled(let speed) = clock.clockMode { state["speed"] = .double(speed) }
        if let nextTimer { state["nextTimer"] = .int(nextTimer) }
        return state
    }

    /// Tells the bus (`clock.changed`) and the requester (the reply) what the clock is now.
    private func changed(_ request: Envelope, _ action: String, from: BusTime? = nil) {
        let state = Self.state(of: clock, nextTimer: time.nextBusTimer())
        var event = state
        event["action"] = .string(action)
        event["by"] = .string(request.source)
        if let from { event["from"] = .int(from) }
        bus.emit(topic: Topic.clockChanged, body: .object(event))
        answer(request, ["ok": true, "value": .object(state)])
    }

    private func refuse(_ request: Envelope, _ code: String, _ message: String) {
        answer(request, ["ok": false, "error": ["code": .string(code), "message": .string(message)]])
    }

    private func answer(_ request: Envelope, _ reply: JSONValue) {
        bus.emit(topic: Topic.reply(to: request.topic), body: reply, corr: request.corr)
    }
}
