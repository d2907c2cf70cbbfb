import Foundation

/// What the Studio has seen, as messages for the page, and the pages listening: a page that opens gets the backlog,
/// then every message as it comes. Memory is bounded: only the newest `capacity` events are kept (a ring); a
/// recorded journal's events are read back from its file when a page asks for them.
final class EventFeed: @unchecked Sendable {
    /// A page message of the backlog, made when the page's connection sends it (a journal's chunk is read then).
    typealias Chunk = @Sendable () throws -> String

    /// A recorded journal's chunks start at the journal's checkpoints: a chunk starting between two would make the
    /// server read again, and throw away, the events from the checkpoint before it.
    static let chunkSize = RecordedJournal.checkpointInterval

    private let lock = NSLock()
    private let capacity: Int
    private let journal: RecordedJournal?
    /// The newest events, each as the JSON text of its page message's `event`: a ring, `next` is where the following
    /// one goes once it is full.
    private var recent: [String] = []
    private var next = 0
    /// Events the ring let go, oldest first; a page is told how many it will not see.
    private var dropped = 0
    /// The latest non-event messages by kind (the broker's status, the connection), for pages that open later.
    private var latest: [String: String] = [:]
    private var listeners: [UUID: AsyncStream<String>.Continuation] = [:]

    /// A feed keeping at most `capacity` events in memory, after the events of `journal` (read from its file).
    init(capacity: Int, journal: RecordedJournal? = nil) {
        precondition(capacity > 0, "the Studio keeps at least one event")
        self.capacity = capacity
        self.journal = journal
    }

    /// Adds an event (the JSON text of its page form) and sends it to every page.
    func append(event json: String) {
        broadcast {
            if recent.count < capacity {
                recent.append(json)
            } else {
                recent[next] = json
                next = (next + 1) % capacity
                dropped += 1
            }
        } message: { "{\"kind\":\"event\",\"event\":\(json)}" }
    }

    /// Replaces the latest message of a kind (`status`, `connection`) and sends it to every page.
    func update(kind: String, json: String) {
        let message = "{\"kind\":\"\(kind)\",\"\(kind)\":\(json)}"
        broadcast { latest[kind] = message } message: { message }
    }

    /// What a page that opens now must be sent first (the journal's events, then the kept ones, in chunks — the first
    /// saying how many events are no longer kept — then the latest messages), and the stream of what comes after;
    /// `stop` ends it.
    func listen() -> (backlog: [Chunk], stream: AsyncStream<String>, stop: @Sendable () -> Void) {
        let id = UUID()
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        var backlog: [Chunk] = []
        if let journal {
            backlog = stride(from: 0, to: journal.count, by: Self.chunkSize).map { start in
                { Self.chunk(try journal.events(in: start..<min(start + Self.chunkSize, journal.count)), dropped: 0) }
            }
        }
        lock.lock()
        let kept = Array(recent[next...] + recent[..<next])
        let dropped = self.dropped
        backlog += stride(from: 0, to: max(kept.count, dropped > 0 ? 1 : 0), by: Self.chunkSize).map { start in
            let text = Self.chunk(kept[start..<min(start + Self.chunkSize, kept.count)], dropped: start == 0 ? dropped : 0)
            return { text }
        }
        backlog += latest.keys.sorted().map { kind in
            let text = latest[kind]!
            return { text }
        }
        listeners[id] = continuation
        lock.unlock()
        return (backlog, stream, { [weak self] in self?.stopListening(id) })
    }

    /// How many events the recorded journal holds (nil when live).
    var journalCount: Int? { journal?.count }

    /// Events seen in all, and how many of them are kept in memory.
    var counts: (seen: Int, kept: Int) {
        lock.lock()
        defer { lock.unlock() }
        return ((journal?.count ?? 0) + dropped + recent.count, recent.count)
    }

    private static func chunk<Events: Sequence<String>>(_ events: Events, dropped: Int) -> String {
        "{\"kind\":\"backlog\",\"dropped\":\(dropped),\"events\":[" + events.joined(separator: ",") + "]}"
    }

    private func stopListening(_ id: UUID) {
        lock.lock()
        let continuation = listeners.removeValue(forKey: id)
        lock.unlock()
        continuation?.finish()
    }

    private func broadcast(_ change: () -> Void, message: () -> String) {
        lock.lock()
        change()
        let text = message()
        for continuation in listeners.values { continuation.yield(text) }
        lock.unlock()
    }
}
