// Speed Bump's shield: the day's mindful time is spent; the inner circle is a call away.

import Foundation
import ManagedSettingsUI
import ShieldBusSDK

/// Speed Bump's shield, with no re-block check of its own: a dismiss's cooldown ends in the monitor.
open class SpeedBumpShield: ReferenceShieldRenderer {
    open override func productShield(over what: String, kind: Kind) -> ShieldConfiguration {
        shield(title: "A speed bump", subtitle: "You've spent your mindful time on \(what) today. Your inner circle is a call away.",
               button: "Dismiss", buttonColor: ShieldColor(red: 0.35, green: 0.3, blue: 0.85))
    }
}
