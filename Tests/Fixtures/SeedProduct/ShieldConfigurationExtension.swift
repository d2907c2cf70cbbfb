// Manish Yadav's shield configuration (shared/seeds/003), as published, with the `import ManagedSettingsUI` it
// leaves out (an iOS compiler refuses it too without: ShieldConfigurationDataSource is ManagedSettingsUI's).
import ManagedSettings
import ManagedSettingsUI

class ShieldConfigurationExtension: ShieldConfigurationDataSource {
    override func configuration(shielding application: Application) -> ShieldConfiguration {
        let appName = application.localizedDisplayName ?? "" // Fetching the blocked app name
        
        return ShieldConfiguration(
            backgroundBlurStyle: .dark,
            backgroundColor: .black,
            icon: UIImage(named: "applogo.png"),
            title: ShieldConfiguration.Label(
                text: "\(appName) is Restricted",
                color: .white
            ),
            subtitle: ShieldConfiguration.Label(
                text: "You have reached your time limit for this app.",
                color: .white
            ),
            primaryButtonLabel: ShieldConfiguration.Label(
                text: "Close",
                color: .black
            ),
            primaryButtonBackgroundColor: .white,
            secondaryButtonLabel: nil
        )
    }
}
