import BusProtocol
import Configuration
import Foundation

/// What one product promises, from its configuration: which targets it selected, which stores are its own, and
/// when each target must be locked — derived from what the person and the OS did (never from the plugins).
public struct ProductRules {
    public enum Kind: String, Sendable { case habitLock = "habit-lock", focusWindow = "focus-window", speedBump = "speed-bump" }

    /// The product's name in the configuration.
    public var name: String
    public var kind: Kind
    public var habitsPerDay = 3
    public var unlockMinutes = 30
    public var passMinutes = 5
    public var thresholdMinutes = 30
    public var cooldownMinutes = 15
    /// Focus hours as seconds of the local day; an end at or before its start ends on the next day (22:00–02:00).
    public var focusHours: [(start: Double, end: Double)] = []
    public var selectedApps: Set<String> = []
    public var selectedCategories: Set<String> = []
    public var selectedDomains: Set<String> = []
    /// The product's ManagedSettings stores; with one product on the device, every store but the OS's own is its.
    public var stores: Set<String> = []
    public var ownsEveryStore = false
    /// The product's plugins (whose authorization requests the OS answers for the product's app).
    public var plugins: Set<String> = []
    /// How long after a lock (or a permission) begins the other state may still show (the invariant's minute).
    public var grace: TimeInterval = 60

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// The rules of every reference product a configuration runs (a product whose plugins have a `product`
    /// option); a wrong option is an error naming the file, line and key.
    public static func all(in configuration: ShieldBusConfiguration, catalog: AppCatalog) throws -> [ProductRules] {
        let products = configuration.resolvedProducts
        return try products.compactMap { product -> ProductRules? in
            let plugins = configuration.plugins.filter { product.plugins.contains($0.name) }
            guard let plugin = plugins.first(where: { $0.options["product"] != nil }) else { return nil }
            func problem(_ key: String, _ message: String) -> ConfigurationError {
                ConfigurationError(file: configuration.file, line: plugin.line, column: 0, key: "plugins.\(plugin.name).options.\(key)", message: message)
            }
            let options = plugin.options
            guard let word = options["product"]?.stringValue, let kind = Kind(rawValue: word) else {
                throw problem("product", "expected one of habit-lock, focus-window, speed-bump")
            }
            var rules = ProductRules(name: product.name, kind: kind)
            func count(_ key: String, _ value: inout Int) throws {
                guard let option = options[key] else { return }
                guard let number = option.intValue, number > 0 else { throw problem(key, "expected a positive whole number") }
                value = Int(number)
            }
            try count("habitsPerDay", &rules.habitsPerDay)
            try count("unlockMinutes", &rules.unlockMinutes)
            try count("passMinutes", &rules.passMinutes)
            try count("thresholdMinutes", &rules.thresholdMinutes)
            try count("cooldownMinutes", &rules.cooldownMinutes)
            for hours in options["focusHours"]?.arrayValue ?? [] {
                guard let start = hours["start"]?.stringValue.flatMap(LocalDateTime.timeOfDay),
                      let end = hours["end"]?.stringValue.flatMap(LocalDateTime.timeOfDay) else {
                    throw problem("focusHours", "each window needs a start and an end, local times like \"22:00\"")
                }
                rules.focusHours.append((seconds(start), seconds(end)))
            }
            rules.selectedApps = Set(product.selectionApps.compactMap { catalog.app(named: $0)?.name })
            rules.selectedCategories = Set(product.selectionCategories.compactMap { catalog.category(id: $0)?.name })
            rules.selectedDomains = Set(product.selectionDomains)
            rules.stores = Set(product.stores.map(\.name))
            rules.plugins = Set(product.plugins)
            rules.ownsEveryStore = products.count == 1
            return rules
        }
    }

    private static func seconds(_ time: (hour: Int, minute: Int, second: Int)) -> Double {
        Double(time.hour * 3600 + time.minute * 60 + time.second)
    }

    /// Whether a target (an app or a domain, with its category) is part of the selection.
    func isSelected(_ target: Target) -> Bool {
        if let category = target.category, selectedCategories.contains(category) { return true }
        switch target {
        case .app(let name, _): return selectedApps.contains(name)
        case .domain(let host, _): return selectedDomains.contains { host == $0 || host.hasSuffix("." + $0) }
        }
    }

    /// Whether a shield shown with these stores is this product's (an OS view is nobody's).
    func owns(shieldFrom shieldStores: Set<String>) -> Bool {
        if ownsEveryStore { return !shieldStores.subtracting(Self.osViews).isEmpty }
        return !shieldStores.isDisjoint(with: stores)
    }

    /// What the OS's own views report as their store: Content & Privacy Restrictions and Screen Time's web limits.
    static let osViews: Set<String> = ["content-restrictions", "screen-time-limits"]

    /// When a selected target must be locked, within the journal's range.
    func locks(for target: Target, facts: JournalFacts) -> Locks {
        switch kind {
        case .habitLock:
            return Locks(periods: Periods([facts.range]).subtracting(unlocks(facts)))
        case .focusWindow:
            guard target.isApp else { return Locks(periods: focusPeriods(facts)) }  // passes are for apps only
            let passes = facts.presses.filter { $0.target == target && $0.action == .secondaryButtonPressed }
            return Locks(periods: focusPeriods(facts).subtracting(Periods(passes.map { DateInterval(start: $0.at, duration: Double(passMinutes) * 60) })))
        case .speedBump:
            return speedBumpLocks(for: target, facts: facts)
        }
    }

    /// Habit lock: each unlock lasts `unlockMinutes` in true time from the moment the local day's last
    /// required habit was done — past midnight too: the person earned it.
    func unlocks(_ facts: JournalFacts) -> Periods {
        var doneByDay: [Int: Set<String>] = [:]
        var windows = Periods()
        for completion in facts.habitCompletions {
            let day = facts.zones.wallTime(at: completion.at).day
            guard doneByDay[day, default: []].insert(completion.habit).inserted else { continue }
            if doneByDay[day]!.count == habitsPerDay { windows.insert(DateInterval(start: completion.at, duration: Double(unlockMinutes) * 60)) }
        }
        return windows
    }

    /// Focus window: whenever the wall clock in the zone in force shows a time within the focus hours.
    func focusPeriods(_ facts: JournalFacts) -> Periods {
        facts.zones.periods(in: facts.range, boundaries: focusHours.flatMap { [$0.start, $0.end] }) { wall in
            focusHours.contains { hours in
                hours.start < hours.end ? (hours.start..<hours.end).contains(wall.secondOfDay)
                    : wall.secondOfDay >= hours.start || wall.secondOfDay < hours.end
            }
        }
    }

    /// Speed bump: locked from the instant the selection's use (public use: the OS counts no private tab) reaches
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
    func speedBumpLocks(for target: Target, facts: JournalFacts) -> Locks {
        let used = Periods(facts.usable.filter { !$0.isPrivate && isSelected($0.target) }.map { DateInterval(start: $0.from, end: $0.to) })
        let cooldown = Double(cooldownMinutes) * 60
        let dismisses = facts.presses.filter { $0.action == .primaryButtonPressed && $0.target.isApp && isSelected($0.target) }
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

    /// The approval from which a dismiss's pass (from `dismissed` to `passEnd`) may be shielded again — the lead's
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
    /// monitor's check at the next whole minute; speed-bump 6167) — a dismiss pauses the count whichever day it falls
    /// in, and the OS counts from the threshold's registration again at the cooldown's end.
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
    /// starts again at the approval — the lead's ruling (docs/explore.md, "A revocation after a cooldown"). A revocation
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
    /// come two documented delays late — the lead's ruling (docs/explore.md, "Two delays after a cooldown and a clock or
    /// zone change"): under `whole-minute-callbacks`, when the interval registered ahead for the cooldown's end was lost,
    /// the count that remains is the daily threshold's, registered from a whole-minute callback (short by up to a
    /// minute), and its crossing comes on a whole minute again. Lost either to a clock or zone change between the
    /// cooldown's end and the threshold (it ends the interval), or to Apple's activity limit: the OS refused the daily
    /// threshold's registration at the cooldown's end's whole minute, so one slot holds the count, and only the daily
    /// registration survives a later change (speed-bump 9143, 9235). Or to a fall-back: the device clock shows the
    /// cooldown's end in the second pass of the hour it repeats, where no interval can start (the OS reads the wall
    /// time as the first pass), so the count is registered from the end warning's whole-minute callback
    /// (docs/explore.md, "A cooldown ending in a repeated hour"). Only while the count still runs from the
    /// cooldown's end: a change that starts the device's day later restarts it from there.
    private func twoDelaysLate(reached: Date, countingFrom cooldownEnd: Date, facts: JournalFacts) -> Bool {
        guard facts.quirks.contains(Self.wholeMinuteCallbacks) else { return false }
        let changed = facts.nextClockOrZoneChange(after: cooldownEnd).map { $0 <= reached } ?? false
        let wholeMinute = Date(timeIntervalSince1970: (cooldownEnd.timeIntervalSince1970 / 60).rounded(.up) * 60)
        let refused = facts.thresholdRefusals.contains { $0 >= cooldownEnd && $0 <= wholeMinute }
        let repeated = facts.zones.showsARepeatedWallTime(at: cooldownEnd, clockOffset: facts.clockOffset(at: cooldownEnd))
        guard changed || refused || repeated else { return false }
        return facts.zones.deviceDayStart(at: reached, clockOffset: facts.clockOffset(at: reached)) <= cooldownEnd
    }

    /// The grace of a lock reached at `reached` that the OS may signal two delays late (`twoDelaysLate`): one for each
    /// delay, each in what it loses. The registration from the whole-minute callback misses up to a minute of *use* — the
    /// use between the cooldown's end and that minute — so the OS's count reaches the threshold once the checker's has
    /// counted a minute more, however long the person paused in between (speed-bump 10563: 27 s used past the threshold,
    /// the rest of that minute's use four hours later); then its crossing comes up to a minute late. With use
    /// throughout, the ruling's two minutes.
    private func twoDelaysGrace(reached: Date, countingFrom cooldownEnd: Date, used: Periods, day: DateInterval, facts: JournalFacts) -> TimeInterval {
        let osReached = thresholdReached(in: used, from: max(day.start, cooldownEnd), until: day.end, facts: facts,
                                         countingFrom: cooldownEnd, extraUse: grace)
        return (osReached ?? day.end).timeIntervalSince(reached) + grace
    }

    /// The quirk's name as the journal's `bus.started` lists it (the checker knows the journal, not the device OS).
    static let wholeMinuteCallbacks = "whole-minute-callbacks"

    /// The instant, from `start` on, at which the OS's count of the use in `used` reaches the threshold, if it does
    /// before `end`. The OS counts within the day its device clock shows, in the zone in force, from that day's start
    /// in true time: a clock or zone change replans the day and counts again from its new start, use before the change
    /// included. So the count runs from the later of `countStart` (else `start`) and the start of the device's day,
    /// which moves at each clock or zone change and each device midnight.
    private func thresholdReached(in used: Periods, from start: Date, until end: Date, facts: JournalFacts, countingFrom countStart: Date? = nil,
                                  extraUse: TimeInterval = 0) -> Date? {
        let countStart = countStart ?? start
        var from = start
        while from < end {
            let offset = facts.clockOffset(at: from)
            let origin = max(countStart, facts.zones.deviceDayStart(at: from, clockOffset: offset))
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
