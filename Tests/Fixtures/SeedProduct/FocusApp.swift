// The product's app: authorization, the person's pick kept in the App Group as apps keep it, and the shield.
import FamilyControls
import Foundation
import ManagedSettings
import os
import ShieldBusSDK

final class FocusApp: App {
    private let logger = Logger(subsystem: "com.example.focus", category: "app")

    override func didStart() {
        do {
            try AuthorizationCenter.shared.requestAuthorization(for: .individual)
            let selection = try AuthorizationCenter.shared.pickActivities()
            UserDefaults(suiteName: "group.com.example.focus.shield")?.set(try JSONEncoder().encode(selection), forKey: "selection")
            updateRestrictions(for: selection)
        } catch {
            logger.error("cannot set up: \(String(describing: error), privacy: .public)")
        }
    }
}
