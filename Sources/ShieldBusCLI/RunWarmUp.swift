// RunWarmUp: an executed run's first uses of the serving loop and the device OS, made on a thread of their own while the
// run is planned on the main thread.
import Broker
import DeviceOS
import Foundation

/// A run's broker, until its plugins start, keeps one core busy and leaves the other idle: reading its options, its
/// configuration and scenario, making its stores. The first uses its serving loop and device OS make later — each
/// generic type's metadata and the scan of the program's conformance records for its requirements, each body's coding
/// containers — are what explore's broker template makes once for its days (`BrokerWarmUp`, `DeviceOSWarmUp`, the
/// summary's number formatting); here they are made on that idle core, so that the loop's first events, on the run's
/// critical path, find them made. The runtime's caches are shared by every thread and safe to fill from any.
///
/// Safe for the same reasons as in the template: those warm-ups code only values they make and keep nothing, touch no
/// store, bus, clock, file or setting, and draw no randomness; what stays behind is the runtime's caches of the
/// program's types, the same whichever thread made them (the journal is the same byte for byte). A day forked from the
/// template has them made already and starts none.
final class RunWarmUp: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// Whether `finish` waited already.
    private var finished = false

    /// Starts the warm-up on a thread of its own.
    init() {
        Thread.detachNewThread { [done] in
            Self.warm()
            done.signal()
        }
    }

    /// What the thread makes: what explore's broker template makes for its days but the readings of a configuration.
    static func warm() {
        BrokerWarmUp.run()
        DeviceOSWarmUp.run()
        _ = String(format: "%.2f", 0.0)
    }

    /// Waits for the thread, so that no warm-up runs on while the process ends. From the thread that made this, as
    /// often as asked.
    func finish() {
        guard !finished else { return }
        done.wait()
        finished = true
    }
}
