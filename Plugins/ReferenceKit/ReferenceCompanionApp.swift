import DeviceActivity
import FamilyControls
import Foundation
import Logging
import ShieldBusSDK

/// The reference companion app — the product's main app. It asks for authorization, holds the selection,
/// starts the product's schedules, starts and ends unlocks, and on every foreground runs the synchronous
/// re-block check before anything else (lessons 1 and 7).
open class ReferenceCompanionApp: App {
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

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }

    // MARK: Launch

    open override func didStart() {
        do {
            let status = try AuthorizationCenter.shared.requestAuthorization(for: .individual)
            guard status == .approved else {
                logger?.warning("FamilyControls authorization is \(status.rawValue); nothing is blocked until it is approved")
                // A selection saved by an earlier launch: the product was set up, and the authorization was lost since
                // (this launch came after a force-quit or a restart while it was revoked).
                lostAuthorization = (try? defaults.string(forKey: SharedKey.globalSerializedTokens)) ?? nil != nil
                return
            }
            try setUp()
        } catch {
            logger?.error("launch failed: \(error)")
        }
    }

    /// Whether this process has taken the selection and started the schedules.
    private var isSetUp = false
    /// Whether the product was set up and then lost its authorization (revoked, denied, not determined) — in this
    /// process, or before it was launched: the OS stopped its schedules then, and the next set-up registers them again
    /// in the middle of a day.
    private var lostAuthorization = false

    /// Takes the selection, starts the product's schedules and shields what is due now — at launch, or when the
    /// person approves the app later (a focus window already running is then shielded at once).
    func setUp() throws {
        let selection = try AuthorizationCenter.shared.pickActivities()
        try saveSelection(BlockList(selection))
        var refused: Error?
        do {
            try startSchedules(afterLostAuthorization: lostAuthorization)
            if lostAuthorization { try raiseTheDaysSpeedBumpAgain() }
        } catch {
            // A registration refused (the activity limit full after an approval): what is due now is still shielded,
            // by the synchronous check below (explore: habit-lock 147).
            refused = error
        }
        if refused == nil {
            isSetUp = true
            lostAuthorization = false
        }
        // The synchronous check also covers a launch after a force-quit or a device restart.
        foregroundCheck()
        if let refused { throw refused }
    }

    /// An approval after launch (declined at first, allowed later, or allowed again after a revocation) sets the app
    /// up; the one its own launch asked for found it set up already. A revocation took the app's shields and schedules
    /// with it (the OS clears both), so the next approval must set everything up anew.
    open override func handleOther(_ envelope: Envelope) {
        guard envelope.topic == DeviceTopic.authorizationChanged, let status = envelope.bodyValue["status"]?.stringValue else { return }
        guard status == AuthorizationStatus.approved.rawValue else {
            if isSetUp { lostAuthorization = true }
            isSetUp = false
            return
        }
        guard !isSetUp else { return }
        do {
            try setUp()
        } catch {
            logger?.error("set-up after the approval failed: \(error)")
        }
    }

    /// Saves the picker's selection again when its tokens changed (an OS update regenerates them): a direct,
    /// synchronous read of what the OS holds, validated before it overwrites anything.
    open func refreshSelection() {
        do {
            let current = BlockList(try AuthorizationCenter.shared.pickActivities())
            if (try? LockState.readBlockList(from: defaults)) != current { try saveSelection(current) }
        } catch {
            logger?.error("cannot refresh the selection: \(error)")
        }
    }

    /// Stores the selection's tokens — validated before anything is overwritten (lesson 4).
    open func saveSelection(_ list: BlockList) throws {
        let apps = try LockState.serialize(list.applications)
        let categories = try LockState.serialize(list.categories)
        let domains = try LockState.serialize(list.webDomains)
        _ = try defaults.transaction { tx in
            _ = try tx.set(apps, forKey: SharedKey.globalSerializedTokens)
            _ = try tx.set(categories, forKey: SharedKey.globalSerializedCategoryTokens)
            _ = try tx.set(domains, forKey: SharedKey.globalSerializedWebDomainTokens)
        }
    }

    /// Starts the product's schedules; `afterLostAuthorization`: again, after a revocation stopped them mid-day.
    open func startSchedules(afterLostAuthorization: Bool) throws {
        let monitorNames = ReferenceMonitorNames(options: options)
        try monitorNames.keptSelection.register(try LockState.readBlockList(from: defaults), center: center)
        switch options.product {
        case .habitLock:
            try center.startMonitoring(monitorNames.daily, during: TrueTimeSchedules.allDay)
            registerReserve(monitorNames)
        case .focusWindow:
            registerReserve(monitorNames)
            for (index, hours) in options.focusHours.enumerated() {
                try center.startMonitoring(monitorNames.focus(index), during: DeviceActivitySchedule(
                    intervalStart: hours.startComponents, intervalEnd: hours.endComponents, repeats: true))
            }
        case .speedBump:
            registerReserve(monitorNames)
            // Registering the threshold again restarts its count (the OS counts from the registration), so a relaunch
            // of the app — a force-quit, a restart — forgave the use so far (explore, speed-bump seed 304). Nor during a
            // dismiss's cooldown: the monitor resumes the count when it ends.
            let cooldownEnd = (try? defaults.double(forKey: SharedKey.nudgeCooldownUntil)) ?? nil
            let cooling = cooldownEnd.map { $0 > now.timeIntervalSince1970 } ?? false
            guard try !center.monitoredActivities().contains(monitorNames.daily), !cooling else { break }
            // The speed bump promises N minutes a day. A revocation stopped its schedules, so the registration made again
            // at the approval must count the day's use before it (Apple's `includesPastActivity`): otherwise the OS counts
            // from the approval and forgives that use (explore: speed-bump 3, 6 and 19). Not when a dismiss's cooldown
            // ended today: the count started again there, and the day's use before it would raise the speed bump over the
            // dismissed app at once (explore: speed-bump 86). The first set-up, and every other registration, keeps
            // Apple's default: the count starts at the registration.
            let countStartedToday = cooldownEnd.map { $0 >= DayKey.deviceDayStart().timeIntervalSince1970 } ?? false
            let list = try LockState.readBlockList(from: defaults)
            try center.startMonitoring(monitorNames.daily, during: TrueTimeSchedules.allDay, events: [
                monitorNames.thresholdEvent: options.thresholdEvent(list, includingPastActivity: afterLostAuthorization && !countStartedToday),
            ])
        }
    }

    /// The revocation cleared the shields of a speed bump raised today, which holds to the device's midnight: it goes
    /// up again at once, over every picked app but the one a dismiss let through since it was raised. The threshold
    /// registered again cannot say so when a cooldown restarted the day's count (it then counts from the approval), and
    /// TikTok stayed usable after the approval though Instagram's dismiss had let only Instagram through.
    func raiseTheDaysSpeedBumpAgain() throws {
        guard options.product == .speedBump, try defaults.string(forKey: SharedKey.speedBumpDay) == DayKey.deviceToday(),
              let raised = try defaults.double(forKey: SharedKey.speedBumpRaised) else { return }
        let dismissedSince = try defaults.double(forKey: SharedKey.nudgeCooldownUntil).map { $0 > raised } ?? false
        let dismissed = dismissedSince ? try DismissedApplication.current(in: defaults).map { [$0] } ?? [] : []
        let list = ReferenceMonitor.currentBlockList(try readStateRepairingFromPicker(), center: center, names: ReferenceMonitorNames(options: options))
        try shields.block(list, passing: Set(dismissed))
    }

    /// The reserve slot: a place among DeviceActivity's 20 kept for the monitor's checks (the habit lock's unlock, a
    /// grace pass's end, the speed bump's cooldown and its end at midnight), which the monitor reuses when a new
    /// schedule is refused (the app's other activities may fill the rest). Registered once: the monitor may hold a re-check in it. A refusal here
    /// (the limit already full) costs the reserve only, not the product's other schedules.
    func registerReserve(_ monitorNames: ReferenceMonitorNames) {
        do {
            if try !center.monitoredActivities().contains(monitorNames.reserve) {
                try center.startMonitoring(monitorNames.reserve, during: TrueTimeSchedules.allDay)
            }
        } catch {
            logger?.warning("no reserve re-check slot: \(error)")
        }
    }

    // MARK: Foreground

    open override func willEnterForeground() {
        refreshSelection()
        foregroundCheck()  // before anything else the app does (lesson 7)
        // Then the notifier's pending deep link, read and consumed in one step so it opens exactly once (Tether).
        do {
            let outcome = try followPendingDeepLink(in: defaults)
            if outcome != .none { logger?.info("pending deep link: \(outcome)") }
        } catch {
            logger?.error("the pending deep link could not be followed: \(error)")
        }
    }

    /// The synchronous re-block check: a direct read of the shared state and a direct write of the shields,
    /// with no suspension point in between, so nothing can stop it half-way (lessons 7 and 9).
    open func foregroundCheck() {
        guard options.product == .habitLock else { return }
        do {
            let state = try readStateRepairingFromPicker()
            if state.isUnlockActive(at: now) { return }
            try shields.block(state.blockList)
            if state.isCurrentlyUnlocked { try defaults.set(false, forKey: SharedKey.isCurrentlyUnlocked) }  // a stale flag (lesson 6)
        } catch {
            logger?.error("foreground check failed: \(error)")
        }
    }

    /// The lock state; when the saved tokens do not decode, the picker's selection (held by the OS) is saved
    /// anew — validated first — rather than anything being written back empty (lesson 4).
    public func readStateRepairingFromPicker() throws -> LockState {
        do {
            return try LockState.read(from: defaults)
        } catch let error as LockStateError {
            logger?.error("\(error); restoring the selection from the picker")
            try saveSelection(BlockList(try AuthorizationCenter.shared.pickActivities()))
            return try LockState.read(from: defaults)
        }
    }

    // MARK: Habits and unlocks

    open override func habitCompleted(_ habit: String) {
        guard options.product == .habitLock else { return }
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
        guard id == "unlock-expiry" else { return }
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

/// The activity names the app and the monitor share.
public struct ReferenceMonitorNames {
    let prefix: String
    public init(options: ProductOptions) { prefix = options.product.rawValue }
    /// The habit lock's and the speed bump's all-day schedule.
    public var daily: DeviceActivityName { DeviceActivityName("\(prefix).daily") }
    public var pass: DeviceActivityName { DeviceActivityName("\(prefix).pass") }
    public var resume: DeviceActivityName { DeviceActivityName("\(prefix).resume") }
    public var thresholdEvent: DeviceActivityEvent.Name { DeviceActivityEvent.Name("\(prefix).limit") }
    /// An all-day activity whose one event holds the selection: the OS keeps its tokens current across an OS
    /// update (FB14237883), so the extensions re-block with tokens that still mean something.
    public var selection: DeviceActivityName { DeviceActivityName("\(prefix).selection") }
    public var selectionEvent: DeviceActivityEvent.Name { DeviceActivityEvent.Name("\(prefix).selection") }
    public var keptSelection: KeptSelection { KeptSelection(activity: selection, event: selectionEvent) }
    public func focus(_ index: Int) -> DeviceActivityName { DeviceActivityName("\(prefix).focus_\(index)") }
    public func isFocus(_ activity: DeviceActivityName) -> Bool { activity.rawValue.hasPrefix("\(prefix).focus_") }
    /// The monitor's own checks of the focus hours in true time, chained at most 44 minutes apart.
    public var focusCheck: DeviceActivityName { DeviceActivityName("\(prefix).focusCheck") }
    /// The reserve re-check slot, registered at set-up: its callbacks mean something only
    /// while it holds a re-check (`CheckChain.reserveCheck()`).
    public var reserve: DeviceActivityName { DeviceActivityName("\(prefix).recheckReserve") }
}
