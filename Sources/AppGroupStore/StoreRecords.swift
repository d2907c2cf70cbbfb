// The values the app-group store hands out: stored entries, change records and write outcomes.
import Foundation

/// A key's current value as stored, with its bookkeeping.
public struct StoredEntry: Equatable, Sendable {
    /// The key.
    public let key: String
    /// The value as JSON text, exactly as stored.
    public let rawJSON: String
    /// The Swift type the value was written as (e.g. `Int`, `Array<String>`, `UnlockSession`).
    public let typeTag: String
    /// Starts at 1 and grows by one on every write or removal of the key, never reused.
    public let version: Int64
    /// The writer of the last write.
    public let writer: String
    /// When the last write happened, by the writer's clock (bus time in ShieldBus).
    public let updatedAt: Date
}

/// One committed write or removal, as recorded in the group's change log.
public struct StoreChange: Equatable, Sendable {
    /// The app group.
    public let group: String
    /// The global change number within the group: gap-free, in commit order.
    public let sequence: Int64
    /// The key written or removed.
    public let key: String
    /// The writer.
    public let writer: String
    /// The key's version after the change.
    public let version: Int64
    /// When the change happened, by the writer's clock.
    public let timestamp: Date
    /// True when the key was removed, false when it was set.
    public let removed: Bool
}

/// The outcome of `SharedDefaults.compareAndSet`.
public enum CompareAndSetResult: Equatable, Sendable {
    /// The key held the expected version; the new value is stored.
    case success(StoreChange)
    /// The key held another version (nil: it does not exist); nothing was written.
    case conflict(currentVersion: Int64?)
}

/// What `SharedDefaults.transaction` returns: the closure's result and the changes it committed.
public struct TransactionResult<Value> {
    /// The value the closure returned.
    public let value: Value
    /// The committed changes, in order (empty when the closure only read).
    public let changes: [StoreChange]
}
