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

    public init(options: ProductOptions, defaults: SharedDefaults) {
        self.options = options
        self.defaults = defaults
        shields = Shields(storeName: options.store)
        super.init()
    }

    open override var subscriptions: [String] { super.subscriptions + ["state.changed"] }

    var prefix: String { options.product.rawValue }
    public var names: ReferenceMonitorNames { ReferenceMonitorNames(options: options) }

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }

    // MARK: Chained re-checks (lesson 2)

    /// The name of a re-check slot. Rotating names (…_0 to …_4) so that no schedule overwrites another.
    open func chainSlotName(_ index: Int) -> DeviceActivityName { DeviceActivityName("\(prefix).reblock_\(index % 5)") }

    /// The re-checks to schedule when an unlock starts: 15, 30 and 44 minutes out — never further than 44 —
    /// or one minute past the expected expiry when that is sooner (lesson 8: whole minutes need a buffer).
    open func initialChecks(from now: Date, quotaEnd: Date) -> [Date] {
        let buffered = Self.minuteAfter(quotaEnd)
        return Array(Set([15, 30, 44].map { min(now.addingTimeInterval(Double($0) * 60), buffered) })).sorted()
    }

    /// The next re-check after one that found the unlock still running: 16 minutes out, or one minute past expiry.
    open func nextCheck(from now: Date, quotaEnd: Date) -> Date {
        min(now.addingTimeInterval(16 * 60), Self.minuteAfter(quotaEnd))
    }

    /// The first whole minute strictly after `date` (10:30:45 → 10:31:00; 10:30:00 → 10:31:00).
    public static func minuteAfter(_ date: Date) -> Date {
        Date(timeIntervalSince1970: ((date.timeIntervalSince1970 / 60).rounded(.down) + 1) * 60)
    }

    /// Schedules one check at `date` in the next rotating slot (a 15-minute window, DeviceActivity's minimum).
    /// When the OS refuses a new slot (the app's 20 activities are taken), the check goes to the reserve slot
    /// instead: no other path re-blocks while the app is suspended, nor ends a speed bump at the device's midnight.
    public func scheduleCheck(at date: Date) throws {
        let slot = (try defaults.integer(forKey: SharedKey.chainSlot) ?? -1) + 1
        try defaults.set(slot, forKey: SharedKey.chainSlot)
        let check = Self.checkSchedule(at: date)
        try startMonitoring(check.atEndWarning ? warningSlotName(slot) : chainSlotName(slot), during: check.schedule, checkingAt: date)
    }

    /// Registers a schedule the product relies on for a check at `date` (a re-check, a pass's or a cooldown's end, a
    /// focus check); with `atEndWarning`, the check is the schedule's end warning and its start means nothing. When the
    /// OS refuses it for the limit, the check goes to the reserve slot, whose check re-evaluates the product's whole
    /// state (`chainedCheckIsDue`), so it stands in for whichever registration was refused.
    ///
    /// The loop guard, for every product: a check planned more than 16 times at one instant means the OS starts its
    /// interval at once each time and its callback plans the check again (explore: focus-window 12, a schedule in a
    /// skipped hour; speed-bump 2009, a cooldown's window read on the wrong day, 1,430 plans at one instant until
    /// `ack-timeout`). It is then logged and registered as the end warning of an interval starting now, without events
    /// (the callback that stands for the start registers them), so the callbacks cannot loop.
    func startMonitoring(_ activity: DeviceActivityName, during schedule: DeviceActivitySchedule,
                         events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:], checkingAt date: Date, atEndWarning: Bool = false) throws {
        let stored = try? defaults.value(PlannedChecks.self, forKey: SharedKey.plannedChecks)
        var plans = stored.flatMap { $0.plannedAt == now.timeIntervalSince1970 ? $0 : nil } ?? PlannedChecks(plannedAt: now.timeIntervalSince1970, times: [:])
        let key = String(date.timeIntervalSince1970), times = (plans.times[key] ?? 0) + 1
        plans.times[key] = times
        var marked = Set(checksAtEndWarning())
        var (schedule, events, atEndWarning) = (schedule, events, atEndWarning)
        // A clock change plans a check once per callback it brings (the change, each window's end and start, …): a
        // handful. Hundreds are a loop.
        if times > 16 {
            guard times == 17 || !marked.contains(activity.rawValue) else {  // already registered so at this instant
                try defaults.set(plans, forKey: SharedKey.plannedChecks)
                return
            }
            logger?.warning("the check for \(busTime(date)) was planned \(times) times at this instant (the OS starts \(activity.rawValue) at once): it comes as an end warning instead, so it cannot loop")
            if let runtime = PluginRuntime.current {
                try runtime.publish("x.\(runtime.name).check-loop", json: ["at": .int(busTime(date)), "activity": .string(activity.rawValue)])
            }
            (schedule, events, atEndWarning) = (Self.endWarningWindow(checkingAt: date), [:], true)
        }
        do {
            try center.startMonitoring(activity, during: schedule, events: events)
            if atEndWarning { marked.insert(activity.rawValue) } else { marked.remove(activity.rawValue) }
        } catch PluginError.device(let refusal) where refusal.code == "excessive-activities" {
            try recheckRefused(at: date, refusal: refusal)
        }
        // Recorded after the call: the monitor hears its own writes, and one heard during a call held the short-lived
        // extension's process past its callback (a later callback was then lost, under ios-realistic).
        try defaults.set(plans, forKey: SharedKey.plannedChecks)
        if marked.sorted() != checksAtEndWarning() { try defaults.set(marked.sorted(), forKey: SharedKey.checksAtEndWarning) }
    }

    /// The activities whose check is their interval's end warning (`startMonitoring`'s `atEndWarning` and loop guard).
    func checksAtEndWarning() -> [String] {
        (try? defaults.value([String].self, forKey: SharedKey.checksAtEndWarning)) ?? []
    }

    /// The device clock or zone changed: the reserve's schedule is wall-clock time, so its check would now come at
    /// another true instant (explore: habit-lock 50 — the clock set back 2 h moved the unlock's only live re-check 2 h
    /// later). It is registered again on the new clock; a name already monitored is never refused.
    func replanReserveCheck() {
        guard let held = try? defaults.double(forKey: SharedKey.reserveCheck).map(Date.init(timeIntervalSince1970:)) else { return }
        do {
            try center.startMonitoring(names.reserve, during: Self.window(at: max(held, now), repeats: true))
        } catch {
            logger?.error("cannot move the reserve re-check to the new clock: \(error)")
        }
    }

    /// Puts the check at `date` in the reserve slot, unless it already holds a sooner one still ahead (the chain
    /// goes on from that one). A repeating window, so that the slot stays registered once the check has fired.
    open func recheckRefused(at date: Date, refusal: DeviceError) throws {
        let held = try defaults.double(forKey: SharedKey.reserveCheck).map(Date.init(timeIntervalSince1970:))
        if let held, held > now, held <= date {
            logger?.warning("re-check at \(busTime(date)) refused (\(refusal)): the reserve slot holds a sooner one")
            return
        }
        logger?.warning("re-check at \(busTime(date)) refused (\(refusal)): it goes to the reserve slot")
        try center.startMonitoring(names.reserve, during: Self.window(at: date, repeats: true))
        try defaults.set(date.timeIntervalSince1970, forKey: SharedKey.reserveCheck)
        if let runtime = PluginRuntime.current {
            try runtime.publish("x.\(runtime.name).recheck-refused", json: ["at": .int(busTime(date)), "code": .string(refusal.code)])
        }
    }

    /// A one-off 15-minute schedule starting at the true instant `date`, as DeviceActivity takes it: local time
    /// components of what the device clock will show then (the person may have set it; the OS runs on it).
    ///
    /// It ends 15 minutes on in wall time when 15 true minutes would cross a fall-back: the OS pairs a start with the
    /// first end after it *on the wall clock*, so a window from 02:55:22 in a repeated hour's first pass to 02:10:22 in
    /// its second ran overnight from the day before, and the OS read it as begun long ago (a cooldown ending in the
    /// last quarter of the first pass, planned from the midnight before: `countingWindow` and the plain window both
    /// gave way to 03:11, and the count restarted 16 minutes late — `testACooldownEndingAroundARepeatedHourCountsFromItsTrueEnd`).
    public static func window(at date: Date, repeats: Bool = false) -> DeviceActivitySchedule {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = BusClock.timeZone
        let shown = BusClock.deviceClock(at: date)
        let start = calendar.dateComponents([.hour, .minute, .second], from: shown)
        let wall = { (instant: Date) in instant.timeIntervalSince1970 + Double(BusClock.timeZone.secondsFromGMT(for: instant)) }
        var endShown = shown.addingTimeInterval(15 * 60)
        endShown.addTimeInterval(max(0, wall(shown) + 15 * 60 - wall(endShown)))  // the hour a fall-back repeats
        let end = calendar.dateComponents([.hour, .minute, .second], from: endShown)
        return DeviceActivitySchedule(intervalStart: start, intervalEnd: end, repeats: repeats)
    }

    /// The schedule that brings a check at the true instant `date`: a one-off window starting then or, when none starts
    /// when due (the device clock shows `date` in a repeated DST hour's second pass), an interval whose end warning
    /// comes then (`warningWindow`), whose start means nothing.
    static func checkSchedule(at date: Date) -> (schedule: DeviceActivitySchedule, atEndWarning: Bool) {
        warningWindow(checkingAt: date).map { ($0, true) } ?? (window(at: date), false)
    }

    public func isChainSlot(_ activity: DeviceActivityName) -> Bool { activity.rawValue.hasPrefix("\(prefix).reblock") }

    /// A re-check slot whose check is its interval's end warning (`warningWindow`); its start means nothing.
    open func warningSlotName(_ index: Int) -> DeviceActivityName { DeviceActivityName("\(prefix).reblockAtWarning_\(index % 5)") }

    public func isWarningSlot(_ activity: DeviceActivityName) -> Bool { activity.rawValue.hasPrefix("\(prefix).reblockAtWarning_") }

    /// A schedule whose end warning comes at the true instant `date`, for a check that no one-off schedule can start
    /// when due: the device clock shows `date` in the second pass of a repeated DST hour, which the OS reads as the
    /// first, already over (explore: the habit lock's unlock ended at 02:35 in Berlin's second 02:00–03:00 and no
    /// re-check came). The interval runs from the device clock's now (it starts at once) to the first quarter hour on
    /// that the OS reads as planned and that is 15 wall minutes on (DeviceActivity's minimum), and warns `date` before
    /// that end: the OS computes a warning in true time. Nil when a plain window starts when due.
    static func warningWindow(checkingAt date: Date) -> DeviceActivitySchedule? {
        startingWhenDue(date) != date ? endWarningWindow(checkingAt: date) : nil
    }

    /// The interval from the device clock's now whose end warning comes at the true instant `date` (`warningWindow`).
    static func endWarningWindow(checkingAt date: Date) -> DeviceActivitySchedule {
        let zone = BusClock.timeZone
        func wallSeconds(_ instant: Date) -> Double {
            let shown = BusClock.deviceClock(at: instant)
            return shown.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: shown))
        }
        let now = BusClock.absoluteNow
        var end = date
        repeat { end = startingWhenDue(end.addingTimeInterval(15 * 60)) } while wallSeconds(end) - wallSeconds(now) < 15 * 60
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let lead = Int(end.timeIntervalSince(date).rounded())
        return DeviceActivitySchedule(intervalStart: calendar.dateComponents([.hour, .minute, .second], from: BusClock.deviceClock(at: now)),
                                      intervalEnd: calendar.dateComponents([.hour, .minute, .second], from: BusClock.deviceClock(at: end)),
                                      repeats: false, warningTime: DateComponents(minute: lead / 60, second: lead % 60))
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
        var list = state.blockList
        if let event = try? center.monitoredEvents(for: names.selection)[names.selectionEvent] {
            list.applications.formUnion(event.applications)
            list.categories.formUnion(event.categories)
            list.webDomains.formUnion(event.webDomains)
        }
        return list
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
            for check in initialChecks(from: now, quotaEnd: quotaEnd) { try scheduleCheck(at: check) }
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
            let held = (try? defaults.double(forKey: SharedKey.reserveCheck)) ?? nil
            guard !registered.contains(where: { isChainSlot($0) || isWarningSlot($0) }), held == nil else { return }
            for check in initialChecks(from: now, quotaEnd: quotaEnd) { try scheduleCheck(at: check) }
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
            do { try scheduleCheck(at: nextCheck(from: now, quotaEnd: quotaEnd)) } catch { logger?.error("cannot chain the next check: \(error)") }
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
        guard !isWarningSlot(activity), !checksAtEndWarning().contains(activity.rawValue) else { return }  // its check is the end warning
        checkIsDue(for: activity)
    }

    /// An interval started, or the end warning that stands for its start came: the check it brings, by activity.
    func checkIsDue(for activity: DeviceActivityName) {
        if activity == names.reserve {
            // Its set-up interval and its daily repeats hold no check.
            guard (try? defaults.double(forKey: SharedKey.reserveCheck)) ?? nil != nil else { return }
            do { _ = try defaults.removeObject(forKey: SharedKey.reserveCheck) } catch { logger?.error("cannot free the reserve slot: \(error)") }
            chainedCheckIsDue()
        } else if isChainSlot(activity) {
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
        if isWarningSlot(activity) { chainedCheckIsDue() } else if checksAtEndWarning().contains(activity.rawValue) { checkIsDue(for: activity) }
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
            try scheduleCheck(at: nextSpeedBumpCheck())
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
            reblock(state, reason: "focus hours", passing: Set(runningPasses().map(\.0)))
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
        var date = latest, minute = Self.minuteAfter(now)
        while minute < latest {
            if isInFocusHours(minute) != inFocus {
                date = minute
                break
            }
            minute = minute.addingTimeInterval(60)
        }
        let check = Self.checkSchedule(at: date)
        do {
            try startMonitoring(names.focusCheck, during: check.schedule, checkingAt: date, atEndWarning: check.atEndWarning)
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
    func grantedPasses() -> [String: Double] {
        (try? defaults.value([String: Double].self, forKey: SharedKey.passes)) ?? [:]
    }

    func runningPasses() -> [(ApplicationToken, Date)] {
        grantedPasses().map { (ApplicationToken(rawValue: $0.key), Date(timeIntervalSince1970: $0.value)) }.filter { $0.1 > now }
    }

    /// The delegate recorded a pass: lift that app alone, and check on the passes one minute after the first ends.
    /// The delegate keeps only the last pass, so the monitor keeps them all: a second pass must not strand the
    /// first app unshielded (explore).
    open func passGranted() {
        guard let pass = activePass() else { return }
        var passes = grantedPasses()
        passes[pass.application.rawValue] = pass.until.timeIntervalSince1970
        do {
            try defaults.set(passes, forKey: SharedKey.passes)
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
            try defaults.set(passes, forKey: SharedKey.passes)
            try scheduleNextPassCheck(passes)
        } catch {
            logger?.error("cannot end the pass: \(error)")
        }
    }

    private func scheduleNextPassCheck(_ passes: [String: Double]) throws {
        guard let first = passes.values.min() else { return }
        // In a repeated hour's second pass it comes as an end warning: a window there is read as the first pass, already
        // over, and the pass never ended (the clock set back into Berlin's repeated hour, found with focus-window 3921).
        let check = Self.minuteAfter(Date(timeIntervalSince1970: first)), plan = Self.checkSchedule(at: check)
        try startMonitoring(names.pass, during: plan.schedule, checkingAt: check, atEndWarning: plan.atEndWarning)
    }

    // MARK: The device clock

    /// The person set the device clock or the time zone changed (the OS announces both, as iOS posts its
    /// significant-time-change notification): every
    /// wall-clock schedule now fires at another true instant, so the product judges its state in true time and plans
    /// its checks again on the new clock. Expiries are absolute already, so the new clock extends nothing.
    open func clockChanged() {
        replanReserveCheck()
        switch options.product {
        case .habitLock:
            guard let state = readState() else { return }
            if unlockHasEnded(state) {
                reblock(state, reason: "the device clock was set")
            } else if let quotaEnd = state.quotaEnd {
                do { try scheduleCheck(at: nextCheck(from: now, quotaEnd: quotaEnd)) } catch { logger?.error("cannot plan the re-check again: \(error)") }
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
                try defaults.set(Self.minuteAfter(now).timeIntervalSince1970, forKey: SharedKey.dayCheckAnswerBy)
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
              let event = try? center.monitoredEvents(for: names.selection)[names.selectionEvent] else { return }
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
        if let schedule = Self.countingWindow(from: until), let state = readState() {
            let list = Self.currentBlockList(state, center: center, names: names)
            return try startMonitoring(names.resume, during: schedule, events: [names.thresholdEvent: options.thresholdEvent(list)], checkingAt: until)
        }
        let midnight = nextDeviceMidnight()
        if midnight > until, let schedule = Self.warningWindow(checkingAt: until) {
            // The device clock shows the cooldown's end in a repeated hour's second pass: no one-off schedule starts
            // there (the OS reads its wall time as the first pass), and the first quarter hour it reads as planned is
            // up to an hour on — the dismissed app counted nothing for that long. Its end warning comes at the true
            // end, whose callback registers the threshold (the habit lock's re-checks there, `checkSchedule`).
            return try startMonitoring(names.resume, during: schedule, checkingAt: until, atEndWarning: true)
        }
        let check = Self.startingWhenDue(midnight <= until ? midnight : Self.minuteAfter(until))
        try startMonitoring(names.resume, during: Self.window(at: check), checkingAt: check)
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

    /// A one-off schedule from the true instant `date` to the end of that device day (as `allDay` ends), or nil when it
    /// would not start at `date` or would be shorter than DeviceActivity's 15 minutes — or when `date` is on a later
    /// device day than now: the OS would read the window's wall times on today, where it already runs, and start it at
    /// once (explore speed-bump 2009: a cooldown from 23:46 to 00:01 looped on its own interval until ack-timeout).
    static func countingWindow(from date: Date) -> DeviceActivitySchedule? {
        guard startingWhenDue(date) == date,
              DayKey.string(BusClock.deviceClock(at: date), in: BusClock.timeZone) == DayKey.deviceToday() else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = BusClock.timeZone
        let start = calendar.dateComponents([.hour, .minute, .second], from: BusClock.deviceClock(at: date))
        let end = DateComponents(hour: allDay.intervalEnd.hour, minute: allDay.intervalEnd.minute, second: 0)
        let minutesLeft = ((end.hour ?? 0) - (start.hour ?? 0)) * 60 + (end.minute ?? 0) - (start.minute ?? 0)
        guard minutesLeft > 15 else { return nil }
        return DeviceActivitySchedule(intervalStart: start, intervalEnd: end, repeats: false)
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
                try scheduleCheck(at: nextSpeedBumpCheck())
            } else if today < day {
                // A clock or zone change made "today" the previous date. That day began earlier in true time and the OS
                // counts all its use, the use that raised the speed bump included: it holds to that day's end.
                try defaults.set(today, forKey: SharedKey.speedBumpDay)
                try scheduleCheck(at: nextSpeedBumpCheck())
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
                guard raisedWithinToday() else { return try scheduleCheck(at: Self.minuteAfter(now)) }
                try defaults.set(DayKey.deviceToday(), forKey: SharedKey.speedBumpDay)
                try scheduleCheck(at: nextSpeedBumpCheck())
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
        Self.startingWhenDue(min(now.addingTimeInterval(44 * 60), nextDeviceMidnight()))
    }

    /// The true instant the device clock next shows midnight in the zone in force.
    func nextDeviceMidnight() -> Date {
        let shown = BusClock.deviceClock(at: now)
        return ScheduleCalendar(timeZone: BusClock.timeZone).nextDate(after: shown, matching: DateComponents(hour: 0, minute: 0))
            .map { now.addingTimeInterval($0.timeIntervalSince(shown)) } ?? now
    }

    /// `date`, or the first quarter hour after it that a one-off schedule starts at as planned. In a repeated DST hour
    /// the device clock shows a time twice and the OS reads a schedule's start as the first: a check planned in the
    /// second would start at once, and a check that chains the next would loop (explore: the clock set back into the
    /// repeated hour, two-products seed 4, ended in `ack-timeout`).
    static func startingWhenDue(_ date: Date) -> Date {
        let calendar = ScheduleCalendar(timeZone: BusClock.timeZone)
        let shownNow = BusClock.deviceClock(at: BusClock.absoluteNow)
        var candidate = date
        for _ in 0..<8 {  // a repeated hour is over within four quarters; eight leave room for a 30-minute shift
            let shown = BusClock.deviceClock(at: candidate)
            if let start = calendar.nextInterval(for: window(at: candidate), at: shownNow)?.start,
               abs(start.timeIntervalSince(shown)) < 1 { return candidate }  // the schedule holds whole seconds
            candidate.addTimeInterval(15 * 60)
        }
        return date
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
            try center.startMonitoring(names.daily, during: Self.allDay, events: [names.thresholdEvent: options.thresholdEvent(list)])
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

    /// The whole day, every day.
    public static let allDay = DeviceActivitySchedule(intervalStart: DateComponents(hour: 0, minute: 0), intervalEnd: DateComponents(hour: 23, minute: 59), repeats: true)
}
