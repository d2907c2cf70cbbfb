import DeviceActivity
import Foundation
import Logging
import ShieldBusSDK

/// Callbacks at true instants for a monitor — "call me at T" — that survive what iOS does to schedules: a check is a
/// one-off 15-minute interval starting at T in rotating slots (no schedule overwrites another), or the end warning of
/// one when the device clock shows T in a repeated DST hour's second pass; a check the OS refuses at the activity
/// limit goes to the reserve slot; a check planned again and again at one instant (the OS starting its interval at
/// once, the callback planning it again) is registered so that it cannot loop. Its state lives in the App Group under
/// `keyPrefix` (the monitor's slice), so each short-lived launch of the extension picks it up.
///
/// A monitor reads an interval's start as a check when it is a slot's (`isChainSlot`) or the reserve's holding one
/// (`takeReserveCheck`), unless the start means nothing (`startMeansNothing`: the check is the end warning, which it
/// reads instead); then it re-evaluates its whole state (a reserve check stands in for any refused one) and plans the next.
public final class CheckChain {
    public let center: DeviceActivityCenter
    public let defaults: SharedDefaults
    /// The slots' names begin with it (`<prefix>.reblock_0` …): one prefix per product.
    public let prefix: String
    /// The one activity that holds a check the OS refused (registered daily, so a name already monitored is never refused).
    public let reserve: DeviceActivityName
    public let keys: Keys
    /// The name of rotating slot `index` (a test's naive monitor overrides it).
    public var slotName: (Int) -> DeviceActivityName
    /// What happens to a check the OS refused at the activity limit; by default `moveToReserve`.
    public var onRefusal: ((Date, DeviceError) throws -> Void)?

    /// The App-Group keys of the chain's state.
    public struct Keys: Sendable {
        public var slot: String
        public var reserveCheck: String
        public var plannedChecks: String
        public var checksAtEndWarning: String
        public var calls: String

        public init(prefix: String) {
            calls = prefix + "calls"
            slot = prefix + "chainSlot"
            reserveCheck = prefix + "reserveCheck"
            plannedChecks = prefix + "plannedChecks"
            checksAtEndWarning = prefix + "checksAtEndWarning"
        }
    }

    /// The checks a monitor planned at one instant (seconds since 1970): for each check's instant, how many times. A
    /// check planned again and again at one instant means the OS keeps starting its interval at once.
    public struct PlannedChecks: Codable, Equatable {
        public var plannedAt: Double
        public var times: [String: Int]
    }

    /// The keyed containers the encoding of what it stores makes, for MonitorKit's part of a launch template's
    /// warm-up to name (`MonitorKitWarmUp`; ScreenTime's `ShieldSettings.encodingContainerTypes` says why).
    static var encodingContainerTypes: [Any.Type] { [PlannedChecks.encodingContainerType, PlannedCall.encodingContainerType] }

    /// How far ahead one check is planned at most: a schedule further out may fire early, late or never.
    public static let horizon: TimeInterval = 44 * 60

    public init(center: DeviceActivityCenter = DeviceActivityCenter(), defaults: SharedDefaults, prefix: String,
                reserve: DeviceActivityName, keyPrefix: String = "monitor.") {
        self.center = center
        self.defaults = defaults
        self.prefix = prefix
        self.reserve = reserve
        keys = Keys(prefix: keyPrefix)
        slotName = { DeviceActivityName("\(prefix).reblock_\($0 % 5)") }
    }

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }

    // MARK: Planning

    /// A call planned: the instant of its check and the activity registered for it.
    public struct PlannedCall: Codable, Equatable {
        public var at: Double
        public var activity: String
    }

    /// A check at `date`, or sooner: at most `horizon` from now (re-evaluate then, and call again). Nothing is
    /// registered when a call already planned comes at or before it and its activity is still monitored: that check
    /// re-evaluates and calls again, and a monitor that called at every callback would otherwise double its checks at
    /// each one. A revoked authorization takes every schedule with it, so a planned call is trusted only while the OS
    /// still holds its activity — and never one the reserve holds: the app registers the reserve again at its set-up,
    /// without the check. (When the OS does not answer, the calls planned are trusted: the next check plans again.)
    public func call(at date: Date) throws {
        let due = Self.comingAt(min(date, now.addingTimeInterval(Self.horizon)), after: now)
        var pending = plannedCalls().filter { $0.at > now.timeIntervalSince1970 }
        if pending.contains(where: { $0.at <= due.timeIntervalSince1970 }) {
            guard let monitored = try? Set(center.monitoredActivities().map(\.rawValue)) else {
                logger?.warning("cannot list the monitored activities: the calls planned are kept")
                return
            }
            pending = pending.filter { $0.activity != reserve.rawValue && monitored.contains($0.activity) }
            if pending.contains(where: { $0.at <= due.timeIntervalSince1970 }) { return }
        }
        let activity = try scheduleCheck(at: due)
        pending.append(PlannedCall(at: due.timeIntervalSince1970, activity: activity.rawValue))
        try defaults.set(pending.sorted { $0.at < $1.at }, forKey: keys.calls)
    }

    /// When a check planned for `date` comes: the OS reads a schedule's start to the whole second of the device's
    /// clock, so a fractional instant comes up to a second early. Planned at that instant, a call is over once its
    /// check has come; at the fractional one, its own check would find it still ahead and plan no next one, and the
    /// chain would stop. Never at or before `now`: the next second then.
    static func comingAt(_ date: Date, after now: Date) -> Date {
        let shown = BusClock.deviceClock(at: date).timeIntervalSince1970
        let due = date.addingTimeInterval(shown.rounded(.down) - shown)
        return due > now ? due : due.addingTimeInterval(1)
    }

    /// The calls planned so far (`call(at:)`), past ones included.
    public func plannedCalls() -> [PlannedCall] {
        (try? storedValue([PlannedCall].self, forKey: keys.calls, reading: PlannedCall.list(storedJSON:))) ?? nil ?? []
    }

    /// Schedules one check at `date` in the next rotating slot (a 15-minute window, DeviceActivity's minimum).
    /// When the OS refuses a new slot (the app's 20 activities are taken), the check goes to the reserve slot
    /// instead: no other path re-blocks while the app is suspended, nor ends a speed bump at the device's midnight.
    /// Returns the activity that holds the check: the slot's, or the reserve's when the OS refused the slot.
    @discardableResult
    public func scheduleCheck(at date: Date) throws -> DeviceActivityName {
        let slot = (try defaults.integer(forKey: keys.slot) ?? -1) + 1
        try defaults.set(slot, forKey: keys.slot)
        let check = TrueTimeSchedules.checkSchedule(at: date)
        return try startMonitoring(check.atEndWarning ? warningSlotName(slot) : slotName(slot), during: check.schedule, checkingAt: date)
    }

    /// Registers a schedule the product relies on for a check at `date` (a re-check, a pass's or a cooldown's end, a
    /// window's boundary); with `atEndWarning`, the check is the schedule's end warning and its start means nothing. When
    /// the OS refuses it for the limit, the check goes to the reserve slot, whose check re-evaluates the product's whole
    /// state, so it stands in for whichever registration was refused.
    ///
    /// The loop guard: a check planned more than 16 times at one instant means the OS starts its interval at once each
    /// time and its callback plans the check again (a schedule in a skipped hour; a window read on the wrong day). It is
    /// then logged and registered as the end warning of an interval starting now, without events (the callback that
    /// stands for the start registers them), so the callbacks cannot loop.
    ///
    /// Returns the activity that holds the check: `activity`, or the reserve when the OS refused it.
    @discardableResult
    public func startMonitoring(_ activity: DeviceActivityName, during schedule: DeviceActivitySchedule,
                                events: [DeviceActivityEvent.Name: DeviceActivityEvent] = [:], checkingAt date: Date, atEndWarning: Bool = false) throws -> DeviceActivityName {
        let stored = try? storedValue(PlannedChecks.self, forKey: keys.plannedChecks, reading: PlannedChecks.init(storedJSON:))
        var plans = stored.flatMap { $0.plannedAt == now.timeIntervalSince1970 ? $0 : nil } ?? PlannedChecks(plannedAt: now.timeIntervalSince1970, times: [:])
        let key = String(date.timeIntervalSince1970), times = (plans.times[key] ?? 0) + 1
        plans.times[key] = times
        var (schedule, events, atEndWarning) = (schedule, events, atEndWarning)
        // A clock change plans a check once per callback it brings (the change, each window's end and start, …): a
        // handful. Hundreds are a loop.
        if times > 16 {
            guard times == 17 || !checksAtEndWarning().contains(activity.rawValue) else {  // already registered so at this instant
                try defaults.set(plans, forKey: keys.plannedChecks)
                return activity
            }
            logger?.warning("the check for \(busTime(date)) was planned \(times) times at this instant (the OS starts \(activity.rawValue) at once): it comes as an end warning instead, so it cannot loop")
            if let runtime = PluginRuntime.current {
                try runtime.publish("x.\(runtime.name).check-loop", json: ["at": .int(busTime(date)), "activity": .string(activity.rawValue)])
            }
            (schedule, events, atEndWarning) = (TrueTimeSchedules.endWarningWindow(checkingAt: date), [:], true)
        }
        var holder = activity, registered = false
        do {
            try center.startMonitoring(activity, during: schedule, events: events)
            registered = true
        } catch PluginError.device(let refusal) where refusal.code == "excessive-activities" {
            if let onRefusal { try onRefusal(date, refusal) } else { try moveToReserve(at: date, refusal: refusal) }
            holder = reserve
        }
        // Recorded after the call: the monitor hears its own writes, and one heard during a call would hold the
        // short-lived extension's process past its callback (and under ios-realistic a later callback would be lost).
        try defaults.set(plans, forKey: keys.plannedChecks)
        if registered { try mark(activity, checkingAtEndWarning: atEndWarning) }
        return holder
    }

    /// Notes whether `activity`'s check is its end warning (its start then means nothing), leaving the others' notes.
    func mark(_ activity: DeviceActivityName, checkingAtEndWarning atEndWarning: Bool) throws {
        var marked = Set(checksAtEndWarning())
        if atEndWarning { marked.insert(activity.rawValue) } else { marked.remove(activity.rawValue) }
        if marked.sorted() != checksAtEndWarning() { try defaults.set(marked.sorted(), forKey: keys.checksAtEndWarning) }
    }

    /// The activities whose check is their interval's end warning (`startMonitoring`'s `atEndWarning` and loop guard).
    public func checksAtEndWarning() -> [String] {
        (try? defaults.value([String].self, forKey: keys.checksAtEndWarning)) ?? []
    }

    /// Puts the check at `date` in the reserve slot, unless it already holds a sooner one still ahead (the chain
    /// goes on from that one). A repeating window, so that the slot stays registered once the check has fired.
    public func moveToReserve(at date: Date, refusal: DeviceError) throws {
        let held = try defaults.double(forKey: keys.reserveCheck).map(Date.init(timeIntervalSince1970:))
        if let held, held > now, held <= date {
            logger?.warning("re-check at \(busTime(date)) refused (\(refusal)): the reserve slot holds a sooner one")
            return
        }
        logger?.warning("re-check at \(busTime(date)) refused (\(refusal)): it goes to the reserve slot")
        try registerReserve(checkingAt: date)
        try defaults.set(date.timeIntervalSince1970, forKey: keys.reserveCheck)
        if let runtime = PluginRuntime.current {
            try runtime.publish("x.\(runtime.name).recheck-refused", json: ["at": .int(busTime(date)), "code": .string(refusal.code)])
        }
    }

    /// Registers the reserve for a check at `date`: a window starting then, or — when the device clock shows `date` in
    /// a repeated hour's second pass, where no window starts when due — an interval whose end warning comes then, its
    /// start meaning nothing (as a slot's, `checkSchedule`). Both repeat, so the slot stays registered.
    func registerReserve(checkingAt date: Date) throws {
        let check = TrueTimeSchedules.checkSchedule(at: date)
        let schedule = check.schedule
        try center.startMonitoring(reserve, during: DeviceActivitySchedule(intervalStart: schedule.intervalStart, intervalEnd: schedule.intervalEnd,
                                                                           repeats: true, warningTime: schedule.warningTime))
        try mark(reserve, checkingAtEndWarning: check.atEndWarning)
    }

    /// The check the reserve slot holds, if any.
    public func reserveCheck() -> Date? {
        ((try? defaults.double(forKey: keys.reserveCheck)) ?? nil).map(Date.init(timeIntervalSince1970:))
    }

    /// The device clock or zone changed: the reserve's schedule is wall-clock time, so its check would now come at
    /// another true instant (the clock set back 2 h moved an unlock's only live re-check 2 h later). It is registered
    /// again on the new clock; a name already monitored is never refused.
    public func replanReserveCheck() {
        guard let held = try? defaults.double(forKey: keys.reserveCheck).map(Date.init(timeIntervalSince1970:)) else { return }
        do {
            try registerReserve(checkingAt: max(held, now))
        } catch {
            logger?.error("cannot move the reserve re-check to the new clock: \(error)")
        }
    }

    /// The device clock or zone changed: every check registered so far comes at another true instant (its schedule is
    /// wall-clock time), so the calls planned are forgotten — the monitor calls again for what it needs — and the
    /// reserve's check moves to the new clock.
    public func clockChanged() {
        do { _ = try defaults.removeObject(forKey: keys.calls) } catch { logger?.error("cannot forget the planned calls: \(error)") }
        replanReserveCheck()
    }

    // MARK: Callbacks

    public func isChainSlot(_ activity: DeviceActivityName) -> Bool { activity.rawValue.hasPrefix("\(prefix).reblock") }

    /// A re-check slot whose check is its interval's end warning (`warningWindow`); its start means nothing.
    public func warningSlotName(_ index: Int) -> DeviceActivityName { DeviceActivityName("\(prefix).reblockAtWarning_\(index % 5)") }

    public func isWarningSlot(_ activity: DeviceActivityName) -> Bool { activity.rawValue.hasPrefix("\(prefix).reblockAtWarning_") }

    /// Whether an interval's start is no check at all: a warning slot's, or one registered with its check at the end warning.
    public func startMeansNothing(_ activity: DeviceActivityName) -> Bool {
        isWarningSlot(activity) || checksAtEndWarning().contains(activity.rawValue)
    }

    /// The reserve's interval started, or the end warning standing for its start came: whether it held a check,
    /// which is then freed (its set-up interval and its daily repeats hold none).
    public func takeReserveCheck() -> Bool {
        guard reserveCheck() != nil else { return false }
        do { _ = try defaults.removeObject(forKey: keys.reserveCheck) } catch { logger?.error("cannot free the reserve slot: \(error)") }
        return true
    }
}

// Their keys are private to each (synthesized): named here, in their file.
extension CheckChain.PlannedChecks {
    static var encodingContainerType: Any.Type { KeyedEncodingContainer<CodingKeys>.self }
}

extension CheckChain.PlannedCall {
    static var encodingContainerType: Any.Type { KeyedEncodingContainer<CodingKeys>.self }
}
