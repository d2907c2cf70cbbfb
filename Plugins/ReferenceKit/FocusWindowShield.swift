// Focus Window's shield: the passes used, the offer of one more, and the take-back of a pass that ended.

import Foundation
import ManagedSettingsUI
import ShieldBusSDK

/// Focus Window's shield: "back to focus", or a grace pass on the app (a site's shield offers none); after each
/// request it shields again the app of a pass that ended.
open class FocusWindowShield: ReferenceShieldRenderer {
    /// A pass that ended but was not yet taken back: take it back now.
    open override func productReblockCheck() throws {
        if let raw = try defaults.string(forKey: SharedKey.passApplication),
           let until = try defaults.double(forKey: SharedKey.passUntil), until <= now.timeIntervalSince1970 {
            try shields.reshield(application: ApplicationToken(rawValue: raw))
        }
    }

    open override func productShield(over what: String, kind: Kind) -> ShieldConfiguration {
        let today = DayKey.today()
        let used = (try? defaults.integer(forKey: SharedKey.graceTally(on: today))) ?? 0
        let usedYesterday = DayKey.dayBefore(today).flatMap { (try? defaults.integer(forKey: SharedKey.graceTally(on: $0))) ?? nil } ?? 0
        var subtitle = "You chose to close \(what) during this window. Passes used today: \(used)."
        // The morning after, the tally is reflected back (the Rork write-up).
        if usedYesterday > 0 && used == 0 { subtitle += " Yesterday you used \(usedYesterday)." }
        return shield(title: "This is your focus time", subtitle: subtitle, button: "Back to focus", buttonColor: ShieldColor(red: 0.2, green: 0.55, blue: 0.9),
                      secondButton: kind == .web ? nil : "Open for \(options.passMinutes) minutes")
    }
}
