// The product's monitor, written as iOS extension code is: the pass that the seed's action records (`passUntil`,
// through UserDefaults and Date()) lifts the shield while it runs and puts it back when it ends.
import DeviceActivity
import FamilyControls
import Foundation
import ManagedSettings
import os

class FocusPassMonitor: DeviceActivityMonitor {
    static let pass = DeviceActivityName("pass")
    private let appGroup = "group.com.example.focus.shield"
    private let logger = Logger(subsystem: "com.example.focus", category: "monitor")

    override func intervalDidStart(for activity: DeviceActivityName) {
        guard activity == Self.pass, let defaults = UserDefaults(suiteName: appGroup) else { return }
        let passUntil = Date(timeIntervalSince1970: defaults.double(forKey: "passUntil"))
        guard Date() < passUntil else { return }
        logger.info("pass until \(passUntil, privacy: .public): lifting the shield")
        unblockApps()
    }

    override func intervalDidEnd(for activity: DeviceActivityName) {
        guard activity == Self.pass, let defaults = UserDefaults(suiteName: appGroup) else { return }
        let passUntil = Date(timeIntervalSince1970: defaults.double(forKey: "passUntil"))
        // A later pass runs on (callbacks come on whole minutes: a minute's leeway).
        guard Date().addingTimeInterval(60) >= passUntil else { return }
        guard let data = defaults.data(forKey: "selection"),
              let selection = try? JSONDecoder().decode(FamilyActivitySelection.self, from: data) else {
            logger.error("no selection to shield again")
            return
        }
        logger.info("the pass ended at \(passUntil, privacy: .public): shielding again")
        updateRestrictions(for: selection)
    }
}
