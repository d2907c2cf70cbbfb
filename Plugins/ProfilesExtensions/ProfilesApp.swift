import Foundation
import MonitorKit
import ShieldBusSDK

/// The app: authorization, the pick and the schedules — at every start, after an approval and once a failed set-up
/// can pass (`MonitoredProductApp`) — and the person's controls: start and stop deep work, end the evening, take a break.
final class ProfilesApp: MonitoredProductApp {
    init() {
        super.init(product: Profiles.product)
    }

    override func actionTapped(_ action: String) {
        guard let defaults = Profiles.product.defaults() else { return }
        let now = Profiles.now.timeIntervalSince1970
        do {
            switch action {
            case "start-deep-work": try defaults.set(true, forKey: Profiles.sessionKey)
            case "stop-deep-work": try defaults.set(false, forKey: Profiles.sessionKey)
            case "end-evening": try defaults.set(now, forKey: Profiles.endedEveningKey)
            case "take-a-break": try defaults.set(now, forKey: Profiles.breakKey)
            default: return
            }
            Profiles.product.wakeTheMonitor()
        } catch {
            PluginRuntime.current?.logger.error("cannot record \(action): \(error)")
        }
    }
}
