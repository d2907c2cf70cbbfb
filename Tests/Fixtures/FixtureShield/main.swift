// fixture-shield: a shield renderer for tests — a recognisable configuration, or (--hang) one that never answers.

import Foundation
import ShieldBusSDK

final class FixtureShield: ShieldConfigurationDataSource {
    let hangs = CommandLine.arguments.contains("--hang")

    override func configuration(shielding application: Application) -> ShieldConfiguration {
        if hangs {
            signal(SIGTERM, SIG_DFL)  // so stopping the broker still ends this process at once
            while true { pause() }
        }
        return ShieldConfiguration(
            backgroundColor: ShieldColor(red: 0.1, green: 0.1, blue: 0.2, alpha: 1),
            title: ShieldConfiguration.Label(text: "Fixture shield: \(application.localizedDisplayName ?? "?")", color: .white),
            primaryButtonLabel: ShieldConfiguration.Label(text: "Close", color: .white)
        )
    }

    override func configuration(shielding application: Application, in category: ActivityCategory) -> ShieldConfiguration {
        ShieldConfiguration(title: ShieldConfiguration.Label(text: "Fixture category shield: \(category.localizedDisplayName ?? "?")", color: .white))
    }

    override func configuration(shielding webDomain: WebDomain) -> ShieldConfiguration {
        ShieldConfiguration(title: ShieldConfiguration.Label(text: "Fixture web shield: \(webDomain.domain ?? "?")", color: .white))
    }
}

PluginHost.run { FixtureShield() }
