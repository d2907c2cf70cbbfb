import BusProtocol

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
        /// The event's envelope, as sent.
        let envelope: EnvelopeFrame
        var json: [UInt8] { envelope.json }
        /// Handed to the plugin's current process: only its acknowledgement removes it.
        var delivered: Bool
        /// Processes that crashed while this was the oldest event they had not acknowledged (the one in hand).
        var endings = 0
        /// The fingerprints of what handling this event published, by index (its causes): a copy sent again by a
        /// plugin's next process is recognised.
        var published: [UInt64] = []
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
    private(set) var store: DeliveryStore?
    private var entries: [String: PendingEvents] = [:]
    /// Plugins whose ledger is full, so the overflow is reported once per episode, not once per event.
    private var overflowing = Set<String>()
    /// Changes not yet written to the store.
    private var unsavedInserts: [DeliveryStore.Key: [UInt8]] = [:]
    private var unsavedDeletions: [DeliveryStore.Key] = []
    /// Those of `unsavedDeletions` with publications noted: only they can have fingerprints stored.
    private var unsavedPublishedDeletions: [DeliveryStore.Key] = []
    /// Events whose publications changed since the last save.
    private var unsavedPublished = Set<DeliveryStore.Key>()
    /// Observers' held publications, when they changed since the last save.
    private var unsavedHeld: [DeliveryStore.Held]?
    /// Facts stated by events sequenced since the last save (`noteAnnounced`).
    private var unsavedAnnounced: [String: [UInt8]] = [:]
    /// The last sequence number a save covered.
    private var savedSeq: UInt64 = 0
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

    /// Keeps the ledger in `store` (the state folder's `bus.sqlite`) from now on; `restore` what it holds.
    func attach(_ store: DeliveryStore) { self.store = store }

    /// Loads what a previous broker left unacknowledged (and what handling it published); nothing of it counts
    /// as delivered.
    func restore(_ stored: [(plugin: String, seq: UInt64, json: [UInt8])], published: [DeliveryStore.Key: [UInt64]] = [:]) {
        for item in stored.sorted(by: { $0.seq < $1.seq }) {
            var entry = Entry(seq: item.seq, envelope: EnvelopeFrame(item.json), delivered: false)
            entry.published = published[DeliveryStore.Key(plugin: item.plugin, seq: item.seq)] ?? []
            entries[item.plugin, default: PendingEvents()].append(entry)
        }
    }

    /// Keeps `seq` for `plugin` until it acknowledges it. Returns the overflow when the ledger is full — the first
    /// time only, so the caller reports it once.
    func route(seq: UInt64, envelope: EnvelopeFrame, to plugin: String) -> Overflow? {
        // One look-up of the plugin's events, kept or not: every delivery to a supervised plugin comes here.
        let kept = entries[plugin, default: PendingEvents()].append(Entry(seq: seq, envelope: envelope, delivered: false), within: limit)
        guard kept else { return overflowing.insert(plugin).inserted ? .full(plugin: plugin, limit: limit) : nil }
        if store != nil { unsavedInserts[DeliveryStore.Key(plugin: plugin, seq: seq)] = envelope.json }
        return nil
    }

    /// Marks `seq` as handed to the plugin's current process.
    func markDelivered(seq: UInt64, to plugin: String) {
        entries[plugin]?.markDelivered(seq: seq)
    }

    /// The plugin's process handled every event delivered to it with a sequence number up to `seq`.
    func acknowledge(upTo seq: UInt64, by plugin: String) {
        // One look-up of the plugin's events for the removal and the count left: every acknowledgement comes here.
        guard let (removed, left) = entries[plugin]?.removeDeliveredCounting(upTo: seq) else { return }
        for entry in removed { forget(entry, of: plugin) }
        if left < limit, !overflowing.isEmpty { overflowing.remove(plugin) }
    }

    private func forget(_ entry: Entry, of plugin: String) {
        guard store != nil else { return }
        let key = DeliveryStore.Key(plugin: plugin, seq: entry.seq)
        if !unsavedPublished.isEmpty { unsavedPublished.remove(key) }
        guard unsavedInserts.removeValue(forKey: key) == nil else { return }
        unsavedDeletions.append(key)
        if !entry.published.isEmpty { unsavedPublishedDeletions.append(key) }
    }

    /// Whether `publication` from `plugin` is a copy of one already sequenced: the same index among the
    /// publications of the same cause, with the same topic and body — what a plugin's next process sends again
    /// when its event comes back (protocol.md § 9.1). Otherwise it is noted, so that a later copy is recognised.
    /// Only while the cause is kept for the plugin: an acknowledged event is never redelivered.
    /// A different publication at an index already taken (a handler that did something else the second time) is new.
    func isRepeat(_ publication: Publish, cause: PublicationCause, by plugin: String) -> Bool {
        let fingerprint = Self.fingerprint(publication)
        var repeated = false
        var noted = false
        entries[plugin]?.update(seq: cause.seq) { entry in
            if cause.index < entry.published.count {
                repeated = entry.published[cause.index] == fingerprint
            } else {
                // Indices skipped (a publication the broker never read) hold 0, which no fingerprint matches.
                entry.published += Array(repeating: 0, count: cause.index - entry.published.count) + [fingerprint]
                noted = true
            }
        }
        if noted && store != nil { unsavedPublished.insert(DeliveryStore.Key(plugin: plugin, seq: cause.seq)) }
        return repeated
    }

    /// FNV-1a of topic and body (never 0): stable across processes, as the copies come from a later broker too.
    static func fingerprint(_ publication: Publish) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ byte: UInt8) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        for byte in publication.topic.utf8 { add(byte) }
        add(0)
        for byte in publication.body { add(byte) }
        return hash == 0 ? 1 : hash
    }

    /// Removes the kept event `seq` of `plugin` without it being handled: one that is no longer the plugin's to
    /// handle (`Readiness`: a `bus.ready` that announced an earlier process of it).
    func discard(seq: UInt64, of plugin: String) {
        guard let removed = entries[plugin]?.remove(seq: seq) else { return }
        forget(removed, of: plugin)
        if entries[plugin]!.count < limit { overflowing.remove(plugin) }
    }

    /// The plugin's process ended: what it was given and did not acknowledge goes to its next process — except
    /// an event in hand when two processes crashed (ended without `bye`), which is returned, abandoned.
    /// (A short-lived extension says `bye` after its callback without acknowledging it: no crash.)
    func processEnded(_ plugin: String, crashed: Bool) -> Entry? {
        guard entries[plugin] != nil else { return nil }
        let abandoned = entries[plugin]!.processEnded(crashed: crashed, endingsBeforeAbandoning: Self.endingsBeforeAbandoning)
        if let abandoned { forget(abandoned, of: plugin) }
        return abandoned
    }

    /// What the plugin's current process has not been given yet, in sequence order.
    func undelivered(of plugin: String) -> [Entry] {
        entries[plugin]?.undelivered ?? []
    }

    /// Events kept for `plugin` (delivered or not).
    func count(of plugin: String) -> Int { entries[plugin]?.count ?? 0 }

    /// The slots held for `plugin`, holes included.
    func storage(of plugin: String) -> Int { entries[plugin]?.storage ?? 0 }

    /// The observers' publications held for the next settled point changed: saved with the next save, so that a
    /// broker killed before it sequenced them sequences them after its restart.
    func noteHeld(_ held: [DeliveryStore.Held]) {
        if store != nil { unsavedHeld = held }
    }

    /// An event stating `fact` was sequenced, with `body`: saved with its batch, so the store says what the saved
    /// journal last said of it.
    func noteAnnounced(_ fact: String, body: [UInt8]) {
        if store != nil { unsavedAnnounced[fact] = body }
    }

    /// Drops everything kept for a plugin that will not come back (it failed).
    func discard(_ plugin: String) {
        for entry in entries.removeValue(forKey: plugin)?.all ?? [] { forget(entry, of: plugin) }
        overflowing.remove(plugin)
    }

    /// Whether `seq` is covered by the reservation the store holds: a number past it would be handed out again by
    /// a broker restarted after a crash. Without a store nothing is resumed, so every number is.
    func mayNumber(_ seq: UInt64) -> Bool { store == nil || seq <= seqReserved }

    /// Reserves the numbers after `lastSeq` (and the bus time ahead) in the store, alone: before a number past the
    /// last reservation is handed out. Throws when the store cannot be written; nothing changes then.
    func reserveNumbers(after lastSeq: UInt64, busTime: Int64, timeAhead: Int64?) throws {
        guard let store else { return }
        let seqs = lastSeq + Self.seqReservation
        let time = max(timeReserved, busTime + (timeAhead ?? 0))
        try store.write(inserts: [:], deletions: [], savedSeq: savedSeq, seqReserved: seqs, timeReserved: time)
        seqReserved = seqs
        timeReserved = time
    }

    /// Writes the changes since the last save in one transaction: at once when an event was kept (so a broker
    /// crash loses none), a publication noted or held, a reservation ran out, or — with `everySequenced` (a journal
    /// is kept, and cut back to the last save on resuming) — anything was sequenced; acknowledgements at most once
    /// a second (a lost one only means a redelivery the plugin skips). `timeAhead`, for a clock that runs by
    /// itself, is how much bus time a second of wall time brings: the bus time reserved ahead.
    /// `publicationsMayWait`: a publication held or noted is no reason to write now — it goes with the next save, with
    /// the acknowledgement of the event whose handling published it (written no earlier, as every save writes all that
    /// changed before it): lost with a killed broker before then, it is sent again by the plugin's next process, to
    /// which that event is delivered again.
    /// On failure the changes stay pending and are written by a later save.
    func save(lastSeq: UInt64, everySequenced: Bool, busTime: Int64, timeAhead: Int64?, wallNow: Int64, publicationsMayWait: Bool = false) throws {
        guard let store else { return }
        let reservationsRunOut = lastSeq >= seqReserved || (timeAhead != nil && busTime >= timeReserved)
        let deletionsDue = !unsavedDeletions.isEmpty && wallNow - lastDeletionSave >= 1_000
        let sequencedDue = everySequenced && lastSeq > savedSeq
        let publicationsDue = !publicationsMayWait && (!unsavedPublished.isEmpty || unsavedHeld != nil)
        guard reservationsRunOut || !unsavedInserts.isEmpty || publicationsDue || !unsavedAnnounced.isEmpty || deletionsDue || sequencedDue else { return }
        let seqs = reservationsRunOut ? lastSeq + Self.seqReservation : seqReserved
        let time = reservationsRunOut ? busTime + (timeAhead ?? 0) : max(timeReserved, busTime)
        var published: [DeliveryStore.Key: [UInt64]] = [:]
        for key in unsavedPublished { published[key] = entries[key.plugin]?.entry(seq: key.seq)?.published }
        try store.write(inserts: unsavedInserts, deletions: unsavedDeletions, publishedDeletions: unsavedPublishedDeletions, published: published, held: unsavedHeld,
                        announced: unsavedAnnounced, savedSeq: lastSeq, seqReserved: seqs, timeReserved: time)
        unsavedHeld = nil
        unsavedAnnounced.removeAll(keepingCapacity: true)
        savedSeq = lastSeq
        unsavedInserts.removeAll(keepingCapacity: true)
        unsavedDeletions.removeAll(keepingCapacity: true)
        unsavedPublishedDeletions.removeAll(keepingCapacity: true)
        unsavedPublished.removeAll(keepingCapacity: true)
        lastDeletionSave = wallNow
        seqReserved = seqs
        timeReserved = time
    }
}

/// One plugin's kept events in sequence order, as a queue: acknowledging removes from the front in time
/// proportional to what it removes, never copying what stays (a plugin may have thousands kept while it
/// acknowledges one at a time). A removed event leaves a hole that keeps its sequence number (so the binary
/// search stays valid) until the front passes it; the storage is compacted when the holes in front make up half
/// of it, or when holes anywhere make up three quarters of it (an event kept long at the front), so each event is
/// moved a bounded number of times on average.
struct PendingEvents {
    private struct Slot {
        let seq: UInt64
        /// `nil`: removed.
        var entry: DeliveryLedger.Entry?
    }

    private var slots: [Slot] = []
    /// Slots before `head` are all removed.
    private var head = 0
    /// Events kept (slots that are not holes).
    private(set) var count = 0

    mutating func append(_ entry: DeliveryLedger.Entry) {
        slots.append(Slot(seq: entry.seq, entry: entry))
        count += 1
    }

    /// Appends `entry` unless `limit` events are kept already; whether it was appended.
    mutating func append(_ entry: DeliveryLedger.Entry, within limit: Int) -> Bool {
        guard count < limit else { return false }
        append(entry)
        return true
    }

    mutating func markDelivered(seq: UInt64) {
        update(seq: seq) { $0.delivered = true }
    }

    /// The kept event `seq`, if it is kept.
    func entry(seq: UInt64) -> DeliveryLedger.Entry? {
        let index = firstIndex(after: seq &- 1)
        return index < slots.count && slots[index].seq == seq ? slots[index].entry : nil
    }

    /// Changes the kept event `seq`, if it is kept.
    mutating func update(seq: UInt64, _ change: (inout DeliveryLedger.Entry) -> Void) {
        let index = firstIndex(after: seq &- 1)
        if index < slots.count, slots[index].seq == seq, slots[index].entry != nil { change(&slots[index].entry!) }
    }

    /// Removes the delivered events with a sequence number up to `seq` and returns them. Events up to `seq` not yet
    /// delivered (waiting for their turn) stay.
    mutating func removeDelivered(upTo seq: UInt64) -> [DeliveryLedger.Entry] {
        let end = firstIndex(after: seq)
        var removed: [DeliveryLedger.Entry] = []
        for index in head..<max(head, end) where slots[index].entry?.delivered == true {
            removed.append(slots[index].entry!)
            slots[index].entry = nil
        }
        count -= removed.count
        advanceHead()
        return removed
    }

    /// `removeDelivered(upTo:)`, with the count of events left.
    mutating func removeDeliveredCounting(upTo seq: UInt64) -> (removed: [DeliveryLedger.Entry], left: Int) {
        let removed = removeDelivered(upTo: seq)
        return (removed, count)
    }

    /// Removes the kept event `seq` and returns it; nil when it was not kept.
    mutating func remove(seq: UInt64) -> DeliveryLedger.Entry? {
        let index = firstIndex(after: seq &- 1)
        guard index < slots.count, slots[index].seq == seq, let removed = slots[index].entry else { return nil }
        slots[index].entry = nil
        count -= 1
        advanceHead()
        return removed
    }

    /// The process ended: nothing counts as delivered any more. An event in hand (the oldest delivered) when a
    /// process crashed counts an ending; at `endingsBeforeAbandoning` it is removed and returned.
    mutating func processEnded(crashed: Bool, endingsBeforeAbandoning: Int) -> DeliveryLedger.Entry? {
        var abandoned: DeliveryLedger.Entry?
        if crashed, let inHand = (head..<slots.count).first(where: { slots[$0].entry?.delivered == true }) {
            slots[inHand].entry!.endings += 1
            if slots[inHand].entry!.endings >= endingsBeforeAbandoning {
                abandoned = slots[inHand].entry
                slots[inHand].entry = nil
                count -= 1
            }
        }
        for index in head..<slots.count where slots[index].entry != nil { slots[index].entry!.delivered = false }
        advanceHead()
        return abandoned
    }

    var all: [DeliveryLedger.Entry] { slots[head...].compactMap(\.entry) }

    var undelivered: [DeliveryLedger.Entry] { all.filter { !$0.delivered } }

    private mutating func advanceHead() {
        while head < slots.count, slots[head].entry == nil { head += 1 }
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= slots.count {
            slots.removeFirst(head)
            head = 0
        } else if slots.count >= 1_024, count * 4 <= slots.count {
            // An event kept long at the front (for a plugin away, one still in hand) must not keep every hole behind
            // it: they would grow with every later delivery, and each acknowledgement would walk them all.
            slots.removeAll { $0.entry == nil }
            head = 0
        }
    }

    /// Slots held, holes included (what the compaction bounds).
    var storage: Int { slots.count }

    /// The index of the first slot from `head` with a sequence number above `seq` (binary search: slots are in order).
    private func firstIndex(after seq: UInt64) -> Int {
        var low = head
        var high = slots.count
        while low < high {
            let middle = (low + high) / 2
            if slots[middle].seq <= seq { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
