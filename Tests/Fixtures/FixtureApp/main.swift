// fixture-app: a companion app for tests — asks for authorization, takes the picker's selection and shields it
// (apps and web domains) in the store `fixture` (--store NAME: that one), unless started with --no-block
// (--unauthorized: tries without asking for authorization); with --activities N it then starts monitoring N daily
// activities named <store>.a1 … <store>.aN, one request each.

import DeviceActivity
import FamilyControls
import Foundation
import ManagedSettings
import ShieldBusSDK

final class FixtureApp: App {
    override func didStart() {
        let store = option("--store") ?? "fixture"
        if !CommandLine.arguments.contains("--no-block") {
            do {
                if !CommandLine.arguments.contains("--unauthorized") { try AuthorizationCenter.shared.requestAuthorization(for: .individual) }
                let selection = try AuthorizationCenter.shared.pickActivities()
                try ManagedSettingsStore(named: .init(store)).shield.update { shield in
                    shield.applications = selection.applicationTokens
                    shield.webDomains = selection.webDomainTokens
                }
            } catch {
                PluginRuntime.current?.logger.error("fixture-app could not block: \(error)")
            }
        }
        let daily = DeviceActivitySchedule(intervalStart: DateComponents(hour: 0, minute: 0), intervalEnd: DateComponents(hour: 23, minute: 59), repeats: true)
        for index in 0..<(option("--activities").flatMap(Int.init) ?? 0) {
            do {
                try DeviceActivityCenter().startMonitoring(DeviceActivityName("\(store).a\(index + 1)"), during: daily)
            } catch {
                PluginRuntime.current?.logger.info("fixture-app: activity \(index + 1) refused: \(error)")
            }
        }
    }

    private func option(_ name: String) -> String? {
        CommandLine.arguments.firstIndex(of: name).flatMap { $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil }
    }
}

PluginHost.run { FixtureApp() }
