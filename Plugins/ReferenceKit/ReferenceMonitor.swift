import DeviceActivity
import Foundation
import Logging
import ShieldBusSDK

/// The reference activity monitor: the owner of the ManagedSettings stores and the only component that lifts
/// a shield. It keeps unlocks honest with chained re-checks, guards `intervalDidEnd`, runs the focus hours,
/// and acts on the passes and nudges the action delegate records.
///
/// Every defence is an overridable step, so a test can build the naive plugin each seed describes.
open class ReferenceMonitor: DeviceActivityMonitor {
    public let options: ProductOptions
    public let defaults: SharedDefaults
    public let shields: Shields
    public let center = DeviceActivityCenter()
    /// The checks at true instants the product relies on (MonitorKit).
    public let chain: CheckChain

    public init(options: ProductOptions, defaults: SharedDefaults) {
        self.options = options
        self.defaults = defaults
        shields = Shields(storeName: options.store)
        chain = CheckChain(center: center, defaults: defaults, prefix: options.product.rawValue, reserve: ReferenceMonitorNames(options: options).reserve)
        super.init()
        chain.slotName = { [unowned self] in chainSlotName($0) }
        chain.onRefusal = { [unowned self] in try recheckRefused(at: $0, refusal: $1) }
    }

    open override var subscriptions: [String] { super.subscriptions + ["state.changed"] }

    var prefix: String { options.product.rawValue }
    public var names: ReferenceMonitorNames { ReferenceMonitorNames(options: options) }

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }

    // MARK: Chained re-checks (lesson 2)

    /// The name of a re-check slot. Rotating names (…_0 to …_4) so that no schedule overwrites another.
    open func chainSlotName(_ index: Int) -> DeviceActivityName { DeviceActivityName("\(prefix).reblock_\(index % 5)") }

    /// A re-check the OS refused at the activity limit: into the chain's reserve slot.
    open func recheckRefused(at date: Date, refusal: DeviceError) throws {
        try chain.moveToReserve(at: date, refusal: refusal)
    }

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

    // MARK: The lock

    /// Whether the unlock is over. Timestamp over flag (lesson 6).
    open func unlockHasEnded(_ state: LockState) -> Bool { !state.isUnlockActive(at: now) }

    /// Re-blocks everything the person selected: apps, categories and web domains (lesson 5) — in the saved
    /// tokens and in the OS's current ones (the selection activity's event), which survive an OS update.
    open func reblock(_ state: LockState, reason: String, passing: Set<ApplicationToken> = []) {
        do {
            try shields.block(Self.currentBlockList(state, center: center, names: names), passing: passing)
            logger?.info("re-blocked (\(reason))")
        } catch {
            logger?.error("re-block failed (\(reason)): \(error)")
        }
    }

    /// The saved selection together with the OS's copy of it, whose tokens the OS keeps current.
    public static func currentBlockList(_ state: LockState, center: DeviceActivityCenter, names: ReferenceMonitorNames) -> BlockList {
        names.keptSelection.current(state.blockList, center: center)
    }

    /// Reads the lock state; nil (and nothing written) when it cannot be read (lesson 4).
    public func readState() -> LockState? {
        do {
            return try LockState.read(from: defaults)
        } catch {
            logger?.error("cannot read the lock state: \(error)")
            return nil
        }
    }

    /// The unlock started or changed (the companion app wrote the flag and timestamp).
    open func unlockChanged() {
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
    /// unlock's chained checks with every other schedule, so nothing would re-block at its end (explore: habit-lock 117):
    /// the chain starts again when no check of it is registered.
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

    // MARK: Callbacks

    open override func intervalDidStart(for activity: DeviceActivityName) {
        keepTheDismissedApplicationCurrent()
        guard !chain.startMeansNothing(activity) else { return }  // its check is the end warning
        checkIsDue(for: activity)
    }

    /// An interval started, or the end warning that stands for its start came: the check it brings, by activity.
    func checkIsDue(for activity: DeviceActivityName) {
        if activity == names.reserve {
            guard chain.takeReserveCheck() else { return }
            chainedCheckIsDue()
        } else if chain.isChainSlot(activity) {
            chainedCheckIsDue()
        } else if activity == names.daily, options.product == .speedBump {
            checkSpeedBumpDay()
        } else if activity == names.selection, options.product == .speedBump, coolingDown() {
            // The app set up again during a dismiss's cooldown (after a revocation, which stopped the cooldown's end
            // with every other schedule): the count must still start again at its end.
            registerTheThresholdIfLost()
        } else if activity == names.daily {
            // A new day re-blocks unless an unlock still runs: an unlock keeps its absolute end across midnight (explore
            // found one cut at 00:00). The daily interval also "starts" again when the app re-registers it mid-day.
            guard let state = readState(), options.product == .habitLock else { return }
            if unlockHasEnded(state) {
                reblock(state, reason: "a new day")
            } else {
                checkTheRunningUnlock(state)
            }
        } else if names.isFocus(activity) || (activity == names.selection && options.product == .focusWindow) || activity == names.focusCheck {  // the selection's start: set-up
            syncFocusHours()
        } else if activity == names.pass {
            checkPass()
        } else if activity == names.resume {
            resumeThresholdMonitoring()
        }
    }

    open override func intervalWillEndWarning(for activity: DeviceActivityName) {
        if chain.isWarningSlot(activity) { chainedCheckIsDue() } else if chain.checksAtEndWarning().contains(activity.rawValue) { checkIsDue(for: activity) }
    }

    /// A check of the chain or of the reserve came. It re-evaluates the product's whole state, not only the chain: a
    /// check in the reserve stands in for any registration the OS refused (an unlock's re-check, a pass's end, a
    /// cooldown's end).
    func chainedCheckIsDue() {
        switch options.product {
        case .habitLock:
            runCheck()
        case .focusWindow:
            checkPass()
            syncFocusHours()
        case .speedBump:
            registerTheThresholdIfLost()
            checkSpeedBumpDay()
        }
    }

    open override func intervalDidEnd(for activity: DeviceActivityName) {
        keepTheDismissedApplicationCurrent()
        if names.isFocus(activity) {
            syncFocusHours()
            return
        }
        // The reserve's interval ends when its check is moved, and its set-up interval holds nothing: its starts check.
        guard options.product == .habitLock, activity != names.reserve, let state = readState() else { return }
        if shouldReblock(afterEndOf: activity, state) { reblock(state, reason: "\(activity.rawValue) ended") }
    }

    open override func eventDidReachThreshold(_ event: DeviceActivityEvent.Name, activity: DeviceActivityName) {
        guard options.product == .speedBump, var state = readState() else { return }
        keepTheDismissedApplicationCurrent()
        // The OS's own copy of the event has today's tokens; the saved ones go stale after an OS update (FB14237883).
        if let current = try? center.monitoredEvents(for: activity)[event] {
            state.blockList = BlockList(applications: current.applications, categories: current.categories, webDomains: current.webDomains)
        }
        if activity == names.daily, coolingDown() {
            // `daily` counted on through a dismiss while the day check was pending (`nudged`): its answer is in, and the
            // dismiss pauses the count from here. A crossing after that instant counted the dismissed app's cooldown.
            do { try center.stopMonitoringActivities([names.daily]) } catch { logger?.error("cannot pause the count for the cooldown: \(error)") }
            guard answersTheDayCheck() else { return }
        }
        reblock(state, reason: "the daily threshold was reached", passing: coolingDown() ? dismissedApplication() : [])
        do {
            try defaults.set(now.timeIntervalSince1970, forKey: SharedKey.speedBumpRaised)
            // One chain of checks per day: a threshold reached again after a dismiss keeps the running one.
            guard try defaults.string(forKey: SharedKey.speedBumpDay) != DayKey.deviceToday() else { return }
            try defaults.set(DayKey.deviceToday(), forKey: SharedKey.speedBumpDay)
            try chain.scheduleCheck(at: nextSpeedBumpCheck())
        } catch {
            logger?.error("cannot schedule the end of the speed bump: \(error)")
        }
    }

    open override func handleOther(_ envelope: Envelope) {
        if envelope.topic == DeviceTopic.clockChanged || envelope.topic == DeviceTopic.timeZoneChanged, envelope.isFromSystem {
            return clockChanged()
        }
        guard envelope.topic == "state.changed", envelope.bodyValue["group"]?.stringValue == options.appGroup,
              let key = envelope.bodyValue["key"]?.stringValue else { return }
        switch key {
        case SharedKey.isCurrentlyUnlocked:
            // The app writes the timestamp and then the flag in one transaction: the flag's change is the signal.
            unlockChanged()
        case SharedKey.passUntil:
            passGranted()
        case SharedKey.nudgeCooldownUntil:
            nudged()
        default:
            break
        }
    }

    // MARK: Focus window and grace passes

    /// Whether the wall clock at `date` shows a time inside the focus hours. By the wall time, not by the schedule's
    /// interval: in a repeated DST hour the clock shows the window's times twice, and the OS's interval (which reads
    /// a repeated wall time as its first pass) covers only the first — apps stayed usable through the second.
    public func isInFocusHours(_ date: Date) -> Bool {
        let minute = ClockTime(of: date, in: BusClock.timeZone).minuteOfDay
        return options.focusHours.contains { $0.contains(minuteOfDay: minute) }
    }

    /// A focus window started or ended, or a focus check came: the OS runs the windows on the device clock, which
    /// the person may have set, and a far schedule may fire early, late or never (explore: a window that never
    /// started; the clock set back two hours ended one). So the monitor judges the hours in true time, shields or
    /// lifts by that alone, and checks again at the next true boundary.
    open func syncFocusHours() {
        if isInFocusHours(now) {
            guard let state = readState() else { return }
            // The apps with a running pass stay out of that one write: shielded and lifted again, the app in use was
            // closed and its shield shown for an instant (explore: focus-window 3921).
            reblock(state, reason: "focus hours", passing: Set(passBook.running(at: now).map(\.application)))
        } else {
            do { try shields.liftAll() } catch { logger?.error("cannot end the focus window: \(error)") }
        }
        planFocusCheck()
    }

    /// The next check: at the next true boundary of the focus hours, or 44 minutes out when that is sooner (a
    /// schedule further out may fire early, late or never). In a repeated DST hour's second pass it comes as an end
    /// warning, as the habit lock's re-checks (explore: focus-window 85, a check the OS read as the first pass, a day
    /// late).
    func planFocusCheck() {
        guard !options.focusHours.isEmpty else { return }
        // The first whole minute within 44 at which the focus hours begin or end. Walked minute by minute, since a
        // boundary's second pass in a repeated hour is not a calendar's "next" wall time; every zone's offset is whole
        // minutes, so a boundary falls on a whole true minute.
        let inFocus = isInFocusHours(now), latest = now.addingTimeInterval(44 * 60)
        var date = latest, minute = TrueTimeSchedules.minuteAfter(now)
        while minute < latest {
            if isInFocusHours(minute) != inFocus {
                date = minute
                break
            }
            minute = minute.addingTimeInterval(60)
        }
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
    /// first app unshielded (explore).
    open func passGranted() {
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
        // over, and the pass never ended (the clock set back into Berlin's repeated hour, found with focus-window 3921).
        let check = TrueTimeSchedules.minuteAfter(Date(timeIntervalSince1970: first)), plan = TrueTimeSchedules.checkSchedule(at: check)
        try chain.startMonitoring(names.pass, during: plan.schedule, checkingAt: check, atEndWarning: plan.atEndWarning)
    }

    // MARK: The device clock

    /// The person set the device clock or the time zone changed (the OS announces both, as iOS posts its
    /// significant-time-change notification): every
    /// wall-clock schedule now fires at another true instant, so the product judges its state in true time and plans
    /// its checks again on the new clock. Expiries are absolute already, so the new clock extends nothing.
    open func clockChanged() {
        chain.replanReserveCheck()
        switch options.product {
        case .habitLock:
            guard let state = readState() else { return }
            if unlockHasEnded(state) {
                reblock(state, reason: "the device clock was set")
            } else if let quotaEnd = state.quotaEnd {
                do { try chain.scheduleCheck(at: nextCheck(from: now, quotaEnd: quotaEnd)) } catch { logger?.error("cannot plan the re-check again: \(error)") }
            }
        case .focusWindow:
            syncFocusHours()
            let passes = grantedPasses()
            do { try scheduleNextPassCheck(passes) } catch { logger?.error("cannot plan the pass check again: \(error)") }
        case .speedBump:
            speedBumpDayMoved()
            if let until = try? defaults.double(forKey: SharedKey.nudgeCooldownUntil).map(Date.init(timeIntervalSince1970:)), until > now {
                do { try planResume(until: until) } catch { logger?.error("cannot plan the end of the cooldown again: \(error)") }
            }
        }
    }

    // MARK: Speed bump

    /// The delegate recorded a nudge: unblock only the app the system handed it, pause monitoring for the cooldown —
    /// unless a check of the device's new day is pending: `daily` brings the threshold that check waits for (explore:
    /// speed-bump 7018, stopped here, and every shield lifted at the check with the new day past its threshold), so it
    /// counts on until that threshold comes (`answersTheDayCheck`) or the resume registers it again.
    open func nudged() {
        guard let raw = try? defaults.string(forKey: SharedKey.nudgeApplication),
              let until = try? defaults.double(forKey: SharedKey.nudgeCooldownUntil).map(Date.init(timeIntervalSince1970:)) else { return }
        do {
            try shields.lift(application: ApplicationToken(rawValue: raw))
            if dayCheckPending() {
                try defaults.set(TrueTimeSchedules.minuteAfter(now).timeIntervalSince1970, forKey: SharedKey.dayCheckAnswerBy)
            } else {
                try center.stopMonitoringActivities([names.daily])
            }
            try planResume(until: until)
        } catch {
            logger?.error("cannot apply the nudge: \(error)")
        }
    }

    /// The app the last dismiss let through.
    func dismissedApplication() -> Set<ApplicationToken> {
        ((try? DismissedApplication.current(in: defaults)) ?? nil).map { [$0] } ?? []
    }

    /// After an OS update, the dismissed app in today's tokens (`DismissedApplication`), found in the OS's copies.
    func keepTheDismissedApplicationCurrent() {
        // Only while a dismiss let an app through a speed bump that is up: the one time the shield is written anew.
        guard options.product == .speedBump, ((try? defaults.string(forKey: SharedKey.speedBumpDay)) ?? nil) != nil,
              ((try? defaults.double(forKey: SharedKey.nudgeCooldownUntil)) ?? nil) != nil,
              let event = names.keptSelection.osCopy(center: center) else { return }
        do {
            try DismissedApplication.keepCurrent(in: defaults, selected: event.applications, shield: try shields.store.shield.current())
        } catch {
            logger?.error("cannot record the dismissed app in today's tokens: \(error)")
        }
    }

    /// Whether a dismiss's cooldown runs.
    func coolingDown() -> Bool {
        ((try? defaults.double(forKey: SharedKey.nudgeCooldownUntil)) ?? nil).map { $0 > now.timeIntervalSince1970 } ?? false
    }

    /// Whether the device shows a later date than the speed bump's: its day check (`speedBumpDayMoved`) has not yet
    /// kept it for the new day or lifted it.
    func dayCheckPending() -> Bool {
        guard let day = (try? defaults.string(forKey: SharedKey.speedBumpDay)) ?? nil else { return false }
        return DayKey.deviceToday() > day
    }

    /// Whether a threshold of `daily` during a cooldown is the new day's answer to the pending day check: it came by the
    /// whole minute after the move, when the OS delivers the replanned day's crossing. A threshold for the new day means the
    /// dismiss stands (everything else shielded, the count from the cooldown's end); none means the new day's count is
    /// under it, and the check has lifted the rest.
    func answersTheDayCheck() -> Bool {
        guard let answerBy = (try? defaults.double(forKey: SharedKey.dayCheckAnswerBy)) ?? nil else { return false }
        return now.timeIntervalSince1970 <= answerBy
    }

    /// Plans the end of a dismiss's cooldown, registering the threshold ahead: on an interval that starts at the
    /// cooldown's end, so that the OS counts from that very instant and the threshold's own whole-minute delivery is the
    /// only delay (explore: speed-bump 76, 111, 114, 124 under `ios-realistic` — registered by the resume's callback,
    /// itself up to a minute late, the threshold came up to two minutes after the use reached it). The interval's start
    /// registers the daily threshold again for the days after. When no such interval can start when due (less than 15
    /// minutes before the device's midnight, or in a repeated DST hour), the plain resume window is planned. A cooldown
    /// that ends on the device's next date cannot be registered ahead today (`countingWindow`): the plain window then
    /// starts at the midnight between, whose callback (`resumeThresholdMonitoring`) registers the interval from the
    /// cooldown's end on the new date (explore: speed-bump 10941 — the window at the end's whole minute registered the
    /// threshold 52 s after it, and with the threshold's own delay tiktok.com was usable 1 min 39 s).
    func planResume(until: Date) throws {
        if let schedule = TrueTimeSchedules.countingWindow(from: until), let state = readState() {
            let list = Self.currentBlockList(state, center: center, names: names)
            return try chain.startMonitoring(names.resume, during: schedule, events: [names.thresholdEvent: options.thresholdEvent(list)], checkingAt: until)
        }
        let midnight = TrueTimeSchedules.nextDeviceMidnight(after: now)
        if midnight > until, let schedule = TrueTimeSchedules.warningWindow(checkingAt: until) {
            // The device clock shows the cooldown's end in a repeated hour's second pass: no one-off schedule starts
            // there (the OS reads its wall time as the first pass), and the first quarter hour it reads as planned is
            // up to an hour on — the dismissed app counted nothing for that long. Its end warning comes at the true
            // end, whose callback registers the threshold (the habit lock's re-checks there, `checkSchedule`).
            return try chain.startMonitoring(names.resume, during: schedule, checkingAt: until, atEndWarning: true)
        }
        let check = TrueTimeSchedules.startingWhenDue(midnight <= until ? midnight : TrueTimeSchedules.minuteAfter(until))
        try chain.startMonitoring(names.resume, during: TrueTimeSchedules.window(at: check), checkingAt: check)
    }

    /// Outside a cooldown the daily threshold must be registered: a re-registration the OS refused (the limit full) is
    /// tried again at every check, so the speed bump comes back (explore: speed-bump 50 and 107 — `daily` refused at the
    /// cooldown's end, and Instagram usable for the rest of the day). Only once the app has set up its schedules.
    /// During a cooldown its end must be planned: the reserve holds one check, so a later cooldown end it held may have
    /// given way to a sooner check.
    func registerTheThresholdIfLost() {
        guard let activities = try? center.monitoredActivities(), activities.contains(names.selection), !activities.contains(names.daily) else { return }
        if coolingDown() {
            guard !activities.contains(names.resume) else { return }
        } else {
            logger?.warning("the daily threshold is not registered: registering it again")
        }
        resumeThresholdMonitoring()
    }

    /// A speed bump lasts until the device's midnight (a daily threshold, counted by the OS on the device clock in
    /// the zone in force): lift its shields once the day it was raised on is over, else check again. The daily
    /// interval's start says so too, but under `ios-realistic` a far schedule may fire late or never, so re-checks no
    /// further apart than 44 minutes lead up to midnight (explore: shields kept into the next day).
    open func checkSpeedBumpDay() {
        guard let day = try? defaults.string(forKey: SharedKey.speedBumpDay) else { return }
        do {
            let today = DayKey.deviceToday()
            if day == today {
                try chain.scheduleCheck(at: nextSpeedBumpCheck())
            } else if today < day {
                // A clock or zone change made "today" the previous date. That day began earlier in true time and the OS
                // counts all its use, the use that raised the speed bump included: it holds to that day's end.
                try defaults.set(today, forKey: SharedKey.speedBumpDay)
                try chain.scheduleCheck(at: nextSpeedBumpCheck())
            } else {
                try shields.liftAll()
                _ = try defaults.removeObject(forKey: SharedKey.speedBumpDay)
                logger?.info("the speed bump of \(day) ended at midnight")
            }
        } catch {
            logger?.error("cannot end the speed bump of \(day): \(error)")
        }
    }

    /// The device clock was set or the zone changed. When the device now shows a later date than the speed bump's,
    /// the OS replans its daily interval on that date, which may have begun hours ago in true time: it counts that use
    /// and delivers the threshold again at its next whole minute if it is reached. Lifting at once would let the
    /// selection through until then (explore: speed-bump 95, a zone change to a new date, usable 2 minutes), so the
    /// monitor checks at that whole minute instead, and lifts only if no threshold came for the new day — unless the
    /// count that raised the speed bump lies within the new day (`raisedWithinToday`): then it is the new day's.
    func speedBumpDayMoved() {
        if let day = try? defaults.string(forKey: SharedKey.speedBumpDay), DayKey.deviceToday() > day {
            do {
                guard raisedWithinToday() else { return try chain.scheduleCheck(at: TrueTimeSchedules.minuteAfter(now)) }
                try defaults.set(DayKey.deviceToday(), forKey: SharedKey.speedBumpDay)
                try chain.scheduleCheck(at: nextSpeedBumpCheck())
            } catch {
                logger?.error("cannot plan the check of the new day: \(error)")
            }
        } else {
            checkSpeedBumpDay()
        }
    }

    /// Whether the speed bump was raised by a count that ran from a cooldown's end which the device's new date began
    /// before, in true time: that date's count holds all of it. The OS's own count of the new day may still fall short of
    /// the threshold — the daily threshold registered from the resume's whole-minute callback misses the use since the
    /// cooldown's end — and waiting for it lifted a speed bump that had to stay (explore: speed-bump 76, a move to a later
    /// date 2 hours after the cooldown, X usable 45 s).
    func raisedWithinToday() -> Bool {
        guard let raised = (try? defaults.double(forKey: SharedKey.speedBumpRaised)) ?? nil,
              let cooldownEnd = (try? defaults.double(forKey: SharedKey.nudgeCooldownUntil)) ?? nil, raised >= cooldownEnd else { return false }
        return DayKey.deviceDayStart().timeIntervalSince1970 <= cooldownEnd
    }

    /// The next check on a running speed bump: 44 minutes out, or the device's next midnight when that is sooner.
    func nextSpeedBumpCheck() -> Date {
        TrueTimeSchedules.startingWhenDue(min(now.addingTimeInterval(44 * 60), TrueTimeSchedules.nextDeviceMidnight(after: now)))
    }


    /// Registers the daily threshold again after a cooldown: the OS counts from here.
    open func resumeThresholdMonitoring() {
        if let until = try? defaults.double(forKey: SharedKey.nudgeCooldownUntil).map(Date.init(timeIntervalSince1970:)), until > now {
            // Fired early (the device clock was set forward): the cooldown is not over in true time.
            do { try planResume(until: until) } catch { logger?.error("cannot wait for the cooldown: \(error)") }
            return
        }
        guard let state = readState() else { return }
        // The OS's copy of the selection, not the saved tokens: an iOS update during the cooldown regenerated them,
        // and a threshold on stale tokens never counts again (explore: the speed bump never came back that day).
        let list = Self.currentBlockList(state, center: center, names: names)
        let register = { [self] in
            try center.startMonitoring(names.daily, during: TrueTimeSchedules.allDay, events: [names.thresholdEvent: options.thresholdEvent(list)])
        }
        do {
            do {
                try register()
            } catch PluginError.device(let refusal) where refusal.code == "excessive-activities" {
                // The app's other activities took the place `daily` left at the dismiss (explore: speed-bump 50): the
                // cooldown's own slot (`resume`, counting from the cooldown's end) makes room for it. `daily` counts from
                // this whole-minute callback, so the use since the cooldown's end is not counted: the ruling's two delays
                // (docs/explore.md, "Two delays with the activity limit full").
                logger?.warning("registering the daily threshold again was refused (\(refusal)): the cooldown's slot makes room for it")
                try center.stopMonitoringActivities([names.resume])
                try register()
            }
        } catch {
            logger?.error("cannot resume monitoring: \(error)")
        }
    }


}
