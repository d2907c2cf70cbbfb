// UserDefaults(suiteName:) for ShieldBus: typed, versioned, slice-checked access to one app group.
import Foundation

/// The shared defaults of one app group, shaped like `UserDefaults(suiteName:)`.
///
/// Values are stored as JSON with a type tag; every key has a version, a writer and a write
/// time, and every committed write is appended to the group's change log. Reading is open to
/// all; writing is limited to the writer's slice. A value that does not decode as the
/// requested type throws, and no read ever writes anything back.
///
/// Thread-safe: calls are serialized per instance; use one instance per thread for parallel reads.
public final class SharedDefaults: SharedDefaultsReading, @unchecked Sendable {
    /// The administrator writer: bypasses slices; for the broker and tooling, never for plugins.
    public static let administrator = "shieldbus"

    /// The app group's name.
    public let suiteName: String
    /// Who writes through this instance; nil makes it read-only.
    public let writer: String?
    /// Whether writes outside the writer's slice are refused.
    public let slices: SliceEnforcement

    private let database: GroupDatabase
    private let clock: () -> Date
    private let lock = NSRecursiveLock()
    private var changeHandler: (([StoreChange]) -> Void)?

    /// Opens app group `suiteName` in `container`.
    ///
    /// - Parameters:
    ///   - writer: the component writing (its slice applies), `SharedDefaults.administrator`, or nil to only read.
    ///   - clock: stamps writes; ShieldBus passes bus time.
    /// - Throws: `AppGroupStoreError.unknownSuite` (listing the groups that exist) when the group does not exist,
    ///   `invalidGroupName`, `corruptStore`.
    ///   - slices: `.strict` refuses a write outside the writer's slice; `.open` lets every writer write every key,
    ///     as iOS lets every process of an App Group (each key still keeps its writer and version).
    public init(suiteName: String, container: AppGroupContainer, writer: String? = nil, slices: SliceEnforcement = .strict,
                clock: @escaping () -> Date = Date.init) throws {
        self.database = try container.openGroup(suiteName)
        self.suiteName = suiteName
        self.writer = writer
        self.slices = slices
        self.clock = clock
    }

    /// `opened`'s connection to its group, used as `writer`: for an opener that checked the group with another
    /// instance and now works in it, without opening (and checking) the store a second time. `opened` is not used
    /// again, as the two would not share a lock: so it is the package's own (the SDK's launch check), not a plugin's.
    /// `restartLoss` is `opened`'s, which its opener has said.
    package init(continuing opened: SharedDefaults, writer: String?, slices: SliceEnforcement = .strict,
                clock: @escaping () -> Date = Date.init) {
        self.database = opened.database
        self.suiteName = opened.suiteName
        self.writer = writer
        self.slices = slices
        self.clock = clock
    }

    /// What the store lost to the machine's restart (a power cut), found as this instance opened it: nil when
    /// nothing. Only the first opener after the restart learns it; the opener says it (`createGroup` returns it too).
    public var restartLoss: String? { database.restartLoss }

    /// Told once when this instance's commits can no longer be noted or flushed to the disk (`CommitFollowUp`):
    /// the commits stand, but a lost write-ahead log would go unnoticed. The opener says it where the person sees it.
    public var onNoteFailure: ((String) -> Void)? {
        get { lock.withLock { database.followUp.onFailure } }
        set { lock.withLock { database.followUp.onFailure = newValue } }
    }

    /// The last change whose commit this instance flushed to the disk (0 before the first): every
    /// `CommitFollowUp.syncInterval`-th change is.
    public var syncedThrough: Int64 { lock.withLock { database.followUp.syncedThrough } }

    /// Called after each commit with the changes it made, outside the instance's lock
    /// (e.g. to announce them on the bus).
    public var onChange: (([StoreChange]) -> Void)? {
        get { lock.withLock { changeHandler } }
        set { lock.withLock { changeHandler = newValue } }
    }

    // MARK: Reading

    /// The stored entry of `key` with its version, writer and time; nil when absent.
    public func entry(forKey key: String) throws -> StoredEntry? {
        try lock.withLock { try database.read { try database.entry(forKey: key) } }
    }

    /// Runs `body` over one state of the store: its reads see the same committed changes (no write lands between
    /// two of them) and share one read transaction instead of opening one each. The reader is valid inside `body` only;
    /// the store's lock is held while `body` runs (other threads' reads and writes wait: keep it to reads), and a write
    /// through this `SharedDefaults` inside it throws, as a write inside a read transaction must.
    public func snapshot<Value>(_ body: (SharedDefaultsSnapshot) throws -> Value) throws -> Value {
        try lock.withLock { try database.readTransaction { try body(SharedDefaultsSnapshot(database: database)) } }
    }

    /// The keys that have a value, sorted.
    public var allKeys: [String] {
        get throws { try dictionaryRepresentation().keys.sorted() }
    }

    /// Every stored entry by key.
    public func dictionaryRepresentation() throws -> [String: StoredEntry] {
        let entries = try lock.withLock { try database.read { try database.entries() } }
        return Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0) })
    }

    // MARK: Writing

    /// Stores `value` for `key` and returns the committed change.
    @discardableResult
    public func set<T: Encodable>(_ value: T, forKey key: String) throws -> StoreChange {
        try transaction { try $0.set(value, forKey: key) }.value
    }

    /// The same, the value writing its own text (`StoredJSONWritable`): the same bytes.
    @discardableResult
    public func set<T: StoredJSONWritable>(_ value: T, forKey key: String) throws -> StoreChange {
        try transaction { try $0.set(value, forKey: key) }.value
    }

    /// Removes `key`; returns the change, or nil when the key had no value.
    @discardableResult
    public func removeObject(forKey key: String) throws -> StoreChange? {
        try transaction { try $0.removeObject(forKey: key) }.value
    }

    /// Stores `newValue` only if `key` is still at `expectedVersion` (nil: the key must not exist).
    public func compareAndSet<T: Encodable>(_ key: String, expectedVersion: Int64?, newValue: T) throws
        -> CompareAndSetResult {
        try transaction { tx in
            // The slice is checked first, so an outsider learns nothing from a conflict.
            try tx.authorize(key: key)
            let current = try tx.entry(forKey: key)?.version
            guard current == expectedVersion else { return .conflict(currentVersion: current) }
            return .success(try tx.set(newValue, forKey: key))
        }.value
    }

    /// Runs `body` as one atomic read-modify-write over any keys (`BEGIN IMMEDIATE`):
    /// nobody else writes the group meanwhile, and nothing is kept if `body` throws.
    ///
    /// Use only the transaction passed to `body` inside it; calling this instance's writing
    /// methods there throws (transactions do not nest). `onChange` runs after the commit.
    @discardableResult
    public func transaction<Value>(_ body: (SharedDefaultsTransaction) throws -> Value) throws
        -> TransactionResult<Value> {
        let (result, handler): (TransactionResult<Value>, (([StoreChange]) -> Void)?) = try lock.withLock {
            let result = try database.writeTransaction {
                let tx = SharedDefaultsTransaction(database: database, writer: writer, slices: slices, clock: clock)
                defer { tx.close() }
                let value = try body(tx)
                return TransactionResult(value: value, changes: tx.changes)
            }
            return (result, changeHandler)
        }
        if !result.changes.isEmpty { handler?(result.changes) }
        return result
    }

    // MARK: Change log

    /// Up to `limit` committed changes numbered after `sequence`, oldest first.
    ///
    /// Numbers follow commit order, so a watcher that remembers the last number it saw misses nothing — as long as
    /// it is fewer than the log's last 10,000 changes behind (older ones are removed, so that the store stays small).
    public func changes(after sequence: Int64, limit: Int = 1000) throws -> [StoreChange] {
        try lock.withLock { try database.read { try database.changes(after: sequence, limit: limit) } }
    }

    /// The plugins that wrote each key, in the order they first did (from the change log: its last 10,000
    /// changes). A key with two or more was written by several processes, as iOS allows.
    public func writersByKey() throws -> [String: [String]] {
        try lock.withLock { try database.read { try database.writersByKey() } }
    }

    /// The number of the newest change (0 when none): where a watcher that wants only new changes starts.
    public func lastChangeNumber() throws -> Int64 {
        try lock.withLock { try database.read { try database.lastChangeNumber() } }
    }
}

/// The reads of one `SharedDefaults.snapshot`.
public struct SharedDefaultsSnapshot: SharedDefaultsReading {
    fileprivate let database: GroupDatabase

    public func entry(forKey key: String) throws -> StoredEntry? {
        try database.entry(forKey: key)
    }
}

/// Whether an app group's slices bind its writers.
public enum SliceEnforcement: Sendable, Equatable {
    /// A write outside the writer's slice is refused (`outsideSlice`): ShieldBus's opt-in check.
    case strict
    /// Every writer may write every key, as on iOS; who wrote what stays recorded.
    case open
}
