import ManagedSettings
import ManagedSettingsUI
import UIKit

/// One shield for every profile: no second button — breaks and ending early happen in the app, where the person
/// sees which profile is on.
final class ProfilesShield: ShieldConfigurationDataSource {
    override func configuration(shielding application: Application) -> ShieldConfiguration {
        ShieldConfiguration(
            backgroundBlurStyle: .systemThinMaterialDark,
            backgroundColor: UIColor(red: 0.10, green: 0.12, blue: 0.12, alpha: 1),
            title: ShieldConfiguration.Label(text: "A profile is on", color: .white),
            subtitle: ShieldConfiguration.Label(text: "Open Profiles to take a break or end the evening.", color: UIColor(white: 0.75, alpha: 1)),
            primaryButtonLabel: ShieldConfiguration.Label(text: "OK", color: .white),
            primaryButtonBackgroundColor: UIColor(red: 0.20, green: 0.50, blue: 0.45, alpha: 1)
        )
    }

    override func configuration(shielding application: Application, in category: ActivityCategory) -> ShieldConfiguration {
        configuration(shielding: application)
    }
}

/// "OK" closes the app.
final class ProfilesAction: ShieldActionDelegate {
    override func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(.close)
    }

    override func handle(action: ShieldAction, for webDomain: WebDomainToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(.close)
    }

    override func handle(action: ShieldAction, for category: ActivityCategoryToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(.close)
    }
}
