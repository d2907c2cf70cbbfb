import DeviceActivity
import Foundation
import MonitorKit
import ShieldBusSDK

/// The profiles' shields, kept in true time: at every callback the monitor decides by the wall clock and the person's
/// choices, shields the selection or lifts it, and asks for a check at the next instant that can change: a profile's
/// edge or a break's end.
final class ProfilesMonitor: DeviceActivityMonitor {
    private lazy var defaults = Profiles.defaults()
    private lazy var shields = Shields(storeName: Profiles.store)
    private lazy var chain = defaults.map { CheckChain(defaults: $0, prefix: "profiles", reserve: Profiles.reserve) }

    override var subscriptions: [String] { super.subscriptions + ["state.changed", "device.clock-changed", "device.time-zone-changed"] }

    override func intervalDidStart(for activity: DeviceActivityName) {
        if let chain, chain.startMeansNothing(activity) { return }
        if activity == Profiles.reserve, chain?.takeReserveCheck() != true { return }
        sync()
    }

    override func intervalWillEndWarning(for activity: DeviceActivityName) {
        if let chain, chain.startMeansNothing(activity) { sync() }
    }

    override func handleOther(_ envelope: Envelope) {
        if envelope.topic == "state.changed" {
            guard envelope.bodyValue["group"]?.stringValue == Profiles.group,
                  let key = envelope.bodyValue["key"]?.stringValue, Profiles.appKeys.contains(key) else { return }
            sync()
        } else if envelope.isFromSystem {
            chain?.clockChanged()  // every wall-clock schedule now fires at another true instant
            sync()
        }
    }

    private func sync() {
        guard let defaults, let chain else { return }
        let now = Profiles.now
        do { try ZoneHistory(defaults: defaults).record() } catch { PluginRuntime.current?.logger.error("cannot note the time zone: \(error)") }
        let choices = Profiles.Choices(defaults)
        do {
            if choices.isLocked(at: now) {
                try shields.block(Profiles.selection(defaults))
            } else if try shields.isBlocking() {
                try shields.liftAll()
            }
            // Each profile's own edges: where they overlap, one starting inside the other changes nothing about "inside
            // a profile", yet a strict one starting during a break locks.
            var next = [Profiles.evening, Profiles.workday].map { [$0].nextChange(after: now, within: CheckChain.horizon) }.min()!
            if let end = choices.breakEnd, end > now { next = min(next, end) }
            try chain.call(at: next)
        } catch {
            PluginRuntime.current?.logger.error("cannot keep the profiles: \(error)")
        }
    }
}
