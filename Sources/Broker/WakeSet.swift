import CProcessControl
import Foundation

/// The descriptors whose readiness wakes the broker's loop besides its peers — the signal pipe, each launch
/// template's channel — gathered in one epoll set, itself one descriptor the transport's poller watches (the poller
/// is made once; templates come and go).
final class WakeSet {
    let descriptor: Int32

    init() {
        descriptor = shieldbus_watch_set()
        precondition(descriptor >= 0, "epoll_create1 failed: \(String(cString: strerror(errno)))")
    }

    /// Wakes the loop while `watched` is readable (a closed descriptor leaves the set by itself).
    func watch(_ watched: Int32) {
        _ = shieldbus_watch(descriptor, watched)
    }

    func close() {
        Glibc.close(descriptor)
    }
}
