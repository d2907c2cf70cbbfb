// fixture-echo-monitor: a monitor whose callbacks come several at one instant and each write an App-Group key
// (which it hears itself, `state.changed`) *before* registering its activity again with the OS — so events arrive
// while a call waits for its reply, and the call ends the running interval (one more callback). Each callback it
// handles is announced as `x.<name>.handled {seq, inProcess}`: which callback, and how many this process has
// handled (memory only), so a test can see every callback handled once, at its instant, one per process.

import DeviceActivity
import FamilyControls
import Foundation
import ShieldBusSDK

final class EchoMonitor: DeviceActivityMonitor {
    static let activities = ["echo.a", "echo.b", "echo.c"]
    let center = DeviceActivityCenter()
    let defaults: SharedDefaults
    var callbacksHandled = 0

    init(defaults: SharedDefaults) {
        self.defaults = defaults
        super.init()
    }

    override var subscriptions: [String] { super.subscriptions + ["state.changed"] }

    override func didStart() {
        _ = try? AuthorizationCenter.shared.requestAuthorization(for: .individual)  // no companion app in this test
        guard (try? center.monitoredActivities().isEmpty) == true else { return }
        for name in Self.activities { register(name, minutesAhead: 5) }
    }

    override func intervalDidStart(for activity: DeviceActivityName) {
        handled()
        let key = "monitor.\(activity.rawValue)"
        let round = ((try? defaults.integer(forKey: key)) ?? nil ?? 0) + 1
        // The write first, then the call: its echo and the callbacks due at the same instant arrive meanwhile.
        do { try defaults.set(round, forKey: key) } catch { PluginRuntime.current?.reportWriteFailure(key, error) }
        register(activity.rawValue, minutesAhead: 20)
    }

    override func intervalDidEnd(for activity: DeviceActivityName) { handled() }

    /// A one-off 15-minute window (DeviceActivity's minimum) starting `minutesAhead` from now; registering a running
    /// activity again ends its interval.
    func register(_ name: String, minutesAhead: Double) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = BusClock.timeZone
        let start = BusClock.now.addingTimeInterval(minutesAhead * 60)  // on the device clock, as the OS runs it
        let schedule = DeviceActivitySchedule(intervalStart: calendar.dateComponents([.hour, .minute, .second], from: start),
                                              intervalEnd: calendar.dateComponents([.hour, .minute, .second], from: start.addingTimeInterval(15 * 60)),
                                              repeats: false)
        do {
            try center.startMonitoring(DeviceActivityName(name), during: schedule)
        } catch {
            PluginRuntime.current?.logger.error("startMonitoring failed: \(error)")
        }
    }

    private func handled() {
        callbacksHandled += 1
        guard let runtime = PluginRuntime.current, let seq = runtime.currentEvent?.seq else { return }
        try? runtime.publish("x.\(runtime.name).handled", json: ["seq": .int(Int64(seq)), "inProcess": .int(Int64(callbacksHandled))])
    }
}

PluginHost.run {
    do {
        return EchoMonitor(defaults: try SharedDefaults.forPlugin())
    } catch {
        FileHandle.standardError.write(Data("fixture-echo-monitor: \(error)\n".utf8))
        exit(PluginExitStatus.configurationError)
    }
}
