import BusProtocol
import Configuration
import DeviceAPI
import Foundation
import ScreenTime

/// Plays a scenario's steps at their bus times — the person using the device — and ends the run after
/// its last instant, once every plugin has handled everything.
final class ScenarioPlayer {
    let scenario: Scenario

    init(scenario: Scenario) {
        self.scenario = scenario
    }

    func start(on device: DeviceOS) {
        for (index, step) in scenario.steps.enumerated() {
            device.bus.schedule(at: busTime(step.time)) { [self] in
                device.emit(topic: DeviceTopic.scenarioStep, body: [
                    "step": .int(Int64(index + 1)), "line": .int(Int64(step.line)), "action": .string(Self.describe(step.action)),
                ])
                device.perform(step.action)
            }
        }
        device.bus.schedule(at: busTime(scenario.end)) { [self] in
            device.bus.whenQuiet {
                device.emit(topic: DeviceTopic.scenarioEnded, body: ["name": .string(self.scenario.name), "steps": .int(Int64(self.scenario.steps.count))])
                device.bus.whenQuiet { device.bus.stop() }
            }
        }
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
        case .authorize(let answer): return "authorization \(answer.rawValue)"
        case .osUpdate: return "iOS update (tokens regenerate)"
        case .restart: return "restart the device"
        case .forceQuit(let app): return "force-quit \(app.name)"
        case .publish(let topic, _): return "publish \(topic)"
        }
    }
}
