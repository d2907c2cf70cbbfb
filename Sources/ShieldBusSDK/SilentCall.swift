import BusClient
import BusProtocol
import DeviceAPI
import Foundation

/// Calls that iOS lets fail silently — a property set on a store that the OS refuses, `UserDefaults(suiteName:)`
/// for a group the app does not have, a completion handler never called. Here each failure is logged and
/// published as `state.call-failed {call, message}`, which the device counts in `shieldbus status` and `tap` shows.
public enum SilentCall {
    /// Runs `body`; a thrown error is reported as the failure of `call`, and nil returned.
    @discardableResult
    public static func report<Value>(_ call: @autoclosure () -> String, _ body: () throws -> Value) -> Value? {
        do {
            return try body()
        } catch {
            reportFailure(call(), "\(error)")
            return nil
        }
    }

    /// Reports that `call` failed with `message`.
    public static func reportFailure(_ call: String, _ message: String) {
        guard let runtime = PluginRuntime.current else {
            FileHandle.standardError.write(Data("\(call) failed: \(message)\n".utf8))
            return
        }
        // A hosted plugin killed meanwhile says nothing more, as a killed process would: a wait the kill ended is no failure.
        guard !runtime.isCutOff else { return }
        runtime.logger.error("\(call) failed: \(message)")
        do {
            try runtime.publish(DeviceTopic.callFailed, json: ["call": .string(call), "message": .string(message)])
        } catch {
            runtime.logger.error("could not report the failure: \(error)")
        }
    }

    /// Reports a call of a setting that ShieldBus's device does not model, so that it is never taken as applied.
    public static func unsupported(_ call: String, _ what: String) {
        reportFailure(call, "ShieldBus's device does not model \(what) (docs/porting-from-ios.md): the setting is not applied")
    }
}

/// An answer that a handler gives through a completion handler, perhaps later and from another thread
/// (`DispatchQueue.main.async`, a `Task`): the plugin's thread waits for it, running the main queue meanwhile.
public final class PendingAnswer<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value?

    public init() {}

    private var late: ((Value) -> Void)?

    /// The completion handler: the first answer counts.
    public func complete(_ answer: Value) {
        lock.lock()
        let first = value == nil
        if first { value = answer }
        let lateHandler = first ? late : nil
        lock.unlock()
        lateHandler?(answer)
    }

    /// Called with an answer that comes after the waiting gave up (to report it).
    public func whenLate(_ handler: @escaping (Value) -> Void) {
        lock.lock()
        late = handler
        lock.unlock()
    }

    private var answer: Value? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    /// The answer, waiting up to `milliseconds` of host time for it while the main queue's work runs (on iOS an
    /// extension's main queue runs; here the plugin's thread is the main thread, so it runs it while it waits).
    /// A hosted plugin that is killed stops waiting at once, as a killed process would. In virtual time the limit is
    /// judged by progress (`HandlerProgress`): while the handler's work goes on — the process's other threads, or the
    /// main queue's jobs, used CPU since the last look — the wait goes on, a limit at a time, up to twelve times the
    /// limit or a minute; so the answer does not depend on the machine's load, as the OS's wait for it does not.
    public func wait(milliseconds: Int) -> Value? {
        if let answer { return answer }
        let runtime = PluginRuntime.current
        let limit = UInt64(milliseconds) * 1_000_000
        let start = DispatchTime.now().uptimeNanoseconds
        var deadline = start + limit
        var progress = runtime.flatMap { $0.clockMode == "virtual" && !$0.isHostedInProcess ? HandlerProgress() : nil }
        while runtime?.isCutOff != true {
            let now = DispatchTime.now().uptimeNanoseconds
            if now >= deadline {
                guard now - start < UInt64(BusyLimit.milliseconds(for: Int64(milliseconds))) * 1_000_000, progress?.workedSinceLastLook() == true else { break }
                deadline = now + limit
            }
            // A short turn of the main run loop: it runs what was queued on the main queue, then returns.
            if progress != nil {
                progress?.countingThisThread { runtime?.runJobs() }  // the main queue, and work handed over by other threads
            } else {
                runtime?.runJobs()
            }
            if let answer { return answer }
            usleep(500)  // host time: a scaled device clock must not turn this into a busy wait
            if let answer { return answer }
        }
        return answer
    }
}

/// Whether a handler's work goes on while its thread waits for its completion handler: the CPU the process's other
/// threads used (a `Task`, a queue), and the jobs the waiting thread ran for it — not the waiting itself.
struct HandlerProgress {
    /// CPU of the work, in ns, at the last look.
    private var lastLook: Int64 = 0
    /// CPU the waiting thread used running jobs, in ns.
    private var jobs: Int64 = 0
    /// Less than this in a look's interval is the process's housekeeping (its connection's I/O thread), not work.
    private static let workNanoseconds: Int64 = 1_000_000

    init() { lastLook = Self.otherThreads() }

    /// Runs `body` (jobs on the waiting thread), counting the CPU it used as work.
    mutating func countingThisThread(_ body: () -> Void) {
        let before = Self.cpu(CLOCK_THREAD_CPUTIME_ID)
        body()
        jobs += Self.cpu(CLOCK_THREAD_CPUTIME_ID) - before
    }

    /// Whether the work used CPU since the last look; this look is the next one's to compare with.
    mutating func workedSinceLastLook() -> Bool {
        let work = Self.otherThreads() + jobs
        defer { lastLook = work }
        return work >= lastLook + Self.workNanoseconds
    }

    /// The CPU the process's threads but this one used.
    private static func otherThreads() -> Int64 {
        let thread = cpu(CLOCK_THREAD_CPUTIME_ID)
        return cpu(CLOCK_PROCESS_CPUTIME_ID) - thread
    }

    private static func cpu(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

extension PluginRuntime {
    /// The running plugin's runtime; `PluginError.notRunning` outside `PluginHost.run`.
    public static func running() throws -> PluginRuntime {
        guard let current else { throw PluginError.notRunning }
        return current
    }
}
