import DeviceActivity
import Foundation
import Logging
import ShieldBusSDK

/// Speed Bump's monitor: past the daily threshold the selection is shielded to the device's midnight; a dismiss lets
/// the app the system handed over through and pauses the count for a cooldown, after which the OS counts again from
/// its end. The OS's day, the cooldown's end in a repeated hour and an approval after a revocation each have their
/// ruling (docs/explore.md).
open class SpeedBumpMonitor: ReferenceMonitor {
    open override func eventDidReachThreshold(_ event: DeviceActivityEvent.Name, activity: DeviceActivityName) {
        guard var state = readState() else { return }
        keepTheDismissedApplicationCurrent()
        // The OS's own copy of the event has today's tokens; the saved ones go stale after an OS update (FB14237883).
        if let current = try? center.monitoredEvents(for: activity)[event] {
            state.blockList = BlockList(applications: current.applications, categories: current.categories, webDomains: current.webDomains)
        }
        if activity == names.daily, coolingDown() {
            // `daily` counted on through a dismiss while the day check was pending (`nudged`): its answer is in, and
            // the dismiss pauses the count from here. A crossing after that instant would count the dismissed app's
            // cooldown.
            do { try center.stopMonitoringActivities([names.daily]) } catch { logger?.error("cannot pause the count for the cooldown: \(error)") }
            guard answersTheDayCheck() else { return }
        }
        reblock(state, reason: "the daily threshold was reached", passing: coolingDown() ? dismissedApplication() : [])
        do {
            try defaults.set(now.timeIntervalSince1970, forKey: SharedKey.speedBumpRaised)
            // One chain of checks per day: a threshold reached again after a dismiss keeps the running one.
            let today = osDay()
            guard try defaults.string(forKey: SharedKey.speedBumpDay) != today.key else { return }
            try defaults.set(today.key, forKey: SharedKey.speedBumpDay)
            try chain.scheduleCheck(at: nextSpeedBumpCheck(in: today))
        } catch {
            logger?.error("cannot schedule the end of the speed bump: \(error)")
        }
    }

    /// The delegate recorded a nudge: unblock only the app the system handed it, pause monitoring for the cooldown —
    /// unless a check of the device's new day is pending: `daily` brings the threshold that check waits for (stopped
    /// here, it would never bring it, and the check would lift every shield with the new day past its threshold), so
    /// it counts on until that threshold comes (`answersTheDayCheck`) or the resume registers it again.
    open override func nudged() {
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
    open override func keepTheDismissedApplicationCurrent() {
        // Only while a dismiss let an app through a speed bump that is up: the one time the shield is written anew.
        guard ((try? defaults.string(forKey: SharedKey.speedBumpDay)) ?? nil) != nil,
              ((try? defaults.double(forKey: SharedKey.nudgeCooldownUntil)) ?? nil) != nil,
              let event = names.keptSelection.osCopy(center: center) else { return }
        do {
            try DismissedApplication.keepCurrent(in: defaults, selected: event.applications, shield: try shields.store.shield.current())
        } catch {
            logger?.error("cannot record the dismissed app in today's tokens: \(error)")
        }
    }

    /// The OS's day the daily threshold counts in (`OSDay`): a zone change may leave it running past the date shown.
    /// Within one callback it is the same day however often it is asked (the first asking saves what changed), and
    /// each asking reads the App Group: a callback asks once and hands the day on.
    func osDay() -> OSDay { OSDay.current(in: defaults) }

    /// The key of the OS's day, ordered as the days (`OSDay.key`): what `monitor.speedBumpDay` holds.
    func osToday() -> String { osDay().key }

    /// Whether a dismiss's cooldown runs.
    func coolingDown() -> Bool {
        ((try? defaults.double(forKey: SharedKey.nudgeCooldownUntil)) ?? nil).map { $0 > now.timeIntervalSince1970 } ?? false
    }

    /// Whether the device shows a later date than the speed bump's: its day check (`speedBumpDayMoved`) has not yet
    /// kept it for the new day or lifted it.
    func dayCheckPending() -> Bool {
        guard let day = (try? defaults.string(forKey: SharedKey.speedBumpDay)) ?? nil else { return false }
        return osToday() > day
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
    /// only delay (registered by the resume's callback, itself up to a minute late under `ios-realistic`, the threshold
    /// would come up to two minutes after the use reached it). The interval's start registers the daily threshold
    /// again for the days after. When no such interval can start when due (less than 15 minutes before the device's
    /// midnight, or in a repeated DST hour), the plain resume window is planned. A cooldown that ends on the device's
    /// next date cannot be registered ahead today (`countingWindow`): the plain window then starts at the midnight
    /// between, whose callback (`resumeThresholdMonitoring`) registers the interval from the cooldown's end on the new
    /// date (a window at the end's whole minute would register the threshold only after the end, and with the
    /// threshold's own delay the selection would stay usable past its threshold).
    func planResume(until: Date) throws {
        if let schedule = TrueTimeSchedules.countingWindow(from: until), let state = readState() {
            let list = Self.currentBlockList(state, center: center, names: names)
            try chain.startMonitoring(names.resume, during: schedule, events: [names.thresholdEvent: options.thresholdEvent(list)], checkingAt: until)
            return
        }
        let midnight = TrueTimeSchedules.nextDeviceMidnight(after: now)
        if midnight > until, let schedule = TrueTimeSchedules.warningWindow(checkingAt: until) {
            // The device clock shows the cooldown's end in a repeated hour's second pass: no one-off schedule starts
            // there (the OS reads its wall time as the first pass), and the first quarter hour it reads as planned is
            // up to an hour on — the dismissed app would count nothing for that long. Its end warning comes at the true
            // end, whose callback registers the threshold (the habit lock's re-checks there, `checkSchedule`).
            try chain.startMonitoring(names.resume, during: schedule, checkingAt: until, atEndWarning: true)
            return
        }
        let check = TrueTimeSchedules.startingWhenDue(midnight <= until ? midnight : TrueTimeSchedules.minuteAfter(until))
        try chain.startMonitoring(names.resume, during: TrueTimeSchedules.window(at: check), checkingAt: check)
    }

    /// Outside a cooldown the daily threshold must be registered: a re-registration the OS refused (the limit full) is
    /// tried again at every check, so the speed bump comes back (else a `daily` refused at the cooldown's end would
    /// leave the app usable for the rest of the day). Only once the app has set up its schedules.
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
    /// further apart than 44 minutes lead up to midnight (else the shields could be kept into the next day).
    /// `known`: the OS's day this callback has asked for already.
    open func checkSpeedBumpDay(in known: OSDay? = nil) {
        guard let day = try? defaults.string(forKey: SharedKey.speedBumpDay) else { return }
        do {
            let current = known ?? osDay(), today = current.key
            if day == today {
                try chain.scheduleCheck(at: nextSpeedBumpCheck(in: current))
            } else if today < day {
                // A clock or zone change made "today" the previous date. That day began earlier in true time and the OS
                // counts all its use, the use that raised the speed bump included: it holds to that day's end.
                try defaults.set(today, forKey: SharedKey.speedBumpDay)
                try chain.scheduleCheck(at: nextSpeedBumpCheck(in: current))
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
    /// selection through until then, so the monitor checks at that whole minute instead, and lifts only if no
    /// threshold came for the new day — unless the count that raised the speed bump lies within the new day
    /// (`raisedWithinToday`): then it is the new day's.
    func speedBumpDayMoved() {
        if let day = try? defaults.string(forKey: SharedKey.speedBumpDay), osToday() > day {
            do {
                guard raisedWithinToday() else {
                    try chain.scheduleCheck(at: TrueTimeSchedules.minuteAfter(now))
                    return
                }
                try defaults.set(osToday(), forKey: SharedKey.speedBumpDay)
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
    /// cooldown's end — and waiting for it would lift a speed bump that has to stay.
    func raisedWithinToday() -> Bool {
        guard let raised = (try? defaults.double(forKey: SharedKey.speedBumpRaised)) ?? nil,
              let cooldownEnd = (try? defaults.double(forKey: SharedKey.nudgeCooldownUntil)) ?? nil, raised >= cooldownEnd else { return false }
        return osDay().start.timeIntervalSince1970 <= cooldownEnd
    }

    /// The next check on a running speed bump: 44 minutes out, or the end of the OS's day (`day`, else asked for) when
    /// that is sooner.
    func nextSpeedBumpCheck(in day: OSDay? = nil) -> Date {
        TrueTimeSchedules.startingWhenDue(min(now.addingTimeInterval(44 * 60), (day ?? osDay()).end))
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
        // and a threshold on stale tokens never counts again: the speed bump would not come back that day.
        let list = Self.currentBlockList(state, center: center, names: names)
        let register = { [self] in
            try center.startMonitoring(names.daily, during: TrueTimeSchedules.allDay, events: [names.thresholdEvent: options.thresholdEvent(list)])
        }
        do {
            do {
                try register()
            } catch PluginError.device(let refusal) where refusal.code == "excessive-activities" {
                // The app's other activities have taken the place `daily` left at the dismiss: the cooldown's own slot
                // (`resume`, counting from the cooldown's end) makes room for it. `daily` counts from this whole-minute
                // callback, so the use since the cooldown's end is not counted: the ruling's two delays
                // (docs/explore.md, "Two delays with the activity limit full").
                logger?.warning("registering the daily threshold again was refused (\(refusal)): the cooldown's slot makes room for it")
                try center.stopMonitoringActivities([names.resume])
                try register()
            }
        } catch {
            logger?.error("cannot resume monitoring: \(error)")
        }
    }

    open override func productCheckIsDue(for activity: DeviceActivityName) {
        let day = osDay()  // notes the OS's day while its zone is known: a zone change after it may leave it running
        if activity == names.daily {
            checkSpeedBumpDay(in: day)
        } else if activity == names.selection, coolingDown() {
            // The app set up again during a dismiss's cooldown (after a revocation, which stopped the cooldown's end
            // with every other schedule): the count must still start again at its end.
            registerTheThresholdIfLost()
        } else if activity == names.resume {
            resumeThresholdMonitoring()
        }
    }

    open override func chainedCheckIsDue() {
        let day = osDay()
        registerTheThresholdIfLost()
        checkSpeedBumpDay(in: day)
    }

    open override func clockChanged() {
        super.clockChanged()
        speedBumpDayMoved()
        if let until = try? defaults.double(forKey: SharedKey.nudgeCooldownUntil).map(Date.init(timeIntervalSince1970:)), until > now {
            do { try planResume(until: until) } catch { logger?.error("cannot plan the end of the cooldown again: \(error)") }
        }
    }
}
