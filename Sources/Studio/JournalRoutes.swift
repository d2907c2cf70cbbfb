import BusProtocol
import Foundation
import Hummingbird

/// What a replaying page asks of a recorded journal, so that it never holds the journal: the events of a range (to
/// fold the model from its own checkpoints), the lines the bus and the timeline show at an instant, where the next
/// event of a kind or a time is, and the markers of a stretch. Every answer is read back from the file.
enum JournalRoutes {
    /// At most this many events in one answer (a page asks for a checkpoint's worth and the bus's lines).
    static let maximumEvents = 5000
    /// How far back a filtered bus looks for its lines.
    static let scanLimit = 200_000

    static func add(to router: Router<BasicRequestContext>, journal: RecordedJournal) {
        router.get("/api/journal/events") { request, _ in
            let query = request.uri.queryParameters
            guard let from = query.get("from", as: Int.self), let to = query.get("to", as: Int.self),
                  0 <= from, from <= to, to <= journal.count, to - from <= maximumEvents else {
                return failure("give from and to, 0 ≤ from ≤ to ≤ \(journal.count), at most \(maximumEvents) events apart")
            }
            return try json("{\"events\":[" + journal.events(in: from..<to).joined(separator: ",") + "]}")
        }
        router.get("/api/journal/lines") { request, _ in
            // The timeline's lines (`story=1`) or the bus's (filtered by topic prefix and sender) before an instant.
            let query = request.uri.queryParameters
            guard let before = query.get("before", as: Int.self), (0...journal.count).contains(before),
                  let limit = query.get("limit", as: Int.self), (1...maximumEvents).contains(limit) else {
                return failure("give before (0…\(journal.count)) and limit (1…\(maximumEvents))")
            }
            if query.get("story") == "1" {
                return try json("{\"events\":[" + journal.stories(before: before, limit: limit).joined(separator: ",") + "]}")
            }
            let source = query.get("source").flatMap { $0.isEmpty ? nil : $0 }
            let found = try journal.matching(before: before, prefix: query.get("prefix") ?? "", source: source, limit: limit, scanLimit: scanLimit)
            return try json("{\"events\":[" + found.events.joined(separator: ",") + "],\"scanned\":\(found.scanned),\"complete\":\(found.complete)}")
        }
        router.get("/api/journal/seek") { request, _ in
            // Where to stand (a count of events shown) for: the next or previous event of a timeline kind, an instant,
            // the next local time of day, or an event by seq.
            let query = request.uri.queryParameters
            let count = query.get("count", as: Int.self) ?? 0
            guard (0...journal.count).contains(count) else { return failure("count must be 0…\(journal.count)") }
            if let kind = query.get("kind") {
                let step = query.get("step", as: Int.self) ?? 1
                let found = journal.story(ofKind: kind, from: count - 1, step: step >= 0 ? 1 : -1)
                return try json(found.map { "{\"count\":\($0 + 1)}" } ?? "{\"count\":null}")
            }
            if let time = query.get("time", as: Int64.self) {
                return try json("{\"count\":\(journal.count(atOrBefore: time))}")
            }
            if let clock = query.get("local"), let time = wallClock(clock) {
                guard journal.count > 0 else { return try json("{\"count\":null}") }
                let found = journal.count(atNext: time, after: count)
                return try json(found.map { "{\"count\":\($0)}" } ?? "{\"count\":null}")
            }
            if let seq = query.get("seq", as: UInt64.self) {
                return try json(try journal.index(ofSeq: seq).map { "{\"count\":\($0 + 1)}" } ?? "{\"count\":null}")
            }
            return failure("give kind (and step), time, local (07:30) or seq")
        }
        router.get("/api/journal/marks") { request, _ in
            let query = request.uri.queryParameters
            guard let from = query.get("from", as: Int.self), let to = query.get("to", as: Int.self), 0 <= from, from < to, to <= journal.count,
                  let columns = query.get("columns", as: Int.self), (1...20_000).contains(columns) else {
                return failure("give from < to (within 0…\(journal.count)) and columns (1…20000)")
            }
            let marks = journal.marks(in: from..<to, columns: columns).mapValues { JSONValue.array($0.map { .int(Int64($0)) }) }
            return try json(JSONValue.object(marks).jsonText)
        }
    }

    /// `07:30` or `07:30:15` as hour, minute and second.
    static func wallClock(_ text: String) -> DateComponents? {
        let parts = text.split(separator: ":").map { Int($0) }
        guard (2...3).contains(parts.count), let hour = parts[0], let minute = parts[1], (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        let second = parts.count == 3 ? parts[2] : 0
        guard let second, (0..<60).contains(second) else { return nil }
        return DateComponents(hour: hour, minute: minute, second: second)
    }

    private static func json(_ text: String) throws -> Response {
        Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private static func failure(_ message: String) -> Response {
        Response(status: .badRequest, headers: [.contentType: "application/json"],
                 body: .init(byteBuffer: ByteBuffer(string: JSONValue.object(["ok": false, "error": ["message": .string(message)]]).jsonText)))
    }
}
