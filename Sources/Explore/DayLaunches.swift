import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The days in play and their `shieldbus run` processes, so that an explore told to stop (SIGINT, SIGTERM) starts no
/// more, ends those running and knows when none is left, before it removes their folders.
final class DayLaunches: Sendable {
    private struct State {
        var stopping = false
        var inPlay = 0
        var processes: Set<pid_t> = []
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
    func started(_ pid: pid_t) {
        let stopping = state.withLock { state in
            state.processes.insert(pid)
            return state.stopping
        }
        if stopping { kill(pid, SIGTERM) }
    }

    /// The day's process ended.
    func exited(_ pid: pid_t) {
        state.withLock { _ = $0.processes.remove(pid) }
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
        let running = state.withLock { state in
            state.stopping = true
            return state.processes
        }
        for pid in running { kill(pid, SIGTERM) }
        if waitUntilNoneInPlay(deadline: Date().addingTimeInterval(timeout)) { return }
        for pid in state.withLock({ $0.processes }) { kill(pid, SIGKILL) }
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
