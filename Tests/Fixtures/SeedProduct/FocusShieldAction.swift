// The Rork write-up's shield action (shared/seeds/002), as published: only its line breaks restored.
import ManagedSettings
import Foundation

class FocusShieldAction: ShieldActionDelegate {
    private let appGroup = "group.com.example.focus.shield"

    override func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        switch action {
        case .primaryButtonPressed:
            // "Back to focus" -> just close the screen
            completionHandler(.close)
        case .secondaryButtonPressed:
            // "Open for 5 minutes" -> record a grace window, then defer
            grantTemporaryPass(minutes: 5)
            completionHandler(.defer)
        @unknown default:
            completionHandler(.none)
        }
    }

    private func grantTemporaryPass(minutes: Int) {
        let defaults = UserDefaults(suiteName: appGroup)
        let until = Date().addingTimeInterval(TimeInterval(minutes * 60))
        defaults?.set(until.timeIntervalSince1970, forKey: "passUntil")
        // The actual unshielding happens in the monitor (DeviceActivityMonitor), reading passUntil
    }
}
