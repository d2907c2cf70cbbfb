// Habit Lock's shield: the day's habits still to do, and the re-block of an unlock that ended.

import DeviceActivity
import Foundation
import ManagedSettingsUI
import ShieldBusSDK

/// Habit Lock's shield: the selection unlocks when the day's habits are done; after each request it re-blocks when no
/// unlock is running.
open class HabitLockShield: ReferenceShieldRenderer {
    /// An unlock ends at its absolute end: a new day (or a first check ever) does not cut it short, so an unlock
    /// across midnight runs on past 00:00.
    open override func productReblockCheck() throws {
        let state = try LockState.read(from: defaults)
        if !state.isUnlockActive(at: now) {
            try shields.block(ReferenceMonitor.currentBlockList(state, center: DeviceActivityCenter(), names: ReferenceMonitorNames(options: options)))
        }
    }

    open override func productShield(over what: String, kind: Kind) -> ShieldConfiguration {
        let done = ((try? defaults.value([String].self, forKey: SharedKey.habits(on: DayKey.today()))) ?? nil)?.count ?? 0
        return shield(title: "Habits first", subtitle: "\(what) unlocks when today's habits are done (\(done) of \(options.habitsPerDay)).",
                      button: "Close", buttonColor: ShieldColor(red: 0.2, green: 0.55, blue: 0.9))
    }
}
