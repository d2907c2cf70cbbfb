// bedtime-model: a promise model — the escape hatch — for the Bedtime product, written as a product's author would
// write one, with Foundation alone: it reads the journal's OS events as JSON lines on standard input and answers when
// each selected app must be locked (docs/promises.md, "The escape hatch"). Nights 22:30–06:30 by the wall clock of the
// zone in force; "5 more minutes" on an app's shield lets that app through for five minutes, the first two presses of a
// night only; "skip tonight" lifts the night in progress, or else the next one.
import Foundation

let zoneAtStart = TimeZone(identifier: ProcessInfo.processInfo.environment["SHIELDBUS_TIME_ZONE"] ?? "UTC") ?? TimeZone(identifier: "UTC")!
let selectedApps: Set<String> = ["Instagram", "TikTok", "YouTube", "Reddit"]
let selectedCategory = "Games"

struct Event {
    var ms: Int64
    var topic: String
    var body: [String: Any]
}

var events: [Event] = []
while let line = readLine() {
    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
          let ms = (object["time"] as? NSNumber)?.int64Value, let topic = object["topic"] as? String else { continue }
    events.append(Event(ms: ms, topic: topic, body: object["body"] as? [String: Any] ?? [:]))
}
guard let first = events.first?.ms, let last = events.last?.ms else {
    print(#"{"locked": {}}"#)
    exit(0)
}

/// The zone in force at each instant.
let zoneChanges: [(ms: Int64, zone: TimeZone)] = [(Int64.min, zoneAtStart)] + events.compactMap { event in
    guard event.topic == "device.time-zone-changed", let name = event.body["timeZone"] as? String, let zone = TimeZone(identifier: name) else { return nil }
    return (event.ms, zone)
}
func isNight(_ ms: Int64) -> Bool {
    let zone = zoneChanges.last { $0.ms <= ms }!.zone
    let date = Date(timeIntervalSince1970: Double(ms) / 1000)
    let local = Int((date.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: date))).rounded(.down))
    let minute = ((local % 86_400) + 86_400) % 86_400 / 60
    return minute >= 22 * 60 + 30 || minute < 6 * 60 + 30
}

// The nights: walked minute by minute (a night's edges fall on whole minutes in every zone), cut at zone changes.
var nights: [(from: Int64, to: Int64)] = []
var cuts = Set(stride(from: first - first % 60_000, through: last, by: 60_000).map { $0 } + zoneChanges.map(\.ms).filter { $0 > first && $0 < last })
cuts.insert(first)
cuts.insert(last)
var open: Int64?
for cut in cuts.sorted() {
    let inside = cut < last && isNight(cut)
    if inside, open == nil { open = max(cut, first) }
    if !inside, let start = open { nights.append((start, cut)); open = nil }
}

func night(containing ms: Int64) -> Int? { nights.firstIndex { $0.from <= ms && ms < $0.to } }

// Skips: the night in progress from the tap on, or else the next one (within a day).
var lifted: [(from: Int64, to: Int64)] = []
for event in events where event.topic == "activity.app.action" && event.body["action"] as? String == "skip-tonight" {
    if let index = night(containing: event.ms) {
        lifted.append((event.ms, nights[index].to))
    } else if let next = nights.first(where: { $0.from > event.ms }), next.from - event.ms <= 86_400_000 {
        lifted.append(next)
    }
}

// Passes: the first two presses of "5 more minutes" in a night, each for its app.
var used: [Int: Int] = [:]
var passes: [String: [(from: Int64, to: Int64)]] = [:]
for event in events where event.topic == "shield.action.handled" && event.body["action"] as? String == "secondaryButtonPressed" {
    guard let app = event.body["target"] as? String, let index = night(containing: event.ms), used[index, default: 0] < 2 else { continue }
    used[index, default: 0] += 1
    passes[app, default: []].append((event.ms, event.ms + 5 * 60_000))
}

/// `periods` less `cuts`, both sorted lists of [from, to).
func subtract(_ periods: [(from: Int64, to: Int64)], _ cuts: [(from: Int64, to: Int64)]) -> [(from: Int64, to: Int64)] {
    var result: [(from: Int64, to: Int64)] = []
    for period in periods {
        var pieces = [period]
        for cut in cuts {
            pieces = pieces.flatMap { piece -> [(from: Int64, to: Int64)] in
                guard cut.to > piece.from, cut.from < piece.to else { return [piece] }
                return [(piece.from, cut.from), (cut.to, piece.to)].filter { $0.to > $0.from }
            }
        }
        result += pieces
    }
    return result
}

// Every app the journal shows that is selected, by name or by its category.
var targets = Set<String>()
for event in events where event.topic == "activity.app.opened" || event.topic == "shield.shown" {
    let subject = (event.body["target"] as? [String: Any]) ?? event.body
    guard let app = (subject["application"] as? [String: Any])?["localizedDisplayName"] as? String else { continue }
    let category = (subject["category"] as? [String: Any])?["localizedDisplayName"] as? String
    if selectedApps.contains(app) || category == selectedCategory { targets.insert(app) }
}
var locked: [String: [[Int64]]] = [:]
for app in targets.sorted() {
    locked[app] = subtract(subtract(nights, lifted), passes[app] ?? []).map { [$0.from, $0.to] }
}
let answer = try JSONSerialization.data(withJSONObject: ["locked": locked], options: [.sortedKeys])
print(String(decoding: answer, as: UTF8.self))
