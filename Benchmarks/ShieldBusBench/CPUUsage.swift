import Foundation

/// CPU time spent during a run's measured window (first publish to last arrival), split by who spent it.
///
/// On a machine with few cores every thread competes for the same CPUs, so CPU per event — not the broker's
/// thread alone — is what sets the rate; this says which part of the pipeline costs what.
struct CPUUsage {
    /// The whole process.
    var process: UInt64 = 0
    /// The publishing thread.
    var publisher: UInt64 = 0
    /// The broker's or the proxy's thread.
    var hub: UInt64 = 0
    /// All subscriber threads together.
    var subscribers: UInt64 = 0

    /// libzmq's I/O threads (one per context) and anything else: what the named threads do not account for.
    var ioThreads: UInt64 { process &- publisher &- hub &- subscribers }

    /// A reading of every clock, to subtract from a later one.
    static func now(publisherClock: clockid_t, hub: Worker, subscribers: [Worker]) -> CPUUsage {
        CPUUsage(process: cpuNanoseconds(CLOCK_PROCESS_CPUTIME_ID) ?? 0, publisher: cpuNanoseconds(publisherClock) ?? 0,
                 hub: hub.cpuTime, subscribers: subscribers.reduce(0) { $0 + $1.cpuTime })
    }

    /// The calling thread's CPU-time clock (the publisher reads it on its own thread; the result works from any thread).
    static func currentThreadClock() -> clockid_t {
        var clock = clockid_t()
        _ = pthread_getcpuclockid(pthread_self(), &clock)
        return clock
    }

    static func - (later: CPUUsage, earlier: CPUUsage) -> CPUUsage {
        CPUUsage(process: later.process &- earlier.process, publisher: later.publisher &- earlier.publisher,
                 hub: later.hub &- earlier.hub, subscribers: later.subscribers &- earlier.subscribers)
    }

    /// Microseconds of CPU per published event, by part.
    func microsecondsPerEvent(_ events: Int) -> (total: Double, publisher: Double, hub: Double, subscribers: Double, io: Double) {
        let scale = 1000 * Double(events)
        return (Double(process) / scale, Double(publisher) / scale, Double(hub) / scale, Double(subscribers) / scale, Double(ioThreads) / scale)
    }
}
