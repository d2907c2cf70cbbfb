// alternate-days-model: the promise model of fixture-alternate-days, with Foundation alone (and ModelSupport) — it reads
// the journal's OS events as JSON lines on standard input and answers when each picked app must be locked: every local
// day whose number since 1970-01-01 is even, by the wall clock of the zone in force (docs/promises.md, "The escape hatch").
import Foundation
import ModelSupport

let journal = ModelInput.read()
let restDays = journal.periods { journal.wallClock(at: $0).day % 2 == 0 }
let apps = journal.apps { app, _ in ["Instagram", "TikTok", "YouTube"].contains(app) }
try answer(locked: Dictionary(uniqueKeysWithValues: apps.map { ($0, restDays) }))
