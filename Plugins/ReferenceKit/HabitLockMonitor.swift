import DeviceActivity
import Foundation
import Logging
import ShieldBusSDK

/// Habit Lock's monitor: the selection stays shielded until the day's habits are done; an unlock lasts its minutes in
/// true time, kept honest by chained re-checks (lesson 2) and a guarded `intervalDidEnd` (lesson 3).
open class HabitLockMonitor: ReferenceMonitor {
    /// The re-checks to schedule when an unlock starts: 15, 30 and 44 minutes out — never further than 44 —
    /// or one minute past the expected expiry when that is sooner (lesson 8: whole minutes need a buffer).
    open func initialChecks(from now: Date, quotaEnd: Date) -> [Date] {
        let buffered = TrueTimeSchedules.minuteAfter(quotaEnd)
        return Array(Set([15, 30, 44].map { min(now.addingTimeInterval(Double($0) * 60), buffered) })).sorted()
    }

    /// The next re-check after one that found the unlock still running: 16 minutes out, or one minute past expiry.
    open func nextCheck(from now: Date, quotaEnd: Date) -> Date {
        min(now.addingTimeInterval(16 * 60), TrueTimeSchedules.minuteAfter(quotaEnd))
    }

    /// Whether the unlock is over. Timestamp over flag (lesson 6).
    open func unlockHasEnded(_ state: LockState) -> Bool { !state.isUnlockActive(at: now) }

    /// The unlock started or changed (the companion app wrote the flag and timestamp).
    open override func unlockChanged() {
        guard let state = readState() else { return }
        if unlockHasEnded(state) {
            reblock(state, reason: "the unlock is over")
            return
        }
        guard let quotaEnd = state.quotaEnd else { return }
        do {
            try shields.liftAll()
            for check in initialChecks(from: now, quotaEnd: quotaEnd) { try chain.scheduleCheck(at: check) }
        } catch {
            logger?.error("cannot start the unlock: \(error)")
        }
    }

    /// The daily interval started again mid-unlock — the app registered it anew after an approval. A revocation took the
    /// unlock's chained checks with every other schedule, so nothing would re-block at its end: the chain starts again
    /// when no check of it is registered.
    func checkTheRunningUnlock(_ state: LockState) {
        guard let quotaEnd = state.quotaEnd else { return }
        do {
            let registered = try center.monitoredActivities()
            guard !registered.contains(where: { chain.isChainSlot($0) || chain.isWarningSlot($0) }), chain.reserveCheck() == nil else { return }
            for check in initialChecks(from: now, quotaEnd: quotaEnd) { try chain.scheduleCheck(at: check) }
        } catch {
            logger?.error("cannot check the running unlock again: \(error)")
        }
    }

    /// A re-check fired: re-block if the unlock is over, else chain the next check.
    open func runCheck() {
        guard let state = readState() else { return }
        if unlockHasEnded(state) {
            reblock(state, reason: "re-check found the unlock over")
        } else if let quotaEnd = state.quotaEnd {
            do { try chain.scheduleCheck(at: nextCheck(from: now, quotaEnd: quotaEnd)) } catch { logger?.error("cannot chain the next check: \(error)") }
        }
    }

    /// Whether an ending interval may re-block. `startMonitoring` on a monitored name calls `intervalDidEnd`
    /// (lesson 3): it does not mean the person's time is up, so check the actual state (the 1 AM bug).
    open func shouldReblock(afterEndOf activity: DeviceActivityName, _ state: LockState) -> Bool {
        unlockHasEnded(state)
    }

    open override func productCheckIsDue(for activity: DeviceActivityName) {
        guard activity == names.daily else { return }
        // A new day re-blocks unless an unlock still runs: an unlock keeps its absolute end across midnight, not cut
        // at 00:00. The daily interval also "starts" again when the app re-registers it mid-day.
        guard let state = readState() else { return }
        if unlockHasEnded(state) {
            reblock(state, reason: "a new day")
        } else {
            checkTheRunningUnlock(state)
        }
    }

    open override func chainedCheckIsDue() {
        runCheck()
    }

    open override func productIntervalDidEnd(_ activity: DeviceActivityName) {
        // The reserve's interval ends when its check is moved, and its set-up interval holds nothing: its starts check.
        guard activity != names.reserve, let state = readState() else { return }
        if shouldReblock(afterEndOf: activity, state) { reblock(state, reason: "\(activity.rawValue) ended") }
    }

    open override func clockChanged() {
        super.clockChanged()
        guard let state = readState() else { return }
        if unlockHasEnded(state) {
            reblock(state, reason: "the device clock was set")
        } else if let quotaEnd = state.quotaEnd {
            do { try chain.scheduleCheck(at: nextCheck(from: now, quotaEnd: quotaEnd)) } catch { logger?.error("cannot plan the re-check again: \(error)") }
        }
    }
}
