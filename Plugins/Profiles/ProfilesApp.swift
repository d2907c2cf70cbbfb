import DeviceActivity
import FamilyControls
import Foundation
import MonitorKit
import ShieldBusSDK

/// The app: authorization, the pick and the schedules — at every start and after an approval — and the person's
/// controls: start and stop deep work, end the evening, take a break.
final class ProfilesApp: App {
    private let center = DeviceActivityCenter()

    override func didStart() {
        setUp()
    }

    override func handleOther(_ envelope: Envelope) {
        if envelope.topic == "familycontrols.authorization.changed", envelope.bodyValue["status"]?.stringValue == "approved" { setUp() }
    }

    override func actionTapped(_ action: String) {
        guard let defaults = Profiles.defaults() else { return }
        let now = Profiles.now.timeIntervalSince1970
        do {
            switch action {
            case "start-deep-work": try defaults.set(true, forKey: Profiles.sessionKey)
            case "stop-deep-work": try defaults.set(false, forKey: Profiles.sessionKey)
            case "end-evening": try defaults.set(now, forKey: Profiles.endedEveningKey)
            case "take-a-break": try defaults.set(now, forKey: Profiles.breakKey)
            default: return
            }
            wakeTheMonitor()
        } catch {
            PluginRuntime.current?.logger.error("cannot record \(action): \(error)")
        }
    }

    private func setUp() {
        guard let defaults = Profiles.defaults() else { return }
        do {
            guard try AuthorizationCenter.shared.requestAuthorization(for: .individual) == .approved else { return }
            // The pick in the OS's current tokens, at every set-up: an iOS update regenerates them, and a revocation
            // took the OS's copy of the selection with the schedules — the saved one alone would shield nothing.
            let picked = try AuthorizationCenter.shared.pickActivities()
            if try defaults.value(FamilyActivitySelection.self, forKey: Profiles.selectionKey) != picked { try defaults.set(picked, forKey: Profiles.selectionKey) }
            try Profiles.kept.register(Profiles.selection(defaults), center: center)
            if try !center.monitoredActivities().contains(Profiles.reserve) {
                try center.startMonitoring(Profiles.reserve, during: TrueTimeSchedules.allDay)
            }
            wakeTheMonitor()
        } catch {
            PluginRuntime.current?.logger.error("cannot set up: \(error)")
        }
    }

    /// A one-off window starting now: the monitor's callback decides at once and plans its checks.
    private func wakeTheMonitor() {
        do {
            try center.startMonitoring(Profiles.wake, during: TrueTimeSchedules.window(at: Profiles.now))
        } catch {
            PluginRuntime.current?.logger.error("cannot wake the monitor: \(error)")
        }
    }
}
