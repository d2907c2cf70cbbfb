import ZeroMQ

/// Durable delivery: for each supervised plugin, the events routed to it that it has not acknowledged yet —
/// waiting for their turn, delivered and not yet handled, or waiting for its next process.
///
/// A plugin's process that ends without acknowledging what it was given loses nothing: its next process gets
/// the same events again, in sequence order, before anything new (`undelivered(of:)`). With a store (the state
/// folder's `bus.sqlite`) the ledger survives a broker crash as well; it is the plugins' durable cursors.
/// Kept apart from routing and turn-taking so that the delivery core can change without touching it.
final class DeliveryLedger {
    struct Entry {
        let seq: UInt64
        let json: [UInt8]
        let frame: SharedFrame
        /// Handed to the plugin's current process: only its acknowledgement removes it.
        var delivered: Bool
        /// Processes that crashed while this was the oldest event they had not acknowledged (the one in hand).
        var endings = 0
    }

    /// An event that was in hand each time two processes of a plugin ended is not delivered a third time: it is
    /// the likely cause (a crash or hang it provokes), and redelivering it would make the plugin crash-loop.
    static let endingsBeforeAbandoning = 2

    /// Why an event could not be kept for a plugin.
    enum Overflow: Equatable {
        /// The plugin already has `limit` unacknowledged events; this one is delivered live at most.
        case full(plugin: String, limit: Int)
    }

    /// The most events kept per plugin.
    let limit: Int
    let store: DeliveryStore?
    private var entries: [String: [Entry]] = [:]
    /// Plugins whose ledger is full, so the overflow is reported once per episode, not once per event.
    private var overflowing = Set<String>()
    /// Changes not yet written to the store.
    private var unsavedInserts: [DeliveryStore.Key: [UInt8]] = [:]
    private var unsavedDeletions: [DeliveryStore.Key] = []
    /// What the store promises a restarted broker: numbering from `seqReserved` and bus time from `timeReserved` —
    /// reserved ahead, so they are written now and then instead of with every event.
    private var seqReserved: UInt64 = 0
    private var timeReserved: Int64 = .min
    private var lastDeletionSave: Int64 = 0
    private static let seqReservation: UInt64 = 1_000

    init(limit: Int, store: DeliveryStore?) {
        self.limit = limit
        self.store = store
    }

    /// Loads what a previous broker left unacknowledged; nothing of it counts as delivered.
    func restore(_ stored: [(plugin: String, seq: UInt64, json: [UInt8])]) {
        for item in stored {
            entries[item.plugin, default: []].append(Entry(seq: item.seq, json: item.json, frame: SharedFrame(item.json), delivered: false))
        }
        for plugin in entries.keys { entries[plugin]!.sort { $0.seq < $1.seq } }
    }

    /// Keeps `seq` for `plugin` until it acknowledges it. Returns the overflow when the ledger is full — the first
    /// time only, so the caller reports it once.
    func route(seq: UInt64, json: [UInt8], frame: SharedFrame, to plugin: String) -> Overflow? {
        let count = entries[plugin]?.count ?? 0
        if count >= limit {
            return overflowing.insert(plugin).inserted ? .full(plugin: plugin, limit: limit) : nil
        }
        entries[plugin, default: []].append(Entry(seq: seq, json: json, frame: frame, delivered: false))
        if store != nil { unsavedInserts[DeliveryStore.Key(plugin: plugin, seq: seq)] = json }
        return nil
    }

    /// Marks `seq` as handed to the plugin's current process.
    func markDelivered(seq: UInt64, to plugin: String) {
        guard let list = entries[plugin] else { return }
        let index = Self.firstIndex(in: list, after: seq &- 1)
        if index < list.count, list[index].seq == seq { entries[plugin]![index].delivered = true }
    }

    /// The plugin's process handled every event delivered to it with a sequence number up to `seq`.
    func acknowledge(upTo seq: UInt64, by plugin: String) {
        guard let list = entries[plugin] else { return }
        // Entries are in sequence order: only the prefix up to `seq` is affected.
        let end = Self.firstIndex(in: list, after: seq)
        guard list[..<end].contains(where: \.delivered) else { return }
        var kept = list[..<end].filter { !$0.delivered }
        for entry in list[..<end] where entry.delivered { forget(DeliveryStore.Key(plugin: plugin, seq: entry.seq)) }
        kept.append(contentsOf: list[end...])
        entries[plugin] = kept
        if kept.count < limit { overflowing.remove(plugin) }
    }

    /// The index of the first entry with a sequence number above `seq` (binary search: entries are in order).
    private static func firstIndex(in list: [Entry], after seq: UInt64) -> Int {
        var low = 0
        var high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle].seq <= seq { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func forget(_ key: DeliveryStore.Key) {
        guard store != nil else { return }
        if unsavedInserts.removeValue(forKey: key) == nil { unsavedDeletions.append(key) }
    }

    /// The plugin's process ended: what it was given and did not acknowledge goes to its next process — except
    /// an event in hand when two processes crashed (ended without `bye`), which is returned, abandoned.
    /// (A short-lived extension says `bye` after its callback without acknowledging it: no crash.)
    func processEnded(_ plugin: String, crashed: Bool) -> Entry? {
        guard var list = entries[plugin] else { return nil }
        var abandoned: Entry?
        if crashed, let inHand = list.firstIndex(where: \.delivered) {
            list[inHand].endings += 1
            if list[inHand].endings >= Self.endingsBeforeAbandoning {
                abandoned = list.remove(at: inHand)
                forget(DeliveryStore.Key(plugin: plugin, seq: abandoned!.seq))
            }
        }
        for index in list.indices { list[index].delivered = false }
        entries[plugin] = list
        return abandoned
    }

    /// What the plugin's current process has not been given yet, in sequence order.
    func undelivered(of plugin: String) -> [Entry] {
        (entries[plugin] ?? []).filter { !$0.delivered }
    }

    /// Events kept for `plugin` (delivered or not).
    func count(of plugin: String) -> Int { entries[plugin]?.count ?? 0 }

    /// Drops everything kept for a plugin that will not come back (it failed).
    func discard(_ plugin: String) {
        for entry in entries.removeValue(forKey: plugin) ?? [] { forget(DeliveryStore.Key(plugin: plugin, seq: entry.seq)) }
        overflowing.remove(plugin)
    }

    /// Writes the changes since the last save in one transaction: at once when an event was kept (so a broker
    /// crash loses none) or a reservation ran out; acknowledgements at most once a second (a lost one only means
    /// a redelivery the plugin skips). `timeAhead`, for a clock that runs by itself, is how much bus time a second
    /// of wall time brings: the bus time reserved ahead.
    /// On failure the changes stay pending and are written by a later save.
    func save(lastSeq: UInt64, busTime: Int64, timeAhead: Int64?, wallNow: Int64) throws {
        guard let store else { return }
        let reservationsRunOut = lastSeq >= seqReserved || (timeAhead != nil && busTime >= timeReserved)
        let deletionsDue = !unsavedDeletions.isEmpty && wallNow - lastDeletionSave >= 1_000
        guard reservationsRunOut || !unsavedInserts.isEmpty || deletionsDue else { return }
        let seqs = reservationsRunOut ? lastSeq + Self.seqReservation : seqReserved
        let time = reservationsRunOut ? busTime + (timeAhead ?? 0) : max(timeReserved, busTime)
        try store.write(inserts: unsavedInserts, deletions: unsavedDeletions, seqReserved: seqs, timeReserved: time)
        unsavedInserts.removeAll(keepingCapacity: true)
        unsavedDeletions.removeAll(keepingCapacity: true)
        lastDeletionSave = wallNow
        seqReserved = seqs
        timeReserved = time
    }
}
