// The Rork write-up's shield configuration (shared/seeds/002), as published: only its line breaks restored.
import ManagedSettings
import ManagedSettingsUI
import UIKit

class FocusShieldConfiguration: ShieldConfigurationDataSource {
    override func configuration(shielding application: Application) -> ShieldConfiguration {
        return ShieldConfiguration(
            backgroundBlurStyle: .systemThinMaterialDark,
            backgroundColor: UIColor(red: 0.08, green: 0.10, blue: 0.16, alpha: 1),
            icon: UIImage(named: "ShieldLeaf"),
            title: ShieldConfiguration.Label(
                text: "This is your focus time",
                color: .white
            ),
            subtitle: ShieldConfiguration.Label(
                text: "You chose to close this app during this window. Give it a few more minutes.",
                color: UIColor(white: 0.75, alpha: 1)
            ),
            primaryButtonLabel: ShieldConfiguration.Label(
                text: "Back to focus",
                color: .white
            ),
            primaryButtonBackgroundColor: UIColor(red: 0.20, green: 0.55, blue: 0.90, alpha: 1),
            secondaryButtonLabel: ShieldConfiguration.Label(
                text: "Open for 5 minutes",
                color: UIColor(white: 0.65, alpha: 1)
            )
        )
    }

    // Return this too when you block by category
    override func configuration(shielding application: Application, in category: ActivityCategory) -> ShieldConfiguration {
        return configuration(shielding: application)
    }
}
