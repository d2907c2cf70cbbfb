// A shield action whose answer takes work: a Task uses CPU, then calls the completion handler.
import FixtureWork
import Foundation
import ManagedSettings

final class SlowAction: ShieldActionDelegate {
    /// The CPU the answer takes, in ms: longer than the OS's deadline the test sets.
    static let work: Int64 = 1_500

    override func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        Task.detached {
            spin(cpuMilliseconds: Self.work)
            completionHandler(.close)
        }
    }
}
