import BedtimeKit
import DeviceActivity
import Foundation
import MonitorKit
import ShieldBusSDK

/// The app: authorization, the person's pick, the schedules — at every start, and again after an approval (a
/// revocation stops them) or once a failed set-up can pass (`MonitoredProductApp`) — and "skip tonight".
final class BedtimeApp: MonitoredProductApp {
    init() {
        super.init(product: Bedtime.product)
    }

    override var schedules: [DeviceActivityName: DeviceActivitySchedule] {
        [Bedtime.nightly: DeviceActivitySchedule(intervalStart: Bedtime.night.startComponents, intervalEnd: Bedtime.night.endComponents, repeats: true)]
    }

    override func actionTapped(_ action: String) {
        guard action == "skip-tonight", let defaults = Bedtime.product.defaults() else { return }
        do {
            try defaults.set(Bedtime.now.timeIntervalSince1970, forKey: Bedtime.skipKey)
            Bedtime.product.wakeTheMonitor()
        } catch {
            PluginRuntime.current?.logger.error("cannot skip tonight: \(error)")
        }
    }
}
