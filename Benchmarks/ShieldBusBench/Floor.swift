/// How often each guaranteed cost comes per journal event over the heavy days (docs/benchmarks.md: "Turns only where
/// needed", "SQLite's share of a heavy day"), and the sizes of the runs the targets are about.
struct FloorCounts {
    /// Hand-offs the broker waits for (each a round trip between two processes).
    var turns = 0.23
    /// `bus.sqlite` saves (exclusive store).
    var busSaves = 0.46
    /// `device.sqlite` commits (shared store).
    var deviceCommits = 0.21
    /// Events recorded in a plugin's handled-events record, each one transaction (shared store).
    var handledRecords = 0.53
    /// App-Group writes (shared store).
    var appGroupWrites = 0.18
    /// Journal lines.
    var journalLines = 1.0

    /// The heavy-user year's journal events (seed 2026, 365 days).
    static let yearEvents = 518_236.0
    /// `make run`'s day: its journal events, and its processes (the broker unsandboxed, six plugins sandboxed).
    static let makeRunDayEvents = 353.0
    static let makeRunDayPlugins = 6.0
    static let cores = 2.0
}

/// The least CPU the guarantees allow per journal event — Σ count × unit cost — and what it makes of each target's
/// run. Lower bounds: a run pays more (the device OS's work, the plugins' own, every delivery beyond a turn's first),
/// never less while the guarantees stand. A turn is taken at the lesser of its two placements' costs (the processes
/// left to the scheduler, or held on one core), and a run's wall time at no less than its CPU spread over every core
/// nor than its serial part.
struct Floor {
    let units: FloorUnits
    var counts = FloorCounts()

    /// µs of CPU per journal event, every process: each turn measured whole with the save before it and the
    /// handled record it makes (the processes wake each other, so a turn costs more than its parts alone), and the
    /// saves, handled records, commits and lines beyond the turns' at their costs alone.
    func perEvent(_ turns: TurnCosts) -> Double {
        counts.turns * turns.durableTurn + max(0, counts.busSaves - counts.turns) * units.exclusiveCommit
            + (max(0, counts.handledRecords - counts.turns) + counts.deviceCommits + counts.appGroupWrites) * units.sharedCommit
            + counts.journalLines * units.journalLine
    }

    /// The same from the units alone (a bare round trip per turn, every commit apart): a looser bound.
    func perEventFromUnitsAlone(_ turns: TurnCosts) -> Double {
        counts.turns * turns.roundTrip + counts.busSaves * units.exclusiveCommit
            + (counts.deviceCommits + counts.handledRecords + counts.appGroupWrites) * units.sharedCommit
            + counts.journalLines * units.journalLine
    }

    /// µs of CPU per journal event on the broker's loop thread: its side of each durable turn (the save included),
    /// the saves beyond the turns', `device.sqlite`'s commits, the journal.
    func brokerLoopPerEvent(_ turns: TurnCosts) -> Double {
        counts.turns * turns.durableTurnSender + max(0, counts.busSaves - counts.turns) * units.exclusiveCommit
            + counts.deviceCommits * units.sharedCommit + counts.journalLines * units.journalLine
    }

    /// µs of wall time per journal event that no second core can share: the turns' chain (the save, the hand-off,
    /// the handled record and the acknowledgement follow each other) and the broker's loop, one thread.
    func serialPerEvent(_ turns: TurnCosts) -> Double { max(counts.turns * turns.durableTurn, brokerLoopPerEvent(turns)) }

    /// Each turn figure at the lesser of the two placements'.
    var turns: TurnCosts {
        let (spread, oneCore) = (units.spread, units.oneCore)
        return TurnCosts(roundTrip: min(spread.roundTrip, oneCore.roundTrip), roundTripSender: min(spread.roundTripSender, oneCore.roundTripSender),
                         durableTurn: min(spread.durableTurn, oneCore.durableTurn),
                         durableTurnSender: min(spread.durableTurnSender, oneCore.durableTurnSender))
    }

    /// The heavy year's least wall time, in s: its CPU on every core, all busy all the time, and never less than its
    /// serial part.
    var yearSeconds: Double {
        let events = FloorCounts.yearEvents / 1e6
        return max(perEvent(turns) * events / FloorCounts.cores, serialPerEvent(turns) * events)
    }

    /// `make run`'s day's least wall time, in s: the CPU of the broker's start and stop, the six sandboxed plugin
    /// starts and stops and the events, on every core; never less than the broker's start, one sandboxed start and
    /// the events' serial part one after the other. Each start by its CPU rather than its wall time, which other work
    /// on the machine stretches.
    var makeRunDaySeconds: Double {
        let starts = (units.swiftExec.cpu + FloorCounts.makeRunDayPlugins * units.sandboxedSwift.cpu) / 1000
        let events = FloorCounts.makeRunDayEvents / 1e6
        return max((starts + perEvent(turns) * events) / FloorCounts.cores,
                   (units.swiftExec.cpu + units.sandboxedSwift.cpu) / 1000 + serialPerEvent(turns) * events)
    }

    var makeRunDayEventsPerSecond: Double { FloorCounts.makeRunDayEvents / makeRunDaySeconds }

    /// The rows of the table: the units, then a row per target with the floor beside it. `met` says whether the
    /// target lies at or above the floor (reachable under the guarantees); "below the floor" when it does not.
    var figures: [Figure] {
        func unit(_ name: String, _ value: Double, _ unit: String = "µs", _ note: String = "") -> Figure {
            Figure(name: "floor unit: " + name, value: value, unit: unit, baseline: nil, target: nil, better: .neither, note: note)
        }
        func verdict(_ figure: Figure) -> Figure {
            var figure = figure
            figure.note = (figure.met == false ? "target below the floor" : "target above the floor") + (figure.note.isEmpty ? "" : "; " + figure.note)
            return figure
        }
        let (spread, oneCore) = (units.spread, units.oneCore)
        let events = FloorCounts.yearEvents / 1e6
        return [
            unit("libzmq round trip between two processes, CPU", spread.roundTrip, "µs",
                 String(format: "its sender's main thread %.1f µs; on one core %.1f (%.1f) µs", spread.roundTripSender, oneCore.roundTrip, oneCore.roundTripSender)),
            unit("durable turn (save, hand-off, handled record, ack), CPU", spread.durableTurn, "µs",
                 String(format: "its sender's main thread %.1f µs; on one core %.1f (%.1f) µs", spread.durableTurnSender, oneCore.durableTurn, oneCore.durableTurnSender)),
            unit("WAL commit, exclusive (bus.sqlite's mode), CPU", units.exclusiveCommit, "µs",
                 String(format: "the turn's bus.sqlite-like save alone %.1f µs", units.ledgerSave)),
            unit("WAL commit, shared (device, handled, App Group), CPU", units.sharedCommit),
            unit("journal line, CPU", units.journalLine),
            unit("sandboxed start to stop, /bin/true, CPU", units.sandboxedTrue.cpu, "ms", String(format: "wall %.2f ms", units.sandboxedTrue.wall)),
            unit("sandboxed start to stop, empty Swift program, CPU", units.sandboxedSwift.cpu, "ms", String(format: "wall %.2f ms", units.sandboxedSwift.wall)),
            unit("exec of an empty Swift program, CPU", units.swiftExec.cpu, "ms", String(format: "wall %.2f ms", units.swiftExec.wall)),
            unit("fork of a running Swift program, child exits, CPU", units.swiftFork.cpu, "ms", String(format: "wall %.2f ms", units.swiftFork.wall)),
            Figure(name: "floor per journal event, every process, CPU", value: perEvent(turns), unit: "µs", baseline: nil, target: nil, better: .lower,
                   note: String(format: "the year at it %.1f CPU-s; spread %.1f, on one core %.1f µs; from the units alone %.1f µs",
                                perEvent(turns) * events, perEvent(spread), perEvent(oneCore), perEventFromUnitsAlone(turns))),
            verdict(Figure(name: "floor: heavy-user year, wall on 2 cores", value: yearSeconds, unit: "s", baseline: nil, target: 15, better: .lower,
                           note: String(format: "its serial part %.1f s", serialPerEvent(turns) * events))),
            verdict(Figure(name: "floor: make run's day", value: makeRunDayEventsPerSecond, unit: "events/s", baseline: nil, target: 10_000, better: .higher,
                           note: String(format: "%.1f ms", makeRunDaySeconds * 1000))),
            verdict(Figure(name: "floor: broker's loop CPU per journal event", value: brokerLoopPerEvent(turns), unit: "µs", baseline: nil, target: 10,
                           better: .lower)),
        ]
    }
}
