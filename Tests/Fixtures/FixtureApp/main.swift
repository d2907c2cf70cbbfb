// fixture-app: a companion app for tests — asks for authorization, takes the picker's selection and shields it
// (apps and web domains) in the store `fixture`, unless started with --no-block.

import Foundation
import ShieldBusSDK

final class FixtureApp: App {
    override func didStart() {
        guard !CommandLine.arguments.contains("--no-block") else { return }
        do {
            try AuthorizationCenter.shared.requestAuthorization(for: .individual)
            let selection = try AuthorizationCenter.shared.pickActivities()
            try ManagedSettingsStore(named: "fixture").shield.update { shield in
                shield.applications = selection.applicationTokens
                shield.webDomains = selection.webDomainTokens
            }
        } catch {
            PluginRuntime.current?.logger.error("fixture-app could not block: \(error)")
        }
    }
}

PluginHost.run { FixtureApp() }
