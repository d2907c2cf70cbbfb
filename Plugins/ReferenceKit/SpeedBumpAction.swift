// Speed Bump's shield buttons: Dismiss records a nudge that lets the app through for a cooldown.

import Foundation
import ManagedSettings
import ShieldBusSDK

/// Speed Bump's action delegate: the primary button dismisses the speed bump over the app the system hands over, and
/// the monitor pauses the count for the cooldown; when the nudge cannot be recorded the app closes.
open class SpeedBumpAction: ReferenceActionDelegate {
    open override func response(to action: ShieldAction, for application: ApplicationToken) -> ShieldActionResponse {
        guard action == .primaryButtonPressed else { return super.response(to: action, for: application) }
        // The token the system hands over now: valid even after an OS update regenerated the saved ones (Tether).
        return recordNudge(for: application) ? .defer : .close
    }

    /// Records a nudge: the app to unblock and the cooldown during which monitoring pauses.
    open func recordNudge(for application: ApplicationToken) -> Bool {
        recordIntent("the nudge", on: application, minutes: options.cooldownMinutes, countKey: SharedKey.nudgeCount,
                     applicationKey: SharedKey.nudgeApplication, endKey: SharedKey.nudgeCooldownUntil) { cooldownUntil, _ in
            try PluginRuntime.current?.publish(IntentTopic.nudge, json: ["cooldownUntil": .int(busTime(cooldownUntil))])
        }
    }
}
