import Foundation

/// Nanoseconds on the monotonic clock: one clock shared by every thread, so a publish on one thread and an
/// arrival on another can be subtracted.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// Nanoseconds of CPU time on a CPU-time clock (a thread's, or the whole process's); nil if the clock is gone.
func cpuNanoseconds(_ clock: clockid_t) -> UInt64? {
    var used = timespec()
    guard clock_gettime(clock, &used) == 0 else { return nil }
    return UInt64(used.tv_sec) * 1_000_000_000 + UInt64(used.tv_nsec)
}

/// A thread running one closure, which the starter can wait for (Foundation's Thread has no join).
// Its state is read and written under `lock` only.
final class Worker: @unchecked Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var failure: Error?
    private var done = false
    /// The thread's CPU-time clock, so another thread can read how much CPU it has used so far.
    private var cpuClock: clockid_t?
    /// The CPU time it had used when the closure returned (its clock is gone once the thread ends).
    private var finalCPU: UInt64 = 0

    /// Starts `body` on a new thread at once.
    init(_ name: String, _ body: @escaping () throws -> Void) {
        // Handed to the new thread once, and run there alone.
        nonisolated(unsafe) let body = body
        let thread = Thread { [self] in
            Worker.nameKernelThread(name)
            var clock = clockid_t()
            if pthread_getcpuclockid(pthread_self(), &clock) == 0 { lock.withLock { cpuClock = clock } }
            var thrown: Error?
            do { try body() } catch { thrown = error }
            let used = cpuNanoseconds(CLOCK_THREAD_CPUTIME_ID) ?? 0
            lock.withLock { failure = thrown; done = true; finalCPU = used }
            finished.signal()
        }
        thread.start()
    }

    /// Names the calling thread for the kernel (15 bytes at most), so `perf report --sort comm` and `top -H` tell
    /// the threads apart. Through /proc because pthread_setname_np and prctl are not visible to Swift here.
    private static func nameKernelThread(_ name: String) {
        let file = open("/proc/thread-self/comm", O_WRONLY)
        guard file >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        close(file)
    }

    /// CPU time the thread has used so far (all of it, once the closure has returned).
    var cpuTime: UInt64 {
        let (finished, clock, final) = lock.withLock { (done, cpuClock, finalCPU) }
        if finished { return final }
        guard let clock else { return 0 }
        // The thread may end between the two reads; then its clock is gone but its final figure is set.
        return cpuNanoseconds(clock) ?? lock.withLock { finalCPU }
    }

    /// Whether the closure has returned (without waiting).
    var hasFinished: Bool { lock.withLock { done } }

    /// Waits for the closure to return and rethrows what it threw.
    func join() throws {
        finished.wait()
        finished.signal()  // so that a second join returns too
        if let failure = lock.withLock({ failure }) { throw failure }
    }
}

/// Something that went wrong in a run, said plainly.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
