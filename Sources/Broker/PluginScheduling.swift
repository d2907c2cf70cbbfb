import BusProtocol
import CProcessControl
import Glibc

/// The Linux scheduling a plugin process starts with, from its QoS class: what the person waits on keeps the
/// broker's own; utility work is niced, so that it yields a core to the person's next request; background work runs
/// only when a core would otherwise idle (SCHED_IDLE). The broker never gives a plugin more than its own: an
/// unprivileged process can lower its priority but not raise it (nor leave SCHED_IDLE), so a plugin cannot undo what
/// it was given — the kernel's rule, not the SDK's.
public struct PluginScheduling: Equatable, Sendable {
    /// Added to the broker's nice value (the kernel keeps the sum at most 19).
    public let niceIncrement: Int32
    /// SCHED_OTHER or SCHED_IDLE.
    public let policy: Int32

    public init(_ qos: QoSClass) {
        switch qos {
        case .userInteractive, .userInitiated: (niceIncrement, policy) = (0, Int32(SCHED_OTHER))
        case .utility: (niceIncrement, policy) = (10, Int32(SCHED_OTHER))
        case .background: (niceIncrement, policy) = (19, SHIELDBUS_SCHED_IDLE)
        }
    }
}
