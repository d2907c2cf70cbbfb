// alternate-days-model: the promise model of fixture-alternate-days, with Foundation alone — it reads the journal's OS
// events as JSON lines on standard input and answers when each picked app must be locked: every local day whose
// number since 1970-01-01 is even, by the wall clock of the zone in force (docs/promises.md, "The escape hatch").
import Foundation

let zoneAtStart = TimeZone(identifier: ProcessInfo.processInfo.environment["SHIELDBUS_TIME_ZONE"] ?? "UTC") ?? TimeZone(identifier: "UTC")!
let pickedApps: Set<String> = ["Instagram", "TikTok", "YouTube"]

var events: [(ms: Int64, topic: String, body: [String: Any])] = []
while let line = readLine() {
    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
          let ms = (object["time"] as? NSNumber)?.int64Value, let topic = object["topic"] as? String else { continue }
    events.append((ms, topic, object["body"] as? [String: Any] ?? [:]))
}
guard let first = events.first?.ms, let last = events.last?.ms else {
    print(#"{"locked": {}}"#)
    exit(0)
}

let zoneChanges: [(ms: Int64, zone: TimeZone)] = [(Int64.min, zoneAtStart)] + events.compactMap { event in
    guard event.topic == "device.time-zone-changed", let name = event.body["timeZone"] as? String, let zone = TimeZone(identifier: name) else { return nil }
    return (event.ms, zone)
}

/// Whether the local date at `ms`, in the zone then in force, has an even day number.
func isRestDay(_ ms: Int64) -> Bool {
    let zone = zoneChanges.last { $0.ms <= ms }!.zone
    let date = Date(timeIntervalSince1970: Double(ms) / 1000)
    let local = Int64((date.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: date))).rounded(.down))
    let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
    return day % 2 == 0
}

// Walked minute by minute (local midnights fall on whole minutes in every zone), cut at zone changes.
var rest: [[Int64]] = []
var cuts = Set(stride(from: first - first % 60_000, through: last, by: 60_000).map { $0 } + zoneChanges.map(\.ms).filter { $0 > first && $0 < last })
cuts.insert(first)
cuts.insert(last)
var open: Int64?
for cut in cuts.sorted() where cut >= first {
    let inside = cut < last && isRestDay(cut)
    if inside, open == nil { open = cut }
    if !inside, let start = open { rest.append([start, cut]); open = nil }
}

// Every picked app the journal shows.
var apps = Set<String>()
for event in events where event.topic == "activity.app.opened" || event.topic == "shield.shown" {
    let subject = (event.body["target"] as? [String: Any]) ?? event.body
    if let app = (subject["application"] as? [String: Any])?["localizedDisplayName"] as? String, pickedApps.contains(app) { apps.insert(app) }
}
let answer = try JSONSerialization.data(withJSONObject: ["locked": Dictionary(uniqueKeysWithValues: apps.map { ($0, rest) })], options: [.sortedKeys])
print(String(decoding: answer, as: UTF8.self))
