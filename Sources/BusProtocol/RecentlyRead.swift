// RecentlyRead: the last few distinct bodies a reader met, each with what it read of them.

/// A reader that meets the same bodies again and again (the OS's same shield, the renderer's same configuration)
/// compares their bytes with those it read lately instead of reading them again: a comparison costs far less than a
/// parse. What it read is handed out again as it was, so only a value's reading belongs here; a reading that
/// throws is not kept.
///
/// Inlinable, so that each reader's module has it specialized for its value: across modules a generic runs through
/// metadata and witness tables, which cost more than the comparison it is there to save.
public struct RecentlyRead<Value> {
    @usableFromInline var kept: [(bytes: [UInt8], value: Value)] = []
    /// The most bodies kept, the latest used first.
    public let limit: Int

    @inlinable
    public init(limit: Int) {
        precondition(limit > 0, "a reader keeps one body at least")
        self.limit = limit
    }

    /// What `read` gives for `bytes`: kept from when the same bytes were read lately, or read now and kept.
    @inlinable
    public mutating func value(of bytes: [UInt8], reading read: ([UInt8]) throws -> Value) rethrows -> Value {
        if let index = kept.firstIndex(where: { $0.bytes == bytes }) {
            // The latest used is met most often, and is first already.
            guard index > 0 else { return kept[0].value }
            let found = kept.remove(at: index)
            kept.insert(found, at: 0)
            return found.value
        }
        let value = try read(bytes)
        if kept.count == limit { kept.removeLast() }
        kept.insert((bytes, value), at: 0)
        return value
    }
}
