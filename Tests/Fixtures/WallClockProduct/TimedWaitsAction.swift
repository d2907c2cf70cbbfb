// A shield action that waits as extension code does — on a semaphore, a condition, a wall-clock timer, a call to the
// OS from another thread — while the device clock is far from the host's: it closes the app only when each wait took
// the time it asked for (and the timer fired), and says on standard error what each took.
import Foundation
import ManagedSettings

final class TimedWaitsAction: ShieldActionDelegate {
    /// What each wait asks for, in seconds.
    static let wait = 0.05

    override func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        DispatchQueue.global().async {
            let waits: [(name: String, body: () -> Void)] = [
                ("semaphore", { _ = DispatchSemaphore(value: 0).wait(timeout: .now() + Self.wait) }),
                ("semaphore, wall time", { _ = DispatchSemaphore(value: 0).wait(wallTimeout: .now() + Self.wait) }),
                ("condition", {
                    let condition = NSCondition()
                    condition.lock()
                    _ = condition.wait(until: Date().addingTimeInterval(Self.wait))
                    condition.unlock()
                }),
                ("wall-clock timer", {
                    let fired = DispatchSemaphore(value: 0)
                    DispatchQueue.global().asyncAfter(wallDeadline: .now() + Self.wait) { fired.signal() }
                    _ = fired.wait(timeout: .now() + 30)
                }),
            ]
            // One after another (the timer's handler needs a free thread of Dispatch's pool), within the OS's 1 s.
            let took = Dictionary(uniqueKeysWithValues: waits.map { ($0.name, Self.timed($0.body)) })
            // The OS's answer waited for on this thread, while the plugin's thread makes the call.
            let read = Result { try ManagedSettingsStore().shield.current() }
            // A wait's deadline is read from the wall clock and the wait timed by the monotonic one: they differ by a
            // little. A wall-clock timer comes due by the device clock, which may run faster than the host's.
            let fine = took.allSatisfy { $0.value < 5 && ($0.key == "wall-clock timer" || $0.value >= Self.wait * 0.9) }
            let said = took.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.3f", $0.value)) s" }.joined(separator: ", ")
            FileHandle.standardError.write(Data("timed waits: \(said); a read from another thread: \(read)\n".utf8))
            completionHandler(fine && (try? read.get()) != nil ? .close : .defer)
        }
    }

    /// The host's seconds `body` took (monotonic: not the device clock).
    private static func timed(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
