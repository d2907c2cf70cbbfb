// BusStatistics: the broker's counters, as `shieldbus status` reports them.

/// The broker's counters, reported by `shieldbus status`; shared by the parts that count.
final class BusStatistics {
    /// Events sequenced.
    var events: UInt64 = 0
    /// Deliveries queued to receivers.
    var deliveries: UInt64 = 0
    /// Virtual-time turns: hand-offs to one plugin that waited for its acknowledgement (one per batch).
    var turns: UInt64 = 0
    /// Deliveries lost (receiver queue full or receiver gone).
    var dropped: UInt64 = 0
    /// Publications a plugin's next process sent again that the bus already had (protocol.md § 9.1): not sequenced twice.
    var repeatsDropped: UInt64 = 0
    /// Faults by error code (malformed messages, refused hellos, gaps, …).
    private(set) var errorsByCode: [String: UInt64] = [:]

    func countError(_ code: String) { errorsByCode[code, default: 0] += 1 }

    var errors: UInt64 { errorsByCode.values.reduce(0, +) }
}
