// PluginRestarts: the device's restarts of plugin processes, and the broker's own crash played within the run.

import BusProtocol

/// A device restart, a force-quit, a scenario's `crashBroker`: each ends sessions at once and has the supervisor start
/// the plugins' processes again. Also `bus.started`'s body, which a played crash announces again.
final class PluginRestarts {
    private let supervisor: PluginSupervisor
    private let sessions: SessionTable
    private let reception: Reception
    private let requests: OpenRequests
    private let outbox: Outbox
    private let settings: BrokerSettings
    private let clock: BusClock

    init(supervisor: PluginSupervisor, sessions: SessionTable, reception: Reception, requests: OpenRequests, outbox: Outbox,
         settings: BrokerSettings, clock: BusClock) {
        (self.supervisor, self.sessions, self.reception, self.requests) = (supervisor, sessions, reception, requests)
        (self.outbox, self.settings, self.clock) = (outbox, settings, clock)
    }

    /// `bus.started`'s body: the clock's mode, and the fidelity the OS plays — profile, iOS release (when one is played),
    /// quirks — so a judge of the journal knows it.
    func startedBody() -> [String: JSONValue] {
        var body: [String: JSONValue] = ["clock": .string(clock.mode)]
        for key in ["profile", "ios", "quirks"] { body[key] = settings.settingsForPlugins[key] }
        return body
    }

    /// What a SIGKILL of the broker loses, then its start again on the same state (see `ServiceBus.crashAndRestart`).
    func crashAndRestart() {
        requests.removeAll()
        // What each plugin had not acknowledged stays in the delivery ledger (as in bus.sqlite after a real SIGKILL)
        // and goes to its next process; the broker's crash is not held against the event a plugin had in hand.
        for plugin in supervisor.plugins {
            if let session = sessions.named(plugin.spec.name) { reception.forget(session, saidBye: true) }
        }
        supervisor.restartAll(reason: "broker crash")
        var body = startedBody()
        body["after"] = "crash"
        outbox.emit(topic: "bus.started", body: .object(body))
    }

    /// Kills and restarts every supervised plugin, or the one named; their sessions end at once. `revivingFailed`:
    /// one given up on starts afresh too (a developer's `shieldbus plugin restart`, after fixing it).
    func restart(named name: String? = nil, reason: String, revivingFailed: Bool = false) {
        for plugin in supervisor.plugins where name == nil || plugin.spec.name == name {
            if let session = sessions.named(plugin.spec.name) { reception.remove(session, reason: reason) }
        }
        if let name { supervisor.restart(named: name, reason: reason, revivingFailed: revivingFailed) } else { supervisor.restartAll(reason: reason) }
    }
}
