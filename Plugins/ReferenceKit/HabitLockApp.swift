// Habit Lock's companion app: the daily schedule, habits, unlocks and the synchronous foreground check.

import DeviceActivity
import Foundation
import Logging
import ShieldBusSDK

/// Habit Lock's app: the day's habits done start an unlock of its minutes, which the app ends at its own timer and
/// the monitor by its re-checks; every foreground re-blocks first when no unlock runs.
open class HabitLockApp: ReferenceCompanionApp {
    open override func startProductSchedules(afterLostAuthorization: Bool) throws {
        try center.startMonitoring(names.daily, during: TrueTimeSchedules.allDay)
        registerReserve()
    }

    /// A direct read of the shared state and a direct write of the shields, with no suspension point in between, so
    /// nothing can stop it half-way (lessons 7 and 9).
    open override func foregroundCheck() {
        do {
            let state = try readStateRepairingFromPicker()
            if state.isUnlockActive(at: now) { return }
            try shields.block(state.blockList)
            if state.isCurrentlyUnlocked { try defaults.set(false, forKey: SharedKey.isCurrentlyUnlocked) }  // a stale flag (lesson 6)
        } catch {
            logger?.error("foreground check failed: \(error)")
        }
    }

    // MARK: Habits and unlocks

    open override func habitCompleted(_ habit: String) {
        let key = SharedKey.habits(on: DayKey.today())
        do {
            var done = try defaults.value([String].self, forKey: key) ?? []
            guard !done.contains(habit) else { return }
            done.append(habit)
            try defaults.set(done, forKey: key)
            if done.count == options.habitsPerDay { try startUnlock() }
        } catch {
            PluginRuntime.current?.reportWriteFailure("the habit '\(habit)'", error)
        }
    }

    /// Starts an unlock: the flag and the timestamp together; the monitor lifts the shields in response.
    open func startUnlock() throws {
        let until = now.addingTimeInterval(Double(options.unlockMinutes) * 60)
        _ = try defaults.transaction { tx in
            _ = try tx.set(until.timeIntervalSince1970, forKey: SharedKey.quotaEndTimestamp)
            _ = try tx.set(true, forKey: SharedKey.isCurrentlyUnlocked)
        }
        try PluginRuntime.current?.publish("app.unlock.started", json: ["until": .int(busTime(until)), "minutes": .int(Int64(options.unlockMinutes))])
        // The app's own timer clears the flag — but it stops while the app is suspended, so no path trusts it alone.
        try scheduleTimer(id: "unlock-expiry", at: until)
    }

    open override func timerFired(_ id: String) {
        guard id == "unlock-expiry" else { return super.timerFired(id) }
        endUnlock()
    }

    /// Ends the unlock: the synchronous re-block first, then the slower clean-up that may be suspended (lesson 9).
    open func endUnlock() {
        foregroundCheck()
        do {
            try suspensionPoint()
            try defaults.set(false, forKey: SharedKey.isCurrentlyUnlocked)
            try suspensionPoint()
            try PluginRuntime.current?.publish("app.unlock.ended", json: [:])
        } catch {
            logger?.warning("the unlock clean-up was interrupted: \(error)")
        }
    }
}
