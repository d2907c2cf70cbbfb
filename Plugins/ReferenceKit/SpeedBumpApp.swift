// Speed Bump's companion app: the daily threshold's schedule, and the day's speed bump raised again after a revocation.

import DeviceActivity
import Foundation
import ShieldBusSDK

/// Speed Bump's app: the all-day schedule whose event is the daily threshold, registered so that neither a relaunch
/// nor an approval forgives the day's use.
open class SpeedBumpApp: ReferenceCompanionApp {
    open override func startProductSchedules(afterLostAuthorization: Bool) throws {
        registerReserve()
        // Registering the threshold again restarts its count (the OS counts from the registration), so a relaunch
        // of the app — a force-quit, a restart — would forgive the use so far. Nor during a dismiss's cooldown: the
        // monitor resumes the count when it ends.
        let cooldownEnd = (try? defaults.double(forKey: SharedKey.nudgeCooldownUntil)) ?? nil
        let cooling = cooldownEnd.map { $0 > now.timeIntervalSince1970 } ?? false
        guard try !center.monitoredActivities().contains(names.daily), !cooling else { return }
        // The speed bump promises N minutes a day. A revocation stopped its schedules, so the registration made again
        // at the approval must count the day's use before it (Apple's `includesPastActivity`): otherwise the OS counts
        // from the approval and forgives that use. Not when a dismiss's cooldown ended today: the count started again
        // there, and the day's use before it would raise the speed bump over the dismissed app at once. The first
        // set-up, and every other registration, keeps Apple's default: the count starts at the registration.
        let countStartedToday = cooldownEnd.map { $0 >= OSDay.current(in: defaults, saving: false).start.timeIntervalSince1970 } ?? false
        let list = try LockState.readBlockList(from: defaults)
        try center.startMonitoring(names.daily, during: TrueTimeSchedules.allDay, events: [
            names.thresholdEvent: options.thresholdEvent(list, includingPastActivity: afterLostAuthorization && !countStartedToday),
        ])
    }

    /// The revocation cleared the shields of a speed bump raised today, which holds to the device's midnight: it goes
    /// up again at once, over every picked app but the one a dismiss let through since it was raised. The threshold
    /// registered again cannot say so when a cooldown restarted the day's count (it then counts from the approval), and
    /// the other picked apps would stay usable after the approval, though the dismiss let only its own app through.
    open override func restoreShieldsAfterLostAuthorization() throws {
        guard try defaults.string(forKey: SharedKey.speedBumpDay) == OSDay.current(in: defaults, saving: false).key,
              let raised = try defaults.double(forKey: SharedKey.speedBumpRaised) else { return }
        let dismissedSince = try defaults.double(forKey: SharedKey.nudgeCooldownUntil).map { $0 > raised } ?? false
        let dismissed = dismissedSince ? try DismissedApplication.current(in: defaults).map { [$0] } ?? [] : []
        let list = ReferenceMonitor.currentBlockList(try readStateRepairingFromPicker(), center: center, names: names)
        try shields.block(list, passing: Set(dismissed))
    }
}
