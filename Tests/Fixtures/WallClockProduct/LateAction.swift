// A shield action that answers later, as iOS allows: from a Task, and from the main queue after a delay.
import Foundation
import ManagedSettings

final class LateAction: ShieldActionDelegate {
    override func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        switch action {
        case .primaryButtonPressed:
            Task.detached {
                try? await Task.sleep(nanoseconds: 20_000_000)
                completionHandler(.close)
            }
        case .secondaryButtonPressed:
            DispatchQueue.main.asyncAfter(deadline: .now() + 0.02) { completionHandler(.defer) }
        }
    }
}
