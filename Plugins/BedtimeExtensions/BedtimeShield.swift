import BedtimeKit
import Foundation
import ManagedSettings
import ManagedSettingsUI
import MonitorKit
import ShieldBusSDK
import UIKit

/// The night's shield: "five more minutes" while tonight has passes left, and no second button once they are used
/// (a press on a button the shield does not draw does nothing).
final class BedtimeShield: ShieldConfigurationDataSource {
    override func configuration(shielding application: Application) -> ShieldConfiguration {
        let left = Bedtime.flaw == "uncapped" ? Bedtime.passesPerNight : passesLeft()
        return ShieldConfiguration(
            backgroundBlurStyle: .systemThinMaterialDark,
            backgroundColor: UIColor(red: 0.05, green: 0.06, blue: 0.15, alpha: 1),
            title: ShieldConfiguration.Label(text: "Bedtime", color: .white),
            subtitle: ShieldConfiguration.Label(text: "Your apps rest until 06:30.", color: UIColor(white: 0.75, alpha: 1)),
            primaryButtonLabel: ShieldConfiguration.Label(text: "Good night", color: .white),
            primaryButtonBackgroundColor: UIColor(red: 0.30, green: 0.30, blue: 0.70, alpha: 1),
            secondaryButtonLabel: left > 0 ? ShieldConfiguration.Label(text: "5 more minutes (\(left) left tonight)", color: UIColor(white: 0.65, alpha: 1)) : nil
        )
    }

    override func configuration(shielding application: Application, in category: ActivityCategory) -> ShieldConfiguration {
        configuration(shielding: application)
    }

    /// Tonight's passes not yet used (read only: the action's slice).
    private func passesLeft() -> Int {
        guard let defaults = Bedtime.product.defaults(),
              let night = Bedtime.night.occurrenceStart(containing: Bedtime.now, zones: ZoneHistory(defaults: defaults).reader()) else { return Bedtime.passesPerNight }
        return max(0, Bedtime.passesPerNight - (((try? defaults.integer(forKey: Bedtime.passCountKey(night: night))) ?? nil) ?? 0))
    }
}
