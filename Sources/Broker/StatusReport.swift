// StatusReport: what `shieldbus status` shows — the broker, its counters, every session and supervised plugin.

import BusClient
import BusProtocol
import Foundation

/// The status report, made when asked. Without a trusted credential only what is harmless: no pids, no paths, no
/// error texts (they quote plugins' logs), no endpoint.
struct StatusReport {
    /// What the broker says of itself.
    struct Facts {
        let runtimeDirectory: String
        let endpoint: String
        let clock: BusClock
        let startedAt: Int64
        let lastSeq: UInt64
        let lastStorageError: String?
    }

    let broker: Facts
    let sessions: [Session]
    let supervisor: PluginSupervisor
    let ledger: DeliveryLedger
    let statistics: BusStatistics

    func json(full: Bool) -> JSONValue {
        let report = json()
        guard !full else { return report }
        let hidden: Set<String> = ["pid", "log", "lastError", "lastExit", "runtimeDir", "endpoint"]
        func redact(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let fields): return .object(fields.filter { !hidden.contains($0.key) }.mapValues(redact))
            case .array(let items): return .array(items.map(redact))
            default: return value
            }
        }
        return redact(report)
    }

    private func json() -> JSONValue {
        let now = monotonicMilliseconds()
        var plugins: [JSONValue] = []
        var seen = Set<String>()
        for session in sessions {
            seen.insert(session.name)
            var entry: [String: JSONValue] = [
                "name": .string(session.name), "role": .string(session.role.rawValue), "connected": true,
                "subscriptions": .array(session.subscriptions.map(JSONValue.string)),
                "uptimeMs": .int(now - session.connectedAt), "delivered": .int(Int64(session.delivered)),
                "lag": .int(Int64(session.lag)), "dropped": .int(Int64(session.dropped)),
                "gaps": .int(Int64(session.gapsReported)), "errors": .int(Int64(session.errors)),
                "acknowledges": .bool(session.acknowledges),
            ]
            if session.isDurable { entry["kept"] = .int(Int64(ledger.count(of: session.name))) }
            if let pid = session.pid { entry["pid"] = .int(pid) }
            if let watch = session.watch { entry["watch"] = watch.jsonValue }
            if let error = session.lastError { entry["lastError"] = .string(error) }
            if let plugin = supervisor.plugin(named: session.name) { entry.merge(supervision(plugin, now: now)) { _, new in new } }
            plugins.append(.object(entry))
        }
        for plugin in supervisor.plugins where !seen.contains(plugin.spec.name) {
            var entry = supervision(plugin, now: now)
            entry["name"] = .string(plugin.spec.name)
            entry["role"] = .string(plugin.spec.role.rawValue)
            entry["connected"] = false
            plugins.append(.object(entry))
        }
        var errors: [String: JSONValue] = [:]
        for (code, count) in statistics.errorsByCode { errors[code] = .int(Int64(count)) }
        var facts: [String: JSONValue] = [
            "pid": .int(Int64(getpid())), "runtimeDir": .string(broker.runtimeDirectory),
            "endpoint": .string(broker.endpoint), "clock": .string(broker.clock.mode), "time": .int(broker.clock.now()),
            "clockPaused": .bool(broker.clock.isPaused),
            "uptimeMs": .int(now - broker.startedAt), "seq": .int(Int64(broker.lastSeq)),
            "lastStorageError": broker.lastStorageError.map(JSONValue.string) ?? .null,
        ]
        if case .scaled(let speed) = broker.clock.clockMode { facts["clockSpeed"] = .double(speed) }
        return [
            "broker": .object(facts),
            "counters": [
                "storageErrors": .int(Int64(statistics.errorsByCode["storage-failed"] ?? 0)),
                "events": .int(Int64(statistics.events)), "deliveries": .int(Int64(statistics.deliveries)),
                "dropped": .int(Int64(statistics.dropped)), "errors": .int(Int64(statistics.errors)),
                "repeatsDropped": .int(Int64(statistics.repeatsDropped)),
                "turns": .int(Int64(statistics.turns)),
                "errorsByCode": .object(errors),
            ],
            "plugins": .array(plugins),
        ]
    }

    private func supervision(_ plugin: PluginSupervisor.Plugin, now: Int64) -> [String: JSONValue] {
        var entry: [String: JSONValue] = ["restarts": .int(Int64(plugin.restarts)), "supervised": true]
        entry["state"] = .string(PluginAdministration.stateName(plugin))
        switch plugin.state {
        case .running where plugin.restartAfterBye == nil: entry["processUptimeMs"] = .int(now - plugin.startedAt)
        case .failed(let why): entry["lastError"] = .string(why)
        default: break
        }
        if let pid = plugin.programPID ?? plugin.pid { entry["pid"] = .int(Int64(pid)) }
        entry["log"] = .string(supervisor.log(of: plugin).path)
        if let exit = plugin.lastExit { entry["lastExit"] = .string(exit) }
        if entry["lastError"] == nil, let error = plugin.lastError { entry["lastError"] = .string(error) }
        return entry
    }
}
