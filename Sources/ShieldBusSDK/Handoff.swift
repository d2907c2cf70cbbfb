import Foundation

/// A call handed to the plugin's thread: run once, or cancelled by a caller that stopped waiting.
final class Handoff<Value>: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var result: Result<Value, Error>?
    private var cancelled = false
    private var begun = false

    func run(_ body: () throws -> Value) {
        lock.lock()
        let skip = cancelled
        if !skip { begun = true }
        lock.unlock()
        guard !skip else { return }
        let outcome = Result { try body() }
        lock.lock()
        result = outcome
        lock.unlock()
        done.signal()
    }

    /// The result when there is one; otherwise marks the hand-off cancelled and gives nil.
    func cancelOrTake() -> Result<Value, Error>? {
        lock.lock()
        defer { lock.unlock() }
        if result == nil { cancelled = true }
        return result
    }

    /// Whether the job has begun to run; one that has not never will (it is cancelled).
    func hasBegunElseCancel() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if !begun { cancelled = true }
        return begun
    }
}
