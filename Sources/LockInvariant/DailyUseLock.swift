import Configuration
import Foundation

/// The daily-use lock (`locked.dailyUse`): the OS counts the selection's use within the device's day toward a
/// threshold, a dismiss pauses the count for a cooldown. Its rulings (docs/explore.md) are the OS's behaviours around
/// that count: the device's day, two delays after a cooldown, a revocation after a cooldown, a dismiss an iOS update
/// and a revocation forgot.
extension ProductRules {
    private var dailyUse: Promise.DailyUse { promise.locked.dailyUse! }
    private var thresholdMinutes: Int { dailyUse.minutes }
    private var cooldownMinutes: Int { dailyUse.cooldownMinutes }

    /// A daily-use lock: locked from the instant the selection's use (public use: the OS counts no private tab) reaches
    /// `thresholdMinutes` within the day the device shows, to that day's end. "Dismiss" (the primary button on an
    /// app's shield) lets that app through and pauses the count for `cooldownMinutes`; the count then starts again
    /// from zero, and when it reaches the threshold everything is locked again.
    ///
    /// The day is the device's (`JournalFacts.deviceDays`), not the true one: the OS counts DeviceActivity by the
    /// device clock in the zone in force, and a person who sets the clock moves their day. The product can know no
    /// other count — on a phone its own clock is that clock — so the promise is "30 minutes a day as the phone
    /// shows it" (docs/explore.md, "The device's day").
    ///
    /// A lock whose count restarted at a cooldown's end gets a minute of use and a minute when a clock or zone change
    /// came before it within that count, or the activity limit refused the count's registration at the cooldown's end,
    /// under `whole-minute-callbacks` (`twoDelaysLate`, `twoDelaysGrace`).
    func dailyUseLocks(for target: Target, facts: JournalFacts) -> Locks {
        let used = Periods(facts.usable.filter { !$0.isPrivate && isSelected($0.target) }.map { DateInterval(start: $0.from, end: $0.to) })
        let cooldown = Double(cooldownMinutes) * 60
        let dismisses = dailyUse.dismiss.map { button in facts.presses.filter { $0.action == button.shieldAction && $0.target.isApp && isSelected($0.target) } } ?? []
        let approvals = facts.unauthorized(plugins: plugins).intervals.map(\.end).filter { $0 < facts.range.end }
        var locks = Locks()
        for day in facts.deviceDays() {
            let nudges = dismisses.filter { day.contains($0.at) }
            var first = firstLock(in: day, used: used, dismisses: dismisses, facts: facts)
            let firstApproval = countAfterApproval(reached: first.start, countingFrom: first.countStart, day: day, approvals: approvals, used: used, facts: facts)
            // Registered at the approval by the app itself: not the whole-minute callback's two delays (below).
            if let firstApproval { first = (firstApproval.reached, nil) }
            var reached = first.start
            var countStart = first.countStart
            while let lockStart = reached {
                if let countStart, twoDelaysLate(reached: lockStart, countingFrom: countStart, facts: facts) {
                    locks.graces[lockStart] = twoDelaysGrace(reached: lockStart, countingFrom: countStart, used: used, day: day, facts: facts)
                }
                var period = Periods([DateInterval(start: lockStart, end: day.end)])
                // Each dismiss from this lock on pauses the count again; the next lock comes once it reaches the threshold.
                var next: Date?
                var resumed: Date?
                var countsFromApproval = false
                for nudge in nudges where nudge.at >= lockStart {
                    if let next, nudge.at >= next { break }
                    resumed = nudge.at.addingTimeInterval(cooldown)
                    next = thresholdReached(in: used, from: resumed!, until: day.end, facts: facts)
                    let approval = countAfterApproval(reached: next, countingFrom: resumed, day: day, approvals: approvals, used: used, facts: facts)
                    if let approval { next = approval.reached }
                    countsFromApproval = approval != nil
                }
                if let next { period = period.subtracting(Periods([DateInterval(start: next, end: day.end)])) }
                if let nudge = nudges.first(where: { $0.target == target && $0.at >= lockStart && $0.at < (next ?? day.end) }) {
                    period = period.subtracting(Periods([DateInterval(start: nudge.at, end: next ?? day.end)]))
                    if let forgotten = dismissForgotten(at: nudge.at, until: next ?? day.end, facts: facts) {
                        locks.mayBeShielded.insert(DateInterval(start: forgotten, end: next ?? day.end))
                    }
                }
                locks.periods = locks.periods.union(period)
                reached = resumed == nil ? nil : next
                // The two delays of a count restarted by a whole-minute callback; one registered at an approval has neither.
                countStart = countsFromApproval ? nil : resumed
            }
        }
        return locks
    }

    /// The approval from which a dismiss's pass (from `dismissed` to `passEnd`) may be shielded again — the checker's
    /// ruling (docs/explore.md, "A dismiss an iOS update and a revocation forgot"): an iOS update regenerated every
    /// token after the dismiss, and a revocation cleared the shields before the product's monitor ran again. The
    /// OS's copies that name the dismissed app in the new tokens (the store that lets it through) are gone, and tokens
    /// are opaque: raising the speed bump again at the approval, the product cannot leave that one app out.
    private func dismissForgotten(at dismissed: Date, until passEnd: Date, facts: JournalFacts) -> Date? {
        for revoked in facts.unauthorized(plugins: plugins).intervals where revoked.start > dismissed && revoked.end < passEnd {
            guard let update = facts.osUpdates.last(where: { $0 > dismissed && $0 < revoked.start }) else { continue }
            let monitorRan = facts.callbacks.contains { $0.at > update && $0.at < revoked.start && $0.registrant.map(plugins.contains) ?? false }
            if !monitorRan { return revoked.end }
        }
        return nil
    }

    /// When the day's first lock starts, if its count reaches the threshold, and where that count began if not at the
    /// day's start (`countStart`, a cooldown's end). The count runs from the day's start
    /// on the device clock, or from the end of the latest cooldown of a dismiss before the lock: one before the day
    /// that ends in it, or one in the day on a shield still up from the day before (a move to a later date, the
    /// monitor's check at the next whole minute) — a dismiss pauses the count whichever day it falls in, and the OS
    /// counts from the threshold's registration again at the cooldown's end.
    private func firstLock(in day: DateInterval, used: Periods, dismisses: [JournalFacts.Press], facts: JournalFacts) -> (start: Date?, countStart: Date?) {
        let cooldown = Double(cooldownMinutes) * 60
        var resumed = dismisses.filter { $0.at < day.start }.map { $0.at.addingTimeInterval(cooldown) }.max()
        var reached = thresholdReached(in: used, from: day.start, until: day.end, facts: facts, countingFrom: resumed ?? .distantPast)
        for nudge in dismisses where day.contains(nudge.at) && nudge.at < (reached ?? day.end) {
            resumed = nudge.at.addingTimeInterval(cooldown)
            reached = thresholdReached(in: used, from: day.start, until: day.end, facts: facts, countingFrom: resumed)
        }
        return (reached, resumed)
    }

    /// Where a count that restarted at a cooldown's end today (`countStart`) reaches the threshold when the product's app
    /// lost its authorization and got it back after that end, before the threshold (nil when it did not): the count
    /// starts again at the approval — the checker's ruling (docs/explore.md, "A revocation after a cooldown"). A revocation
    /// stops the product's schedules; the threshold registered at the approval can count the day's use before it
    /// (`includesPastActivity`) but not the use since the cooldown's end alone, and a monitor has no readout of use: so
    /// the product counts from the approval, and the use between the cooldown's end and the revocation is forgiven.
    /// `approval`: where the count starts now (several lost authorizations restart it at the last).
    private func countAfterApproval(reached: Date?, countingFrom countStart: Date?, day: DateInterval, approvals: [Date], used: Periods,
                                    facts: JournalFacts) -> (reached: Date?, approval: Date)? {
        guard let cooldownEnd = countStart, cooldownEnd >= day.start else { return nil }
        var restart: (reached: Date?, approval: Date)?
        var reached = reached
        while let approval = approvals.first(where: { $0 > (restart?.approval ?? cooldownEnd) && $0 < (reached ?? day.end) }) {
            reached = thresholdReached(in: used, from: approval, until: day.end, facts: facts, countingFrom: approval)
            restart = (reached, approval)
        }
        return restart
    }

    /// Whether the OS's callback for a threshold reached at `reached`, its count restarted at a cooldown's end, may
    /// come two documented delays late — the checker's ruling (docs/explore.md, "Two delays after a cooldown and a clock or
    /// zone change"): under `whole-minute-callbacks`, when the interval registered ahead for the cooldown's end was lost,
    /// the count that remains is the daily threshold's, registered from a whole-minute callback (short by up to a
    /// minute), and its crossing comes on a whole minute again. Lost either to a clock or zone change between the
    /// cooldown's end and the threshold (it ends the interval), or to Apple's activity limit: the OS refused the daily
    /// threshold's registration at the cooldown's end's whole minute, so one slot holds the count, and only the daily
    /// registration survives a later change. Or to a fall-back: the device clock shows the cooldown's end in the
    /// second pass of the hour it repeats, where no interval can start (the OS reads the wall time as the first pass),
    /// so the count is registered from the end warning's whole-minute callback
    /// (docs/explore.md, "A cooldown ending in a repeated hour"). Only while the count still runs from the
    /// cooldown's end: a change that starts the device's day later restarts it from there.
    private func twoDelaysLate(reached: Date, countingFrom cooldownEnd: Date, facts: JournalFacts) -> Bool {
        guard facts.quirks.contains(Self.wholeMinuteCallbacks) else { return false }
        let changed = facts.nextClockOrZoneChange(after: cooldownEnd).map { $0 <= reached } ?? false
        let wholeMinute = Date(timeIntervalSince1970: (cooldownEnd.timeIntervalSince1970 / 60).rounded(.up) * 60)
        let refused = facts.thresholdRefusals.contains { $0 >= cooldownEnd && $0 <= wholeMinute }
        let repeated = facts.zones.showsARepeatedWallTime(at: cooldownEnd, clockOffset: facts.clockOffset(at: cooldownEnd))
        guard changed || refused || repeated else { return false }
        return facts.osDayStart(at: reached) <= cooldownEnd
    }

    /// The grace of a lock reached at `reached` that the OS may signal two delays late (`twoDelaysLate`): one for each
    /// delay, each in what it loses. The registration from the whole-minute callback misses up to a minute of *use* — the
    /// use between the cooldown's end and that minute — so the OS's count reaches the threshold once the checker's has
    /// counted a minute more, however long the person paused in between (the rest of that minute's use may come hours
    /// later); then its crossing comes up to a minute late. With use throughout, the ruling's two minutes.
    private func twoDelaysGrace(reached: Date, countingFrom cooldownEnd: Date, used: Periods, day: DateInterval, facts: JournalFacts) -> TimeInterval {
        let osReached = thresholdReached(in: used, from: max(day.start, cooldownEnd), until: day.end, facts: facts,
                                         countingFrom: cooldownEnd, extraUse: grace)
        return (osReached ?? day.end).timeIntervalSince(reached) + grace
    }

    /// The quirk's name as the journal's `bus.started` lists it (the checker knows the journal, not the device OS).
    static let wholeMinuteCallbacks = "whole-minute-callbacks"

    /// The instant, from `start` on, at which the OS's count of the use in `used` reaches the threshold, if it does
    /// before `end`. The OS counts within its day (`OSDays`), from that day's start in true time: a clock change
    /// replans the day and counts again from its new start, use before the change included; a zone change leaves the
    /// running day's count alone, unless the new zone's clock is past its end. So the count runs from the later of
    /// `countStart` (else `start`) and the start of the OS's day, which moves at each clock change, each device
    /// midnight and each zone change that ends the day.
    private func thresholdReached(in used: Periods, from start: Date, until end: Date, facts: JournalFacts, countingFrom countStart: Date? = nil,
                                  extraUse: TimeInterval = 0) -> Date? {
        let countStart = countStart ?? start
        var from = start
        while from < end {
            let offset = facts.clockOffset(at: from)
            let origin = max(countStart, facts.osDayStart(at: from))
            let until = min(end, facts.nextClockOrZoneChange(after: from) ?? end, facts.zones.nextDeviceDayStart(after: from, clockOffset: offset))
            if let reached = thresholdReached(in: used, countingFrom: origin, until: until, extraUse: extraUse) { return max(from, reached) }
            from = until
        }
        return nil
    }

    /// The instant the use in `used` from `origin` reaches the threshold (and `extraUse` more), if it does before `end`.
    private func thresholdReached(in used: Periods, countingFrom origin: Date, until end: Date, extraUse: TimeInterval = 0) -> Date? {
        // A count that starts after its end counts nothing (a span clipped to it would be negative and add time back).
        guard origin < end else { return nil }
        var remaining = Double(thresholdMinutes) * 60 + extraUse
        for span in used.intervals where span.end > origin && span.start < end {
            let from = max(span.start, origin), to = min(span.end, end)
            if to.timeIntervalSince(from) >= remaining { return from.addingTimeInterval(remaining) }
            remaining -= to.timeIntervalSince(from)
        }
        return nil
    }
}
