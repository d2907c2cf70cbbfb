import DeviceActivity
import FamilyControls
import Foundation
import MonitorKit
import ShieldBusSDK

/// The app: authorization, the person's pick, the schedules — at every start, and again after an approval (a
/// revocation stops them) — and "skip tonight".
final class BedtimeApp: App {
    private let center = DeviceActivityCenter()

    override func didStart() {
        setUp()
    }

    override func handleOther(_ envelope: Envelope) {
        if envelope.topic == "familycontrols.authorization.changed", envelope.bodyValue["status"]?.stringValue == "approved" { setUp() }
    }

    override func actionTapped(_ action: String) {
        guard action == "skip-tonight", let defaults = Bedtime.defaults() else { return }
        do {
            try defaults.set(Bedtime.now.timeIntervalSince1970, forKey: Bedtime.skipKey)
            wakeTheMonitor()
        } catch {
            PluginRuntime.current?.logger.error("cannot skip tonight: \(error)")
        }
    }

    private func setUp() {
        guard let defaults = Bedtime.defaults() else { return }
        do {
            guard try AuthorizationCenter.shared.requestAuthorization(for: .individual) == .approved else { return }
            // The pick in the OS's current tokens, at every set-up: an iOS update regenerates them, and a revocation
            // took the OS's copy of the selection with the schedules — the saved one alone would shield nothing.
            let picked = try AuthorizationCenter.shared.pickActivities()
            if try defaults.value(FamilyActivitySelection.self, forKey: Bedtime.selectionKey) != picked { try defaults.set(picked, forKey: Bedtime.selectionKey) }
            try Bedtime.kept.register(Bedtime.selection(defaults), center: center)
            let registered = try center.monitoredActivities()
            if !registered.contains(Bedtime.reserve) { try center.startMonitoring(Bedtime.reserve, during: TrueTimeSchedules.allDay) }
            if !registered.contains(Bedtime.nightly) {
                try center.startMonitoring(Bedtime.nightly, during: DeviceActivitySchedule(
                    intervalStart: Bedtime.night.startComponents, intervalEnd: Bedtime.night.endComponents, repeats: true))
            }
            wakeTheMonitor()
        } catch {
            PluginRuntime.current?.logger.error("cannot set up: \(error)")
        }
    }

    /// A one-off window starting now: the monitor's callback judges the night at once and plans its checks.
    private func wakeTheMonitor() {
        do {
            try center.startMonitoring(Bedtime.wake, during: TrueTimeSchedules.window(at: Bedtime.now))
        } catch {
            PluginRuntime.current?.logger.error("cannot wake the monitor: \(error)")
        }
    }
}
