// fixture-memory-monitor: a monitor that counts its callbacks in memory only and says the count each time —
// under the ios-realistic profile its process ends after every callback, so the count never gets past 1.

import DeviceActivity
import FamilyControls
import Foundation
import ShieldBusSDK

final class MemoryMonitor: DeviceActivityMonitor {
    var callbacksSeen = 0

    override func didStart() {
        let center = DeviceActivityCenter()
        _ = try? AuthorizationCenter.shared.requestAuthorization(for: .individual)  // no companion app in this test
        guard (try? center.monitoredActivities().isEmpty) == true else { return }
        for (index, hour) in [7, 8, 9].enumerated() {
            try? center.startMonitoring(DeviceActivityName("memory.\(index)"), during: DeviceActivitySchedule(
                intervalStart: DateComponents(hour: hour, minute: 0), intervalEnd: DateComponents(hour: hour, minute: 20), repeats: false))
        }
    }

    override func intervalDidStart(for activity: DeviceActivityName) {
        callbacksSeen += 1
        try? PluginRuntime.current?.publish("app.test.memory", json: ["seen": .int(Int64(callbacksSeen))])
    }
}

PluginHost.run { MemoryMonitor() }
