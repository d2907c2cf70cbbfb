// PluginAdministration: the person's tools start a plugin afresh (`plugin.restart.request`), given up on or not.

import BusProtocol

/// A developer who fixed a plugin the supervisor gave up on (it crashed in a loop, its executable was missing) starts
/// it again without restarting the device: `shieldbus plugin restart NAME` asks, the broker kills what runs, forgets
/// the failures, starts the plugin and answers with what it was before (`plugin.restart.reply`, the device API's reply
/// shape: `{ok, value}` or `{ok: false, error: {code, message}}`). Only the person's tools may ask (`Authority`).
final class PluginAdministration: BrokerService {
    private unowned let broker: Broker
    private var bus: (any ServiceBus)?

    init(broker: Broker) { self.broker = broker }

    let subscriptions = [Topic.pluginRestartRequest]

    func attach(to bus: any ServiceBus) { self.bus = bus }

    func handle(_ envelope: Envelope) {
        guard envelope.topic == Topic.pluginRestartRequest, let corr = envelope.corr, let supervisor = broker.supervisor else { return }
        let name = envelope.bodyValue["name"]?.stringValue ?? ""
        let reply: JSONValue
        if let plugin = supervisor.plugin(named: name) {
            let was = PluginAdministration.stateName(plugin)
            broker.restarts.restart(named: name, reason: "restarted by \(envelope.sender)", revivingFailed: true)
            if plugin.state == .stopped && plugin.pid == nil { supervisor.startStopped(named: name) }
            reply = ["ok": true, "value": ["name": .string(name), "was": .string(was)]]
        } else {
            let names = supervisor.plugins.map(\.spec.name)
            reply = ["ok": false, "error": ["code": "unknown-plugin",
                                            "message": .string("no plugin named '\(name)'; the configuration's plugins: \(names.joined(separator: ", "))")]]
        }
        bus?.emit(topic: Topic.reply(to: envelope.topic), body: reply, corr: corr)
    }

    static func stateName(_ plugin: PluginSupervisor.Plugin) -> String {
        switch plugin.state {
        // A short-lived extension whose run ended waits for that run's goodbye before its next launch: no process runs.
        case .running where plugin.restartAfterBye != nil: return "relaunching"
        // A try of a plugin waiting for its storage, not yet connected: still waiting, until its hello.
        case .running where plugin.isWaitingForStorage: return "waiting-for-storage"
        case .running: return "running"
        case .backingOff: return "restarting"
        case .waitingForStorage: return "waiting-for-storage"
        case .failed: return "failed"
        case .stopped: return "stopped"
        }
    }
}
