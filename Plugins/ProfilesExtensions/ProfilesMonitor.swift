import DeviceActivity
import Foundation
import MonitorKit
import ShieldBusSDK

/// The profiles' shields, kept in true time (`ChainedMonitor`): the selection shielded while a profile or a session
/// locks it, lifted otherwise, and a check at the next instant that can change: a profile's edge or a break's end.
final class ProfilesMonitor: ChainedMonitor {
    init() { super.init(product: Profiles.product) }

    override var watchedKeys: [String] { super.watchedKeys + Profiles.choiceKeys }

    override func decide(at now: Date, defaults: SharedDefaults, zones: ZoneReading) throws -> Date {
        let choices = Profiles.Choices(defaults, zones: zones)
        if choices.isLocked(at: now) {
            try shields.block(product.selection(defaults))
        } else if try shields.isBlocking() {
            try shields.liftAll()
        }
        // Each profile's own edges: where they overlap, one starting inside the other changes nothing about "inside
        // a profile", yet a strict one starting during a break locks.
        var next = [Profiles.evening, Profiles.workday].map { [$0].nextChange(after: now, within: CheckChain.horizon) }.min()!
        if let end = choices.breakEnd, end > now { next = min(next, end) }
        return next
    }
}
