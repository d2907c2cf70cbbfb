// The seed's action as the product uses it: after its pass is recorded, the monitor is asked to run the pass (an
// interval ending when it does), since iOS wakes a monitor only for its schedules.
import DeviceActivity
import Foundation
import ManagedSettings
import os

class FocusPassAction: FocusShieldAction {
    private let logger = Logger(subsystem: "com.example.focus", category: "action")

    override func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        super.handle(action: action, for: application) { response in
            if action == .secondaryButtonPressed { self.monitorThePass() }
            // As iOS allows: the answer comes later, from the main queue.
            DispatchQueue.main.async { completionHandler(response) }
        }
    }

    private func monitorThePass() {
        let passUntil = UserDefaults(suiteName: "group.com.example.focus.shield")?.double(forKey: "passUntil") ?? 0
        guard passUntil > 0 else { return }
        let end = Date(timeIntervalSince1970: passUntil)
        // The shortest interval iOS accepts, begun in the past: it starts at once and ends with the pass.
        let start = end.addingTimeInterval(-15 * 60)
        let parts: Set<Calendar.Component> = [.year, .month, .day, .hour, .minute, .second]
        let schedule = DeviceActivitySchedule(intervalStart: Calendar.current.dateComponents(parts, from: start),
                                              intervalEnd: Calendar.current.dateComponents(parts, from: end), repeats: false)
        do {
            try DeviceActivityCenter().startMonitoring(FocusPassMonitor.pass, during: schedule)
        } catch {
            logger.error("cannot monitor the pass: \(String(describing: error), privacy: .public)")
        }
    }
}
