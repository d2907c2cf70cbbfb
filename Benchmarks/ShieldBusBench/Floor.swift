/// How often each guaranteed cost comes per journal event over the heavy days, and the sizes of the runs the targets
/// are about: counts measured on runs of the current build and kept here (docs/benchmarks.md, "The floor the
/// guarantees set", names the runs each comes from).
struct FloorCounts {
    /// Hand-offs the broker waits for (each a round trip between two processes).
    var turns = 0.14
    /// `bus.sqlite` saves (exclusive store).
    var busSaves = 0.42
    /// `device.sqlite` commits (shared store).
    var deviceCommits = 0.15
    /// Events recorded in a plugin's handled-events record, each one transaction (shared store).
    var handledRecords = 0.28
    /// App-Group writes (shared store).
    var appGroupWrites = 0.18
    /// Journal lines.
    var journalLines = 1.0

    /// The heavy-user year's journal events (the `simulation` suite's whole year).
    static let yearEvents = 516_616.0
    /// `make run`'s day: its journal events, and its processes (the broker unsandboxed, six plugins sandboxed).
    static let makeRunDayEvents = 353.0
    static let makeRunDayPlugins = 6.0
    static let cores = 2.0
}

/// The least CPU the guarantees allow per journal event — Σ count × unit cost — and what it makes of each target's
/// run. Lower bounds: a run pays more (the device OS's work, the plugins' own, every delivery beyond a turn's first),
/// never less while the guarantees stand. A turn is taken at the lesser of its two placements' costs (the processes
/// left to the scheduler, or held on one core), and a run's wall time at no less than its CPU spread over every core
/// nor than its serial part. The broker loop's figure is apart: it counts the commits the code runs on the loop's
/// thread today, which no guarantee puts there.
struct Floor {
    let units: FloorUnits
    var counts = FloorCounts()

    /// The targets (issue #28's): the year's wall time in s, make run's day's events/s, the broker loop's µs an event.
    static let yearTarget = 15.0
    static let makeRunDayTarget = 10_000.0
    static let brokerLoopTarget = 10.0

    /// µs of CPU per journal event, every process: each turn measured whole with the save before it and the
    /// handled record it makes (the processes wake each other, so a turn costs more than its parts alone), and the
    /// saves, handled records, commits and lines beyond the turns' at their costs alone — every `bus.sqlite` save
    /// beyond a turn at the turn's own save (`ledgerSave`), the same statements without the hand-off.
    func perEvent(_ turns: TurnCosts) -> Double {
        counts.turns * turns.durableTurn + max(0, counts.busSaves - counts.turns) * units.ledgerSave
            + (max(0, counts.handledRecords - counts.turns) + counts.deviceCommits + counts.appGroupWrites) * units.sharedCommit
            + counts.journalLines * units.journalLine
    }

    /// The same from the units alone (a bare round trip per turn, every commit apart): a looser bound.
    func perEventFromUnitsAlone(_ turns: TurnCosts) -> Double {
        counts.turns * turns.roundTrip + counts.busSaves * units.ledgerSave
            + (counts.deviceCommits + counts.handledRecords + counts.appGroupWrites) * units.sharedCommit
            + counts.journalLines * units.journalLine
    }

    /// µs of CPU per journal event on the broker's loop thread with the commits the code runs there today: its side
    /// of each durable turn (the save included), the saves beyond the turns', `device.sqlite`'s commits, the
    /// journal. Where those commits run is the code's choice, not a guarantee's: on another thread they would leave
    /// the loop only its side of the hand-offs (`brokerLoopHandOffsPerEvent`).
    func brokerLoopPerEvent(_ turns: TurnCosts) -> Double {
        counts.turns * turns.durableTurnSender + max(0, counts.busSaves - counts.turns) * units.ledgerSave
            + counts.deviceCommits * units.sharedCommit + counts.journalLines * units.journalLine
    }

    /// µs of CPU per journal event the hand-offs alone put on the broker's loop thread (its side of a bare round
    /// trip): what no placement of the commits takes off it.
    func brokerLoopHandOffsPerEvent(_ turns: TurnCosts) -> Double { counts.turns * turns.roundTripSender }

    /// µs of wall time per journal event that no second core can share: the turns' chain (the save, the hand-off,
    /// the handled record and the acknowledgement follow each other). The broker's loop with today's commits is
    /// not part of it: where those commits run is the code's choice. An approximation of the chain: a turn's CPU,
    /// every thread of both processes, stands for its wall time on one core — the I/O threads' work that overlaps
    /// the main threads' counts as if it followed it, and the wake-ups' waits, which cost no CPU, are left out.
    func serialPerEvent(_ turns: TurnCosts) -> Double { counts.turns * turns.durableTurn }

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
        let events = FloorCounts.makeRunDayEvents / 1e6
        return max(makeRunDayCPUSeconds / FloorCounts.cores, (units.swiftExec.cpu + units.sandboxedPlugin.cpu) / 1000 + serialPerEvent(turns) * events)
    }

    /// `make run`'s day's least CPU, in s: the starts and the events.
    var makeRunDayCPUSeconds: Double {
        (units.swiftExec.cpu + FloorCounts.makeRunDayPlugins * units.sandboxedPlugin.cpu) / 1000 + perEvent(turns) * FloorCounts.makeRunDayEvents / 1e6
    }

    var makeRunDayEventsPerSecond: Double { FloorCounts.makeRunDayEvents / makeRunDaySeconds }

    /// µs of CPU per journal event a target leaves for all the floor leaves out (the device OS, the scenario, the
    /// plugins' handlers, the deliveries beyond a turn's first), its CPU on every core: the year's, make run's day's.
    var yearCPUPerEventLeft: Double { Floor.yearTarget * FloorCounts.cores * 1e6 / FloorCounts.yearEvents - perEvent(turns) }
    var makeRunDayCPUPerEventLeft: Double {
        (FloorCounts.makeRunDayEvents / Floor.makeRunDayTarget * FloorCounts.cores - makeRunDayCPUSeconds) * 1e6 / FloorCounts.makeRunDayEvents
    }

    /// The rows of the table: the units, then a row per target with the floor beside it, which says whether the
    /// target lies at or above the floor (`Figure.reachable`: not ruled out by what the floor counts) — never
    /// whether it is met.
    var figures: [Figure] {
        func unit(_ name: String, _ value: Double, _ unit: String = "µs", _ note: String = "") -> Figure {
            Figure(name: "floor unit: " + name, value: value, unit: unit, baseline: nil, target: nil, better: .neither, note: note)
        }
        func floorRow(_ name: String, _ value: Double, _ unit: String, target: Double, better: Figure.Better, above: String, below: String) -> Figure {
            var figure = Figure(name: "floor: " + name, value: value, unit: unit, baseline: nil, target: target, better: better, isFloor: true)
            figure.note = figure.reachable == true ? "target above the floor: " + above : "target below the floor: " + below
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
            unit("sandboxed start to stop, a plugin's bare start, CPU", units.sandboxedPlugin.cpu, "ms",
                 String(format: "wall %.2f ms; ", units.sandboxedPlugin.wall) + units.pluginStart),
            unit("exec of an empty Swift program, CPU", units.swiftExec.cpu, "ms", String(format: "wall %.2f ms", units.swiftExec.wall)),
            unit("fork of a running Swift program, child exits, CPU", units.swiftFork.cpu, "ms", String(format: "wall %.2f ms", units.swiftFork.wall)),
            Figure(name: "floor per journal event, every process, CPU", value: perEvent(turns), unit: "µs", baseline: nil, target: nil, better: .lower,
                   note: String(format: "the year at it %.1f CPU-s; spread %.1f, on one core %.1f µs; from the units alone %.1f µs",
                                perEvent(turns) * events, perEvent(spread), perEvent(oneCore), perEventFromUnitsAlone(turns))),
            floorRow("heavy-user year, wall on 2 cores", yearSeconds, "s", target: Floor.yearTarget, better: .lower,
                     above: String(format: "not ruled out by the guarantees; %.1f CPU-µs an event left for all the floor leaves out; its serial part %.1f s",
                                   yearCPUPerEventLeft, serialPerEvent(turns) * events),
                     below: String(format: "ruled out while the guarantees stand; its serial part %.1f s", serialPerEvent(turns) * events)),
            floorRow("make run's day", makeRunDayEventsPerSecond, "events/s", target: Floor.makeRunDayTarget, better: .higher,
                     above: String(format: "not ruled out by the guarantees; %.1f ms, %.1f CPU-µs an event left for all the floor leaves out",
                                   makeRunDaySeconds * 1000, makeRunDayCPUPerEventLeft),
                     below: String(format: "ruled out while the guarantees stand; %.1f ms", makeRunDaySeconds * 1000)),
            floorRow("the broker's loop with today's commits on its thread, CPU per journal event", brokerLoopPerEvent(turns), "µs", target: Floor.brokerLoopTarget,
                     better: .lower, above: String(format: "its hand-offs alone %.1f µs", brokerLoopHandOffsPerEvent(turns)),
                     below: String(format: "out of reach while these commits run on the loop's thread, which no guarantee asks; its hand-offs alone %.1f µs",
                                   brokerLoopHandOffsPerEvent(turns))),
        ]
    }
}
