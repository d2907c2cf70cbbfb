// ModelSupport: what the fixture promise models share, with Foundation alone — the journal's events read from standard
// input, the zone in force at each instant, and the answer written (docs/promises.md, "The escape hatch").
import Foundation

/// One journal event: its bus time (ms), topic and body.
public struct JournalEvent {
    public var ms: Int64
    public var topic: String
    public var body: [String: Any]
}

/// The journal as a model reads it: its events, and the zones in force over it.
public struct ModelInput {
    public let events: [JournalEvent]
    /// Each zone change (the zone at start first, at `Int64.min`).
    public let zoneChanges: [(ms: Int64, zone: TimeZone)]

    /// Reads standard input to its end; `SHIELDBUS_TIME_ZONE` is the zone at start.
    public static func read() -> ModelInput {
        var events: [JournalEvent] = []
        while let line = readLine() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let ms = (object["time"] as? NSNumber)?.int64Value, let topic = object["topic"] as? String else { continue }
            events.append(JournalEvent(ms: ms, topic: topic, body: object["body"] as? [String: Any] ?? [:]))
        }
        let utc = TimeZone(identifier: "UTC")!
        let start = TimeZone(identifier: ProcessInfo.processInfo.environment["SHIELDBUS_TIME_ZONE"] ?? "UTC") ?? utc
        let changes = events.compactMap { event -> (ms: Int64, zone: TimeZone)? in
            guard event.topic == "device.time-zone-changed", let name = event.body["timeZone"] as? String, let zone = TimeZone(identifier: name) else { return nil }
            return (event.ms, zone)
        }
        return ModelInput(events: events, zoneChanges: [(Int64.min, start)] + changes)
    }

    /// The minute of the local day (0..<1440) and the day number since 1970 at `ms`, in the zone then in force.
    public func wallClock(at ms: Int64) -> (day: Int64, minute: Int) {
        let zone = zoneChanges.last { $0.ms <= ms }!.zone
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        let local = Int64((date.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: date))).rounded(.down))
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        return (day, Int(local - day * 86_400) / 60)
    }

    /// The periods within the journal where `inside` holds, walked minute by minute (wall-clock edges fall on whole
    /// minutes in every zone) and cut at each zone change.
    public func periods(where inside: (Int64) -> Bool) -> [(from: Int64, to: Int64)] {
        guard let first = events.first?.ms, let last = events.last?.ms else { return [] }
        var cuts = Set(stride(from: first - first % 60_000, through: last, by: 60_000).map { $0 } + zoneChanges.map(\.ms).filter { $0 > first && $0 < last })
        cuts.insert(first)
        cuts.insert(last)
        var periods: [(from: Int64, to: Int64)] = [], open: Int64?
        for cut in cuts.sorted() where cut >= first {
            let holds = cut < last && inside(cut)
            if holds, open == nil { open = cut }
            if !holds, let start = open { periods.append((start, cut)); open = nil }
        }
        return periods
    }

    /// The apps the journal shows (opened, or shielded) for which `selected(app, category)` holds.
    public func apps(_ selected: (String, String?) -> Bool) -> Set<String> {
        var apps = Set<String>()
        for event in events where event.topic == "activity.app.opened" || event.topic == "shield.shown" {
            let subject = (event.body["target"] as? [String: Any]) ?? event.body
            guard let app = (subject["application"] as? [String: Any])?["localizedDisplayName"] as? String else { continue }
            if selected(app, (subject["category"] as? [String: Any])?["localizedDisplayName"] as? String) { apps.insert(app) }
        }
        return apps
    }
}

/// Writes the model's answer: `{"locked": {app: [[fromMs, toMs], …]}}`.
public func answer(locked: [String: [(from: Int64, to: Int64)]]) throws {
    let object = ["locked": locked.mapValues { $0.map { [$0.from, $0.to] } }]
    print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
}
