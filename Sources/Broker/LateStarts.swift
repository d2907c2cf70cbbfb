// LateStarts: plugins' processes started and not yet said hello past `bus.startupTimeoutMs`, judged by their progress in virtual time.

import Foundation

/// A plugin's process that has not said hello within `bus.startupTimeoutMs` of its start: in real time it is late,
/// whatever it does. In virtual time a start still at work (runnable, or using CPU since the last look) is late on a
/// machine busy with other work, not hung — going on without it, or killing it, would put `startup-timeout`, its exit
/// and its restart in the journal by process timing — so it is waited for, up to the busy limit; a start blocked with
/// no CPU used is hung. The first look at a start only reads it, so that the next compares the CPU used over a
/// heartbeat interval. The same rule for the bus's first start (`bus.ready` waits) and for a start after it (no kill).
final class LateStarts {
    private var watch = ProgressWatch<String>()
    private let supervisor: PluginSupervisor
    private let sessions: SessionTable
    private let limit: Int64
    private let clock: BusClock
    /// When the bus's start-up limit first passed with plugins not connected: `bus.ready` waits at most the busy limit
    /// from then, whatever starts again meanwhile (an extension that exits before its hello starts again at once).
    private var readinessHeldSince: Int64?

    init(supervisor: PluginSupervisor, sessions: SessionTable, settings: BrokerSettings, clock: BusClock) {
        (self.supervisor, self.sessions, self.limit, self.clock) = (supervisor, sessions, settings.startupTimeoutMilliseconds, clock)
    }

    /// The plugins whose process runs and has not said hello. One already killed is waiting for its exit to be reaped
    /// (by the broker, or by its launch template and told), which on a loaded machine can take past the next heartbeat:
    /// counted again, one late start would be given up as three.
    private var starting: [PluginSupervisor.Plugin] {
        supervisor.plugins.filter { $0.state == .running && $0.pid != nil && $0.killReason == nil && sessions.named($0.spec.name) == nil }
    }

    /// Whether `plugin`'s late start is waited for on (virtual time, still at work, within the busy limit).
    private func waitsOn(_ plugin: PluginSupervisor.Plugin, now: Int64) -> Bool {
        guard clock.isVirtual, let pid = plugin.programPID ?? plugin.pid else { return false }
        return watch.waitsOn(plugin.spec.name, pid: pid, waited: now - plugin.startedAt, limit: limit)
    }

    /// The bus's start-up limit has passed with plugins not connected: whether `bus.ready` waits on, in virtual time,
    /// for one of them — one started again since (within its own limit), or one still at work — within the busy limit
    /// of the first ask. Each late one is looked at, so that every one has its reading.
    func holdUpReadiness(now: Int64) -> Bool {
        guard clock.isVirtual else { return false }
        let heldSince = readinessHeldSince ?? now
        readinessHeldSince = heldSince
        guard now - heldSince < ProcessProgress.busyLimit(for: limit) else { return false }
        return starting.reduce(false) { waiting, plugin in
            (now - plugin.startedAt < limit || waitsOn(plugin, now: now)) || waiting
        }
    }

    /// The starts past the limit not waited for on: hung, to be killed.
    func hung(now: Int64) -> [PluginSupervisor.Plugin] {
        let late = starting.filter { now - $0.startedAt > limit }
        watch.keep(only: Set(late.map(\.spec.name)))
        return late.filter { !waitsOn($0, now: now) }
    }
}
