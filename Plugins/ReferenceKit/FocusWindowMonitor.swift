import DeviceActivity
import Foundation
import Logging
import ShieldBusSDK

/// Focus Window's monitor: shields during the focus hours, judged by the wall clock in true time, with checks at
/// every boundary; a grace pass lets one app through for its minutes and every pass is kept until it ends.
open class FocusWindowMonitor: ReferenceMonitor {
    /// Whether the wall clock at `date` shows a time inside the focus hours. By the wall time, not by the schedule's
    /// interval: in a repeated DST hour the clock shows the window's times twice, and the OS's interval (which reads
    /// a repeated wall time as its first pass) covers only the first — apps would stay usable through the second.
    public func isInFocusHours(_ date: Date) -> Bool {
        options.focusHours.contain(date)
    }

    /// A focus window started or ended, or a focus check came: the OS runs the windows on the device clock, which
    /// the person may have set, and a far schedule may fire early, late or never (a window may never start, and a
    /// clock set back may end one). So the monitor judges the hours in true time, shields or lifts by that alone,
    /// and checks again at the next true boundary.
    open func syncFocusHours() {
        if isInFocusHours(now) {
            guard let state = readState() else { return }
            // The apps with a running pass stay out of that one write: shielded and lifted again, the app in use would
            // be closed and its shield shown for an instant.
            reblock(state, reason: "focus hours", passing: Set(passBook.running(at: now).map(\.application)))
        } else {
            do { try shields.liftAll() } catch { logger?.error("cannot end the focus window: \(error)") }
        }
        planFocusCheck()
    }

    /// The next check: at the next true boundary of the focus hours, or 44 minutes out when that is sooner (a
    /// schedule further out may fire early, late or never). In a repeated DST hour's second pass it comes as an end
    /// warning, as the habit lock's re-checks: a check planned there the OS would read as the first pass, and it would
    /// come a day late.
    func planFocusCheck() {
        guard !options.focusHours.isEmpty else { return }
        let date = options.focusHours.nextChange(after: now, within: CheckChain.horizon)
        let check = TrueTimeSchedules.checkSchedule(at: date)
        do {
            try chain.startMonitoring(names.focusCheck, during: check.schedule, checkingAt: date, atEndWarning: check.atEndWarning)
        } catch {
            logger?.error("cannot plan the next focus check: \(error)")
        }
    }

    public func activePass() -> (application: ApplicationToken, until: Date)? {
        guard let until = try? defaults.double(forKey: SharedKey.passUntil).map(Date.init(timeIntervalSince1970:)),
              let raw = try? defaults.string(forKey: SharedKey.passApplication), until > now else { return nil }
        return (ApplicationToken(rawValue: raw), until)
    }

    /// The passes the monitor granted, app token → end, running or not yet re-shielded.
    func grantedPasses() -> [String: Double] { passBook.all() }

    var passBook: PassBook { PassBook(defaults: defaults, key: SharedKey.passes) }

    /// The delegate recorded a pass: lift that app alone, and check on the passes one minute after the first ends.
    /// The delegate keeps only the last pass, so the monitor keeps them all: a second pass must not strand the
    /// first app unshielded.
    open override func passGranted() {
        guard let pass = activePass() else { return }
        var passes = grantedPasses()
        passes[pass.application.rawValue] = pass.until.timeIntervalSince1970
        do {
            try passBook.save(passes)
            try shields.lift(application: pass.application)
            try scheduleNextPassCheck(passes)
        } catch {
            logger?.error("cannot grant the pass: \(error)")
        }
    }

    /// A pass check: re-shield every app whose pass is over (in focus hours), and check again after the next end.
    open func checkPass() {
        var passes = grantedPasses()
        if let pass = activePass() { passes[pass.application.rawValue] = pass.until.timeIntervalSince1970 }  // granted while the monitor was away
        do {
            var ended = false
            for (raw, until) in passes where until <= now.timeIntervalSince1970 {
                if isInFocusHours(now) { try shields.reshield(application: ApplicationToken(rawValue: raw)) }
                passes[raw] = nil
                ended = true
            }
            if ended, isInFocusHours(now), let state = readState() {
                // A pass granted before an iOS update recorded a token that no longer means anything: the selection in the
                // OS's current tokens is shielded again, but for the passes still running.
                try shields.block(Self.currentBlockList(state, center: center, names: names),
                                  passing: Set(passes.keys.map(ApplicationToken.init(rawValue:))))
            }
            try passBook.save(passes)
            try scheduleNextPassCheck(passes)
        } catch {
            logger?.error("cannot end the pass: \(error)")
        }
    }

    private func scheduleNextPassCheck(_ passes: [String: Double]) throws {
        guard let first = passes.values.min() else { return }
        // In a repeated hour's second pass it comes as an end warning: a window there is read as the first pass, already
        // over, and the pass would never end (as when the clock is set back into a repeated hour).
        let check = TrueTimeSchedules.minuteAfter(Date(timeIntervalSince1970: first)), plan = TrueTimeSchedules.checkSchedule(at: check)
        try chain.startMonitoring(names.pass, during: plan.schedule, checkingAt: check, atEndWarning: plan.atEndWarning)
    }

    open override func productCheckIsDue(for activity: DeviceActivityName) {
        if names.isFocus(activity) || activity == names.selection || activity == names.focusCheck {  // the selection's start: set-up
            syncFocusHours()
        } else if activity == names.pass {
            checkPass()
        }
    }

    open override func chainedCheckIsDue() {
        checkPass()
        syncFocusHours()
    }

    open override func productIntervalDidEnd(_ activity: DeviceActivityName) {
        if names.isFocus(activity) { syncFocusHours() }
    }

    open override func clockChanged() {
        super.clockChanged()
        syncFocusHours()
        let passes = grantedPasses()
        do { try scheduleNextPassCheck(passes) } catch { logger?.error("cannot plan the pass check again: \(error)") }
    }
}
