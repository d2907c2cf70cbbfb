// Waits on child processes' descriptors (pidfd) for the first of them to end.

import BusClient
import CProcessControl
import Foundation

/// Waits for child processes to end on their process descriptors (pidfd), which turn readable at the end: a wait
/// for the plugins to stop returns as their last one ends, not at the next of periodic looks. A descriptor names its
/// process even once it is reaped; it is closed when its process is no longer asked about.
final class ProcessEnds {
    private var descriptors: [pid_t: Int32] = [:]

    /// Waits until one of `processes` (unreaped children) has ended, or `milliseconds` have passed (none given: it
    /// waits out the time). False, at once, when one of them cannot be watched.
    func awaitAny(of processes: [pid_t], milliseconds: Int) -> Bool {
        for (pid, descriptor) in descriptors where !processes.contains(pid) {
            Glibc.close(descriptor)
            descriptors[pid] = nil
        }
        var polled: [pollfd] = []
        for pid in processes {
            if descriptors[pid] == nil {
                let descriptor = shieldbus_process_descriptor(pid)
                guard descriptor >= 0 else { return false }  // no descriptor to spare
                descriptors[pid] = descriptor
            }
            polled.append(pollfd(fd: descriptors[pid]!, events: Int16(POLLIN), revents: 0))
        }
        let deadline = monotonicMilliseconds() + Int64(milliseconds)
        while true {
            let left = max(0, deadline - monotonicMilliseconds())
            let ready = poll(&polled, nfds_t(polled.count), Int32(clamping: left))
            if ready >= 0 { return true }
            // Any error but a signal: nothing was seen to end, so the caller falls back to its periodic looks rather
            // than taking this for a wake and asking again at once.
            if errno != EINTR { return false }
        }
    }

    func close() {
        for descriptor in descriptors.values { Glibc.close(descriptor) }
        descriptors = [:]
    }

    deinit { close() }
}
