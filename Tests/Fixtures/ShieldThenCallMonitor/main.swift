// fixture-shield-then-call: a monitor that, in one callback, shields the app in front and then calls the OS again —
// a second store write, a DeviceActivity request, an App-Group write — so the OS's request to the shield renderer
// is made while the monitor is still in its turn. Its windows are daily, `--minute M` past each hour of
// `--hours H,H,…` for 15 minutes (default 10 and 14 o'clock); the window's end lifts the shields. `--work-ms N`:
// after its first write the callback works N ms of wall time before its next call, as a real extension's work takes
// time (longer than the OS's reply deadline, the renderer's request waits that long for its turn).

import DeviceActivity
import FamilyControls
import Foundation
import ManagedSettings
import ShieldBusSDK

final class ShieldThenCallMonitor: DeviceActivityMonitor {
    let center = DeviceActivityCenter()
    let store = ManagedSettingsStore(named: "lock")
    let defaults: SharedDefaults

    init(defaults: SharedDefaults) {
        self.defaults = defaults
        super.init()
    }

    override func didStart() {
        _ = try? AuthorizationCenter.shared.requestAuthorization(for: .individual)  // no companion app in this test
        guard (try? center.monitoredActivities().isEmpty) == true else { return }
        let minute = option("--minute").flatMap(Int.init) ?? 0
        let hours = (option("--hours") ?? "10,14").split(separator: ",").compactMap { Int($0) }
        for hour in hours {
            let end = hour * 60 + minute + 15
            let schedule = DeviceActivitySchedule(intervalStart: DateComponents(hour: hour, minute: minute),
                                                  intervalEnd: DateComponents(hour: end / 60, minute: end % 60), repeats: true)
            do {
                try center.startMonitoring(DeviceActivityName("window.\(hour)"), during: schedule)
            } catch {
                PluginRuntime.current?.logger.error("startMonitoring failed: \(error)")
            }
        }
    }

    override func intervalDidStart(for activity: DeviceActivityName) {
        do {
            // The shield over every app (the one in front too), then three more calls in the same callback.
            try store.shield.setApplicationCategories(.all())
            if let work = option("--work-ms").flatMap(UInt32.init) { usleep(work * 1_000) }
            try store.shield.setWebDomainCategories(.all())
            _ = try center.monitoredActivities()
            let round = ((try defaults.integer(forKey: "monitor.rounds")) ?? 0) + 1
            try defaults.set(round, forKey: "monitor.rounds")
        } catch {
            PluginRuntime.current?.logger.error("the window's start failed: \(error)")
        }
    }

    override func intervalDidEnd(for activity: DeviceActivityName) {
        do { try store.removeAllSettings() } catch { PluginRuntime.current?.logger.error("the window's end failed: \(error)") }
    }

    private func option(_ name: String) -> String? {
        CommandLine.arguments.firstIndex(of: name).flatMap { $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil }
    }
}

PluginHost.run {
    do {
        return ShieldThenCallMonitor(defaults: try SharedDefaults.forPlugin())
    } catch {
        FileHandle.standardError.write(Data("fixture-shield-then-call: \(error)\n".utf8))
        exit(PluginExitStatus.configurationError)
    }
}
