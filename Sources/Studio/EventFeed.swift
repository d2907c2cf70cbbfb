import Foundation

/// Everything the Studio has seen, as messages for the page, and the pages listening: a page that opens gets
/// the backlog, then every message as it comes.
final class EventFeed: @unchecked Sendable {
    private let lock = NSLock()
    /// Every event so far, each as the JSON text of its page message's `event`.
    private var events: [String] = []
    /// The latest non-event messages by kind (the broker's status, the connection), for pages that open later.
    private var latest: [String: String] = [:]
    private var listeners: [UUID: AsyncStream<String>.Continuation] = [:]

    /// Adds an event (the JSON text of its page form) and sends it to every page.
    func append(event json: String) {
        broadcast { events.append(json) } message: { "{\"kind\":\"event\",\"event\":\(json)}" }
    }

    /// Replaces the latest message of a kind (`status`, `connection`) and sends it to every page.
    func update(kind: String, json: String) {
        let message = "{\"kind\":\"\(kind)\",\"\(kind)\":\(json)}"
        broadcast { latest[kind] = message } message: { message }
    }

    /// What a page that opens now must be sent first (the backlog in chunks, then the latest messages), and the
    /// stream of what comes after; `stop` ends it.
    func listen() -> (backlog: [String], stream: AsyncStream<String>, stop: @Sendable () -> Void) {
        let id = UUID()
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        lock.lock()
        let backlog = stride(from: 0, to: events.count, by: 500).map { start in
            "{\"kind\":\"backlog\",\"events\":[" + events[start..<min(start + 500, events.count)].joined(separator: ",") + "]}"
        } + latest.keys.sorted().map { latest[$0]! }
        listeners[id] = continuation
        lock.unlock()
        return (backlog, stream, { [weak self] in self?.stopListening(id) })
    }

    var eventCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return events.count
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
