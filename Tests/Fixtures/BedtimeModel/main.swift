// bedtime-model: a promise model — the escape hatch — for the Bedtime product, written as a product's author would
// write one, with Foundation alone (and ModelSupport, the fixture models' reading of the journal): it reads the
// journal's OS events as JSON lines on standard input and answers when each selected app must be locked
// (docs/promises.md, "The escape hatch"). Nights 22:30–06:30 by the wall clock of the zone in force; "5 more minutes"
// on an app's shield lets that app through for five minutes, the first two presses of a night only; "skip tonight"
// lifts the night in progress, or else the next one.
import Foundation
import ModelSupport

let journal = ModelInput.read()
let nights = journal.periods { ms in
    let minute = journal.wallClock(at: ms).minute
    return minute >= 22 * 60 + 30 || minute < 6 * 60 + 30
}

func night(containing ms: Int64) -> Int? { nights.firstIndex { $0.from <= ms && ms < $0.to } }

// Skips: the night in progress from the tap on, or else the next one (within a day).
var lifted: [(from: Int64, to: Int64)] = []
for event in journal.events where event.topic == "activity.app.action" && event.body["action"] as? String == "skip-tonight" {
    if let index = night(containing: event.ms) {
        lifted.append((event.ms, nights[index].to))
    } else if let next = nights.first(where: { $0.from > event.ms }), next.from - event.ms <= 86_400_000 {
        lifted.append(next)
    }
}

// Passes: the first two presses of "5 more minutes" in a night, each for its app.
var used: [Int: Int] = [:]
var passes: [String: [(from: Int64, to: Int64)]] = [:]
for event in journal.events where event.topic == "shield.action.handled" && event.body["action"] as? String == "secondaryButtonPressed" {
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
let targets = journal.apps { app, category in ["Instagram", "TikTok", "YouTube", "Reddit"].contains(app) || category == "Games" }
try answer(locked: Dictionary(uniqueKeysWithValues: targets.map { ($0, subtract(subtract(nights, lifted), passes[$0] ?? [])) }))
