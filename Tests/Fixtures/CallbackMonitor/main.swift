// fixture-callback-monitor: a monitor that registers one activity with a warning time and a threshold event
// (over all activity), so a test can see every DeviceActivity callback arrive at its instant.

import DeviceActivity
import FamilyControls
import Foundation
import ShieldBusSDK

final class CallbackMonitor: DeviceActivityMonitor {
    override func didStart() {
        let center = DeviceActivityCenter()
        _ = try? AuthorizationCenter.shared.requestAuthorization(for: .individual)  // no companion app in this test
        guard (try? center.monitoredActivities().isEmpty) == true else { return }
        let schedule = DeviceActivitySchedule(intervalStart: DateComponents(hour: 10, minute: 0), intervalEnd: DateComponents(hour: 10, minute: 30),
                                              repeats: false, warningTime: DateComponents(minute: 5))
        let limit = DeviceActivityEvent(threshold: DateComponents(minute: 10))
        do {
            try center.startMonitoring(DeviceActivityName("watched"), during: schedule, events: [DeviceActivityEvent.Name("limit"): limit])
        } catch {
            PluginRuntime.current?.logger.error("startMonitoring failed: \(error)")
        }
        // Apple's validation, through the OS: a 10-minute interval is refused.
        do {
            try center.startMonitoring(DeviceActivityName("too-short"), during: DeviceActivitySchedule(
                intervalStart: DateComponents(hour: 11, minute: 0), intervalEnd: DateComponents(hour: 11, minute: 10), repeats: false))
        } catch {
            try? PluginRuntime.current?.publish("app.test.refused", json: ["error": .string("\(error)")])
        }
    }
}

PluginHost.run { CallbackMonitor() }
