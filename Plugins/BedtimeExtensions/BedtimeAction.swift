import BedtimeKit
import Foundation
import ManagedSettings
import MonitorKit
import ShieldBusSDK

/// The shield's buttons: "Good night" closes the app; "5 more minutes" records a pass on that app — at most twice a
/// night — and the monitor lifts it (an action never lifts a shield itself). A press past the cap closes the app.
final class BedtimeAction: ShieldActionDelegate {
    override func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        guard action == .secondaryButtonPressed else { return completionHandler(.close) }
        completionHandler(grantAPass(to: application) ? .defer : .close)
    }

    override func handle(action: ShieldAction, for webDomain: WebDomainToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(.close)
    }

    override func handle(action: ShieldAction, for category: ActivityCategoryToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(.close)
    }

    /// Counts the pass against tonight and records it, in one transaction; false when tonight's are used up.
    private func grantAPass(to application: ApplicationToken) -> Bool {
        let now = Bedtime.now
        // Tonight as the monitor keeps it: in the zones the device was in (after travel, a new night is another).
        guard let defaults = Bedtime.product.defaults(),
              let night = Bedtime.night.occurrenceStart(containing: now, zones: ZoneHistory(defaults: defaults).reader()) else { return false }
        let countKey = Bedtime.passCountKey(night: night)
        do {
            return try defaults.transaction { tx -> Bool in
                let used = try tx.integer(forKey: countKey) ?? 0
                guard Bedtime.flaw == "uncapped" || used < Bedtime.passesPerNight else { return false }
                _ = try tx.set(used + 1, forKey: countKey)
                _ = try tx.set(application.rawValue, forKey: Bedtime.passAppKey)
                _ = try tx.set(now.addingTimeInterval(Double(Bedtime.passMinutes) * 60).timeIntervalSince1970, forKey: Bedtime.passUntilKey)
                return true
            }.value
        } catch {
            PluginRuntime.current?.logger.error("cannot record the pass: \(error)")
            return false
        }
    }
}
