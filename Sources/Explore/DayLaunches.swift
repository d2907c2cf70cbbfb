import CProcessControl
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The days in play and their `shieldbus run` processes, so that an explore told to stop (SIGINT, SIGTERM) starts no
/// more, ends those running and knows when none is left, before it removes their folders.
///
/// Each process is signalled through a process descriptor (pidfd), under the lock that `exited` closes it with: a
/// process already reaped is not there to be signalled, and its pid, perhaps another process's by then, is never
/// signalled.
final class DayLaunches: Sendable {
    private struct State {
        var stopping = false
        var inPlay = 0
        /// The running days' processes: pid → its process descriptor (-1 when the kernel gave none: a kernel before
        /// pidfd_open, where the pid is all there is).
        var processes: [pid_t: Int32] = [:]

        func signalAll(_ signal: Int32) {
            for (pid, descriptor) in processes { signalOne(pid, descriptor, signal) }
        }

        func signalOne(_ pid: pid_t, _ descriptor: Int32, _ signal: Int32) {
            _ = descriptor >= 0 ? shieldbus_signal_process(descriptor, signal) : kill(pid, signal)
        }
    }

    private let state = Mutex(State())

    /// A day is about to be played; false once the explore is stopping (the day is not played).
    func begin() -> Bool {
        state.withLock { state in
            guard !state.stopping else { return false }
            state.inPlay += 1
            return true
        }
    }

    /// The day's process started: stopped at once when the explore is stopping meanwhile.
    /// (A day's process is reaped only after it exits, and a reused pid needs the kernel to hand out every other pid
    /// first: one that exited at once is found gone here, and one still running is the one started.)
    func started(_ pid: pid_t) {
        state.withLock { state in
            let descriptor = shieldbus_process_descriptor(pid)
            // Already ended and reaped (a run that failed at once): nothing to signal, and its pid is not ours now.
            guard descriptor >= 0 || errno != ESRCH else { return }
            state.processes[pid] = descriptor
            if state.stopping { state.signalOne(pid, descriptor, SIGTERM) }
        }
    }

    /// The day's process started with `descriptor` already open on it (by the broker template, its parent, before
    /// reaping it: -1 when the kernel gave none): stopped at once when the explore is stopping meanwhile.
    func started(_ pid: pid_t, descriptor: Int32) {
        state.withLock { state in
            state.processes[pid] = descriptor
            if state.stopping { state.signalOne(pid, descriptor, SIGTERM) }
        }
    }

    /// Whether the explore is stopping (a day that could not be played is then not played again).
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// The day's process ended and was reaped.
    func exited(_ pid: pid_t) {
        state.withLock { state in
            if let descriptor = state.processes.removeValue(forKey: pid), descriptor >= 0 { close(descriptor) }
        }
    }

    /// The day is over (its folder removed); whether the explore goes on — false once it is stopping, when the day's
    /// outcome, that of a run cut short, must not be reported.
    func end() -> Bool {
        state.withLock { state in
            state.inPlay -= 1
            return !state.stopping
        }
    }

    /// Starts no more days and asks the running ones' processes to stop (SIGTERM: a broker then stops its plugins);
    /// waits until no day is in play, killing what is left after `timeout`.
    func stopAll(timeout: TimeInterval) {
        state.withLock { state in
            state.stopping = true
            state.signalAll(SIGTERM)
        }
        if waitUntilNoneInPlay(deadline: Date().addingTimeInterval(timeout)) { return }
        state.withLock { $0.signalAll(SIGKILL) }
        _ = waitUntilNoneInPlay(deadline: Date().addingTimeInterval(5))
    }

    private func waitUntilNoneInPlay(deadline: Date) -> Bool {
        while state.withLock({ $0.inPlay > 0 }) {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }
}
