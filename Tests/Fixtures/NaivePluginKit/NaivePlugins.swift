// NaivePluginKit: the reference plugins with exactly one of the seeds' bugs each (NAIVE_FLAW), for the lesson tests.
// Test code only, never shipped: every variant here is how a plugin first goes wrong on a real phone.
//
// `naive-plugin monitor|shield|action|app` runs them (the flaw comes from the NAIVE_FLAW environment variable).
// A flaw also switches off the other blocking paths that would hide it, as the seed's first version lacked them.

import Foundation
import ReferenceKit
import ShieldBusSDK

/// The launch's flaw: its own when hosted in a test's process beside plugins with others.
var flaw: String { PluginEnvironment["NAIVE_FLAW"] ?? "" }

/// Flaws whose plugin set relies on a single blocking path: no monitor re-checks, no renderer check.
let singlePath: Set<String> = ["app-timer-only", "foreground-only", "one-far-check", "single-slot-name", "no-buffer",
                               "async-reblock", "foreground-late-check", "write-back-empty"]

/// Blocks apps only — no categories, no web domains (lesson 5).
func blockAppsOnly(_ shields: Shields, _ list: BlockList) {
    try? shields.store.shield.update { $0.applications = ($0.applications ?? []).union(list.applications) }
}

final class NaiveMonitor: HabitLockMonitor {
    override func chainSlotName(_ index: Int) -> DeviceActivityName {
        ["single-slot-name", "unguarded-interval-end"].contains(flaw) ? DeviceActivityName("\(options.product.rawValue).reblock") : super.chainSlotName(index)
    }

    override func initialChecks(from now: Date, quotaEnd: Date) -> [Date] {
        switch flaw {
        case "one-far-check": return [TrueTimeSchedules.minuteAfter(quotaEnd)]  // however far ahead
        case "single-slot-name": return [TrueTimeSchedules.minuteAfter(quotaEnd)] + [15, 30, 44].map { now.addingTimeInterval(Double($0) * 60) }
        case "no-buffer": return [Date(timeIntervalSince1970: (quotaEnd.timeIntervalSince1970 / 60).rounded(.down) * 60)]
        case _ where singlePath.contains(flaw): return []
        default: return super.initialChecks(from: now, quotaEnd: quotaEnd)
        }
    }

    override func runCheck() {
        switch flaw {
        case "one-far-check", "single-slot-name", "no-buffer":
            // Re-blocks if over, but never chains another check.
            if let state = readState(), unlockHasEnded(state) { reblock(state, reason: "the one check") }
        default:
            super.runCheck()
        }
    }

    override func recheckRefused(at date: Date, refusal: DeviceError) throws {
        // The seeds' first versions kept no reserve slot: a re-check refused at the 20-activity limit is lost.
        guard !singlePath.contains(flaw) else { throw PluginError.device(refusal) }
        try super.recheckRefused(at: date, refusal: refusal)
    }

    override func unlockHasEnded(_ state: LockState) -> Bool {
        flaw == "flag-only" ? !state.isCurrentlyUnlocked : super.unlockHasEnded(state)
    }

    override func shouldReblock(afterEndOf activity: DeviceActivityName, _ state: LockState) -> Bool {
        flaw == "unguarded-interval-end" ? true : super.shouldReblock(afterEndOf: activity, state)
    }

    override func reblock(_ state: LockState, reason: String, passing: Set<ApplicationToken> = []) {
        switch flaw {
        case "apps-only": blockAppsOnly(shields, state.blockList)
        case "write-back-empty": try? shields.block(state.blockList)  // the App Group is its only source of tokens
        default: super.reblock(state, reason: reason, passing: passing)
        }
    }

}

final class NaiveFocusMonitor: FocusWindowMonitor {
    override func passGranted() {
        guard flaw == "pass-no-recheck" else { return super.passGranted() }
        if let pass = activePass() { try? shields.lift(application: pass.application) }  // and never looks again
    }
}

final class NaiveRenderer: HabitLockShield {
    override func reblockIfNeeded() {
        switch flaw {
        case _ where singlePath.contains(flaw): return
        case "apps-only":
            if let state = try? LockState.read(from: defaults), !state.isUnlockActive(at: BusClock.now) { blockAppsOnly(shields, state.blockList) }
        case "flag-only":
            if let state = try? LockState.read(from: defaults), !state.isCurrentlyUnlocked { try? shields.block(state.blockList) }
        default:
            super.reblockIfNeeded()
        }
    }
}

final class NaiveFocusShield: FocusWindowShield {
    override func reblockIfNeeded() {
        if flaw != "pass-no-recheck" { super.reblockIfNeeded() }
    }
}

final class NaiveDelegate: SpeedBumpAction {
    override func recordNudge(for application: ApplicationToken) -> Bool {
        // Looks the app up in the saved selection — stale after an OS update (FB14237883) — instead of using
        // the token the system just handed over.
        guard flaw == "saved-token-unblock" else { return super.recordNudge(for: application) }
        guard let saved = try? LockState.readBlockList(from: defaults), saved.applications.contains(application) else { return false }
        return super.recordNudge(for: application)
    }
}

final class NaiveApp: HabitLockApp {
    override func refreshSelection() {
        if flaw != "write-back-empty" { super.refreshSelection() }  // its tokens come from the App Group only
    }

    override func foregroundCheck() {
        switch flaw {
        case "app-timer-only", "one-far-check", "single-slot-name", "no-buffer", "async-reblock", "foreground-late-check":
            return
        case "write-back-empty":
            do {
                _ = try LockState.read(from: defaults)
            } catch {
                try? saveSelection(BlockList())  // "repairs" the undecodable tokens by writing empty ones
            }
            super.foregroundCheck()
        case "apps-only":
            if let state = try? LockState.read(from: defaults), !state.isUnlockActive(at: BusClock.now) { blockAppsOnly(shields, state.blockList) }
        case "flag-only":
            if let state = try? LockState.read(from: defaults), !state.isCurrentlyUnlocked { try? shields.block(state.blockList) }
        default:
            super.foregroundCheck()
        }
    }

    override func willEnterForeground() {
        guard flaw == "foreground-late-check" else { return super.willEnterForeground() }
        // Loads its database first; the re-block waits for that (lesson 7's race).
        try? scheduleTimer(id: "database-loaded", at: BusClock.now.addingTimeInterval(2))
    }

    override func timerFired(_ id: String) {
        switch (flaw, id) {
        case ("foreground-late-check", "database-loaded"), ("async-reblock", "async-reblock-continues"):
            flawlessCheck()
        case ("foreground-only", "unlock-expiry"):
            return  // it re-blocks only when it comes to the foreground
        case ("one-far-check", "unlock-expiry"), ("single-slot-name", "unlock-expiry"), ("no-buffer", "unlock-expiry"), ("flag-only", "unlock-expiry"),
             ("foreground-late-check", "unlock-expiry"):
            return  // the monitor is meant to do it
        default:
            super.timerFired(id)
        }
    }

    override func endUnlock() {
        guard flaw == "async-reblock" else { return super.endUnlock() }
        // Only the async version: it awaits (a two-second sleep, as a timer) before it writes the shields, and a
        // suspended app's timers stop (lesson 9).
        try? scheduleTimer(id: "async-reblock-continues", at: BusClock.now.addingTimeInterval(2))
    }

    private func flawlessCheck() {
        if let state = try? LockState.read(from: defaults), !state.isUnlockActive(at: BusClock.now) { try? shields.block(state.blockList) }
    }
}

/// `naive-plugin`'s program: its argument names the plugin (monitor, shield, action or app).
public enum NaivePlugin {
    public static let kinds = ["monitor", "shield", "action", "app"]

    public static let program = PluginProgram { arguments in
        let (options, defaults) = try ReferencePlugin.load()
        switch arguments.first {
        case "monitor":
            switch options.product {
            case .habitLock: return NaiveMonitor(options: options, defaults: defaults)
            case .focusWindow: return NaiveFocusMonitor(options: options, defaults: defaults)
            case .speedBump: return ReferenceMonitor.make(options: options, defaults: defaults)
            }
        case "shield":
            switch options.product {
            case .habitLock: return NaiveRenderer(options: options, defaults: defaults, resources: nil)
            case .focusWindow: return NaiveFocusShield(options: options, defaults: defaults, resources: nil)
            case .speedBump: return ReferenceShieldRenderer.make(options: options, defaults: defaults, resources: nil)
            }
        case "action":
            return options.product == .speedBump ? NaiveDelegate(options: options, defaults: defaults) : ReferenceActionDelegate.make(options: options, defaults: defaults)
        case "app":
            return options.product == .habitLock ? NaiveApp(options: options, defaults: defaults) : ReferenceCompanionApp.make(options: options, defaults: defaults)
        default:
            throw PluginError.configuration("usage: naive-plugin monitor|shield|action|app (NAIVE_FLAW=…)")
        }
    }
}
