// Focus Window's shield buttons: "Open for N minutes" records a grace pass on the app.

import Foundation
import ManagedSettings
import ShieldBusSDK

/// Focus Window's action delegate: the secondary button grants a grace pass, which the monitor honours by lifting
/// that app's shield until the pass ends.
open class FocusWindowAction: ReferenceActionDelegate {
    open override func response(to action: ShieldAction, for application: ApplicationToken) -> ShieldActionResponse {
        guard action == .secondaryButtonPressed else { return super.response(to: action, for: application) }
        return grantPass(to: application) ? .defer : .none
    }

    /// Records a grace pass for one app (the monitor lifts its shield until the pass ends), and tallies it.
    open func grantPass(to application: ApplicationToken) -> Bool {
        recordIntent("the grace pass", on: application, minutes: options.passMinutes, countKey: SharedKey.graceTally(on: DayKey.today()),
                     applicationKey: SharedKey.passApplication, endKey: SharedKey.passUntil) { until, tally in
            try PluginRuntime.current?.publish(IntentTopic.gracePass, json: ["until": .int(busTime(until)), "tallyToday": .int(Int64(tally))])
        }
    }
}
