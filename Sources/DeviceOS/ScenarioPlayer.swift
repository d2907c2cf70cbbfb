import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import ScreenTime

/// Where a scenario stands, kept in the device's store as each step is played: a broker killed mid-scenario
/// (SIGKILL, a power cut) is continued by `shieldbus run --resume` from the first step it had not played, at the
/// time of the step last due (or where the killed broker's journal had got, if later: `BusClock.resume`). A step
/// is played at most once, as a tap during a phone's crash is lost.
public struct ScenarioProgress: Codable, Hashable, Sendable {
    /// The scenario's name: a resume with another scenario is refused.
    public var scenario: String
    /// The index of the first step not played yet.
    public var nextStep: Int
    /// Bus time of the step last due — played, or about to be (virtual time resumes there, or later: `BusClock.resume`).
    public var time: BusTime

    static let key = "scenario.progress"

    /// The bytes `DeviceAPICoding.encode` writes for it (keys in order), written directly: it is saved at every step,
    /// on the broker's path, and needs no encoder's containers.
    var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + scenario.utf8.count)
        out.append(contentsOf: #"{"nextStep":"#.utf8)
        JSONWriter.writeInteger(Int64(nextStep), into: &out)
        out.append(contentsOf: #","scenario":"#.utf8)
        JSONWriter.writeString(scenario, into: &out)
        out.append(contentsOf: #","time":"#.utf8)
        JSONWriter.writeInteger(time, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// Plays a scenario's steps at their bus times — the person using the device — and ends the run after
/// its last instant, once every plugin has handled everything.
final class ScenarioPlayer {
    let scenario: Scenario
    /// Where a resumed run starts (nil: at the first step).
    let resumeAt: ScenarioProgress?
    /// For fault tests: the broker kills itself (SIGKILL) when this step (1-based) is due, before playing it.
    let crashAtStep: Int?

    init(scenario: Scenario, resumeAt: ScenarioProgress?, crashAtStep: Int?) {
        self.scenario = scenario
        self.resumeAt = resumeAt
        self.crashAtStep = crashAtStep
    }

    func start(on device: DeviceOS) {
        // Playing has begun: a broker killed before the first step is resumed from it.
        if resumeAt == nil { device.save(ScenarioProgress(scenario: scenario.name, nextStep: 0, time: busTime(scenario.start)), key: ScenarioProgress.key) }
        for (index, step) in scenario.steps.enumerated() where index >= resumeAt?.nextStep ?? 0 {
            let time = busTime(step.time)
            device.bus.schedule(at: time) { [self] in
                if index + 1 == crashAtStep {
                    device.save(ScenarioProgress(scenario: scenario.name, nextStep: index, time: time), key: ScenarioProgress.key)
                    // Everything sequenced so far is in the journal and the stores (the broker saves what it sequenced
                    // before a timer acts); what is in memory dies here, as with any SIGKILL.
                    device.logger.notice("killing the broker before step \(index + 1), as --crash-at-step asks")
                    kill(getpid(), SIGKILL)
                }
                // Saved with the step's first change of the device's state (one transaction: both or neither), or
                // alone after it, before anything of the step is journaled: a step is played at most once.
                device.state.stage(json: ScenarioProgress(scenario: scenario.name, nextStep: index + 1, time: time).json, key: ScenarioProgress.key)
                device.bus.emit(topic: DeviceTopic.scenarioStep, bodyJSON: Self.stepBody(step: index + 1, line: step.line, action: Self.describe(step.action)))
                device.perform(step.action)
                device.saving(ScenarioProgress.key) { try $0.writeStaged() }
            }
        }
        device.bus.schedule(at: max(busTime(scenario.end), resumeAt?.time ?? .min)) { [self] in
            device.bus.whenQuiet {
                device.emit(topic: DeviceTopic.scenarioEnded, body: ["name": .string(self.scenario.name), "steps": .int(Int64(self.scenario.steps.count))])
                device.bus.whenQuiet { device.bus.stop() }
            }
        }
    }

    /// `scenario.step`'s body, as `JSONValue` writes `{"step", "line", "action"}` (keys in order), written directly: one
    /// per step.
    static func stepBody(step: Int, line: Int, action: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(48 + action.utf8.count)
        out.append(contentsOf: #"{"action":"#.utf8)
        JSONWriter.writeString(action, into: &out)
        out.append(contentsOf: #","line":"#.utf8)
        JSONWriter.writeInteger(Int64(line), into: &out)
        out.append(contentsOf: #","step":"#.utf8)
        JSONWriter.writeInteger(Int64(step), into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A step in words, for the journal and the timeline.
    static func describe(_ action: ScenarioAction) -> String {
        switch action {
        case .open(let app): return "open \(app.name)"
        case .close(let app): return "close \(app?.name ?? "the foreground app")"
        case .home: return "go to the home screen"
        case let .visit(url, _, tab, isPrivate): return "visit \(url) in \(isPrivate ? "private " : "")tab \(tab)"
        case .closeTab(let tab): return "close tab \(tab)"
        case .switchTab(let tab): return "switch to tab \(tab)"
        case .setClock(.shift(let seconds)): return "set the device clock \(seconds < 0 ? "back" : "forward") \(Int(abs(seconds)) / 60) min"
        case .setClock(.absolute(let time)): return "set the device clock to \(time)"
        case .setTimeZone(let zone): return "change the time zone to \(zone)"
        case .crashBroker: return "the broker crashes and starts again"
        case .fillActivityLimit: return "the app's other activities fill the limit of 20"
        case .press(let button): return "press the \(button.rawValue) shield button"
        case .tapNotification(let id): return "tap notification \(id ?? "(latest)")"
        case .habit(let habit): return "complete habit \"\(habit)\""
        case let .appAction(app, action): return "tap \"\(action)\" in \(app?.name ?? "the product's app")"
        case .authorize(let answer): return "authorization \(answer.rawValue)"
        case .osUpdate: return "iOS update (tokens regenerate)"
        case .restart: return "restart the device"
        case .forceQuit(let app): return "force-quit \(app.name)"
        case .publish(let topic, _): return "publish \(topic)"
        }
    }
}
