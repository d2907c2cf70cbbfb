import CDeviceClock
import Foundation
import XCTest

/// The C library's timed waits take an absolute real-time deadline, which the kernel measures by the host's clock. Read
/// from a device clock far from the host's, such a deadline still lasts the time asked for (`timed_waits.c`): here on
/// a thread whose own device clock is set, as a hosted plugin's is (a plugin process sets the process's, as the wall
/// timer's test does).
final class DeviceClockTimedWaitTests: XCTestCase {
    /// What each wait asks for, in seconds.
    static let wait = 0.1

    func testWaitsOnTheRealTimeClockLastTheTimeAskedForWhateverTheDeviceClockSays() throws {
        let held = HeldMutex()  // held by this thread: the other's timed lock waits out its deadline
        var everyWaitEnded = false
        // A wait still going on may be the timed lock's: its mutex is then left as it is.
        defer { if everyWaitEnded { held.release() } }
        let waits: [(String, @Sendable () -> Void)] = [
            ("DispatchSemaphore.wait(timeout:)", { _ = DispatchSemaphore(value: 0).wait(timeout: .now() + Self.wait) }),
            ("DispatchSemaphore.wait(wallTimeout:)", { _ = DispatchSemaphore(value: 0).wait(wallTimeout: .now() + Self.wait) }),
            ("NSCondition.wait(until:)", {
                let condition = NSCondition()
                condition.lock()
                _ = condition.wait(until: Date().addingTimeInterval(Self.wait))
                condition.unlock()
            }),
            ("sem_timedwait", {
                var semaphore = sem_t()
                sem_init(&semaphore, 0, 0)
                var deadline = Self.realTime(after: Self.wait)
                _ = sem_timedwait(&semaphore, &deadline)
                sem_destroy(&semaphore)
            }),
            ("pthread_mutex_timedlock", {
                var deadline = Self.realTime(after: Self.wait)
                if pthread_mutex_timedlock(held.mutex, &deadline) == 0 { pthread_mutex_unlock(held.mutex) }
            }),
            ("clock_nanosleep(TIMER_ABSTIME)", {
                var deadline = Self.realTime(after: Self.wait)
                _ = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &deadline, nil)
            }),
        ]
        // 1990, years behind the host; and 2100, years ahead of it.
        for deviceSeconds in [631_152_000, 4_102_444_800] as [Int64] {
            for (name, body) in waits {
                let took = try XCTUnwrap(Self.timed(onThreadWithDeviceClockAt: deviceSeconds, body), "\(name) at \(deviceSeconds): still waiting after 5 s")
                XCTAssertGreaterThanOrEqual(took, Self.wait * 0.9, "\(name) at \(deviceSeconds): over too soon")
                XCTAssertLessThan(took, 3, "\(name) at \(deviceSeconds)")
            }
        }
        everyWaitEnded = true
    }

    /// A wall-clock timer comes due when the device clock reaches it: held still (virtual time), not before the clock is
    /// set again, and then at once — an hour's timer does not wait an hour of the host's time.
    func testAWallClockTimerFiresWhenTheProcesssDeviceClockIsSetPastIt() {
        let start: Int64 = 1_795_411_800  // 2026-11-23 06:30 UTC
        shieldbus_device_clock_set(start * 1_000_000_000, 0)
        defer { shieldbus_device_clock_clear() }
        let fired = DispatchSemaphore(value: 0)
        let cpuBefore = Self.processCPUSeconds()
        DispatchQueue.global().asyncAfter(wallDeadline: .now() + 3_600) { fired.signal() }
        XCTAssertEqual(fired.wait(timeout: .now() + 0.3), .timedOut, "not due while the clock holds still")
        shieldbus_device_clock_set((start + 1_800) * 1_000_000_000, 0)
        XCTAssertEqual(fired.wait(timeout: .now() + 0.3), .timedOut, "not due half an hour on")
        // A timer armed for a host time already past would wake Dispatch again and again meanwhile, a core's worth.
        XCTAssertLessThan(Self.processCPUSeconds() - cpuBefore, 0.2, "the process waited, not spun")
        shieldbus_device_clock_set((start + 3_601) * 1_000_000_000, 0)
        XCTAssertEqual(fired.wait(timeout: .now() + 5), .success, "due once the clock is set past it")
    }

    /// A condition on the monotonic clock takes deadlines on that clock, which the device clock does not touch.
    func testADeadlineOnTheMonotonicClockIsNotMoved() throws {
        let took = try XCTUnwrap(Self.timed(onThreadWithDeviceClockAt: 631_152_000) {
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            var condition = pthread_cond_t()
            pthread_cond_init(&condition, &attributes)
            var mutex = pthread_mutex_t()
            pthread_mutex_init(&mutex, nil)
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            var deadline = timespec(tv_sec: now.tv_sec, tv_nsec: now.tv_nsec + Int(Self.wait * 1e9))
            if deadline.tv_nsec >= 1_000_000_000 { deadline.tv_sec += 1; deadline.tv_nsec -= 1_000_000_000 }
            pthread_mutex_lock(&mutex)
            while pthread_cond_timedwait(&condition, &mutex, &deadline) == 0 {}
            pthread_mutex_unlock(&mutex)
        }, "still waiting after 5 s")
        XCTAssertGreaterThanOrEqual(took, Self.wait * 0.9)
        XCTAssertLessThan(took, 3)
    }

    /// The host's seconds `body` took on a thread of its own whose device clock reads `deviceSeconds` since 1970 and
    /// holds still; nil when it had not ended after 5 s (the thread is left to its wait).
    private static func timed(onThreadWithDeviceClockAt deviceSeconds: Int64, _ body: @escaping @Sendable () -> Void) -> Double? {
        let ended = DispatchSemaphore(value: 0)
        let took = ManagedAtomicDouble()
        let thread = Thread {
            shieldbus_device_clock_set_thread(deviceSeconds * 1_000_000_000, 0)
            let start = DispatchTime.now().uptimeNanoseconds
            body()
            took.value = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            shieldbus_device_clock_clear_thread()
            ended.signal()
        }
        thread.start()
        // This thread has no device clock of its own: its wait is the host's.
        guard ended.wait(timeout: .now() + 5) == .success else { return nil }
        return took.value
    }

    /// The CPU time this process has used, in seconds.
    private static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// A real-time deadline `seconds` from now, as the calling thread's clock reads it.
    private static func realTime(after seconds: Double) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var deadline = timespec(tv_sec: now.tv_sec, tv_nsec: now.tv_nsec + Int(seconds * 1e9))
        if deadline.tv_nsec >= 1_000_000_000 { deadline.tv_sec += 1; deadline.tv_nsec -= 1_000_000_000 }
        return deadline
    }
}

/// One number handed from one thread to another behind a lock.
private final class ManagedAtomicDouble: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = 0.0
    var value: Double {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// A mutex this thread holds while another tries to take it.
private final class HeldMutex: @unchecked Sendable {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_mutex_lock(mutex)
    }

    /// Unlocks it (from the thread that made it) and frees it.
    func release() {
        pthread_mutex_unlock(mutex)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
}
