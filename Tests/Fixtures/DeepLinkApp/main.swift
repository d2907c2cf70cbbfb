// fixture-deeplink-app: a test companion app that follows the pending deep link on every foreground (app.deeplink.outcome); --monitor-minutes N also monitors the picked apps and domains.

import BusProtocol
import DeviceActivity
import FamilyControls
import Foundation
import ReferenceKit
import ShieldBusSDK

final class DeepLinkApp: App {
    let group = DeepLinkApp.argument("--group") ?? "group.test.deeplink"

    override func didStart() {
        guard let minutes = Self.argument("--monitor-minutes").flatMap(Int.init) else { return }
        do {
            try AuthorizationCenter.shared.requestAuthorization(for: .individual)
            let selection = try AuthorizationCenter.shared.pickActivities()
            let event = DeviceActivityEvent(applications: selection.applicationTokens, categories: selection.categoryTokens,
                                            webDomains: selection.webDomainTokens, threshold: DateComponents(minute: minutes))
            try DeviceActivityCenter().startMonitoring(DeviceActivityName("daily"),
                                                       during: DeviceActivitySchedule(intervalStart: DateComponents(hour: 0, minute: 0),
                                                                                      intervalEnd: DateComponents(hour: 23, minute: 59), repeats: true),
                                                       events: [DeviceActivityEvent.Name("limit"): event])
        } catch {
            PluginRuntime.current?.logger.error("fixture-deeplink-app could not start monitoring: \(error)")
        }
    }

    override func willEnterForeground() {
        var body: [String: JSONValue]
        do {
            switch try followPendingDeepLink(in: SharedDefaults.forPlugin(suiteName: group)) {
            case .opened(let route): body = ["outcome": "opened", "route": .string(route.route), "url": .string(route.url)]
            case .expired(let route): body = ["outcome": "expired", "route": .string(route.route), "url": .string(route.url)]
            case .none: body = ["outcome": "none"]
            }
        } catch {
            body = ["outcome": "failed", "error": .string("\(error)")]
        }
        try? PluginRuntime.current?.publish("app.deeplink.outcome", json: .object(body))
    }

    static func argument(_ name: String) -> String? {
        let arguments = CommandLine.arguments
        return arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
    }
}

PluginHost.run { DeepLinkApp() }
