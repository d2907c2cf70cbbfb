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
    /// A hosted plugin that is killed stops waiting at once, as a killed process would.
    public func wait(milliseconds: Int) -> Value? {
        if let answer { return answer }
        let runtime = PluginRuntime.current
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        while DispatchTime.now().uptimeNanoseconds < deadline && runtime?.isCutOff != true {
            // A short turn of the main run loop: it runs what was queued on the main queue, then returns.
            runtime?.runJobs()  // the main queue, and work handed over by other threads
            if let answer { return answer }
            usleep(500)  // host time: a scaled device clock must not turn this into a busy wait
            if let answer { return answer }
        }
        return answer
    }
}

extension PluginRuntime {
    /// The running plugin's runtime; `PluginError.notRunning` outside `PluginHost.run`.
    public static func running() throws -> PluginRuntime {
        guard let current else { throw PluginError.notRunning }
        return current
    }
}
