// The handle a SharedDefaults transaction closure reads and writes through.
import Foundation

/// Reads and writes inside `SharedDefaults.transaction`; valid only within its closure.
///
/// Reads see this transaction's own writes; the slices are read once, when first needed.
/// It runs inside `GroupDatabase.writeTransaction`, which maps storage errors.
public final class SharedDefaultsTransaction: SharedDefaultsReading {
    private let database: GroupDatabase
    private let writer: String?
    private let enforcement: SliceEnforcement
    private let clock: () -> Date
    private var slices: SliceTable?
    private var isOpen = true
    /// The changes made so far, in order.
    private(set) var changes: [StoreChange] = []

    init(database: GroupDatabase, writer: String?, slices: SliceEnforcement = .strict, clock: @escaping () -> Date) {
        self.database = database
        self.writer = writer
        enforcement = slices
        self.clock = clock
    }

    /// The stored entry of `key`, including this transaction's writes; nil when absent.
    public func entry(forKey key: String) throws -> StoredEntry? {
        try checkOpen()
        return try database.entry(forKey: key)
    }

    /// Stores `value` for `key`; the change is committed with the transaction.
    @discardableResult
    public func set<T: Encodable>(_ value: T, forKey key: String) throws -> StoreChange {
        let writer = try authorize(key: key)
        return try store(ValueCoding.encode(value, forKey: key), forKey: key, writer: writer)
    }

    /// The same, the value writing its own text (`StoredJSONWritable`): the same bytes.
    @discardableResult
    public func set<T: StoredJSONWritable>(_ value: T, forKey key: String) throws -> StoreChange {
        let writer = try authorize(key: key)
        return try store(ValueCoding.encode(value, forKey: key), forKey: key, writer: writer)
    }

    private func store(_ encoded: (json: String, typeTag: String), forKey key: String, writer: String) throws -> StoreChange {
        let change = try database.store(key: key, json: encoded.json, typeTag: encoded.typeTag, writer: writer, at: clock())
        changes.append(change)
        return change
    }

    /// Removes `key`; returns the change, or nil when the key had no value.
    @discardableResult
    public func removeObject(forKey key: String) throws -> StoreChange? {
        let writer = try authorize(key: key)
        let change = try database.remove(key: key, writer: writer, at: clock())
        changes.append(contentsOf: change.map { [$0] } ?? [])
        return change
    }

    /// Throws unless this transaction's writer may write `key`; returns the writer.
    @discardableResult
    func authorize(key: String) throws -> String {
        try checkOpen()
        guard let writer else { throw AppGroupStoreError.readOnly(suite: database.group) }
        guard enforcement == .strict else { return writer }
        let table = try slices ?? database.slices()
        slices = table
        try table.authorize(key: key, writer: writer, group: database.group)
        return writer
    }

    /// Ends the transaction's use; called when the closure returns.
    func close() {
        isOpen = false
    }

    private func checkOpen() throws {
        guard isOpen else { throw AppGroupStoreError.transactionClosed(group: database.group) }
    }
}
