import DeviceActivity
import FamilyControls
import Foundation
import Logging
import MonitorKit
import ShieldBusSDK

/// The reference companion app's common part — the product's main app. It asks for authorization, holds the selection,
/// starts the schedules and on every foreground runs the product's synchronous re-block check before anything else
/// (lessons 1 and 7). What differs by product — its schedules, its unlocks — is in one subclass per product
/// (`HabitLockApp`, `FocusWindowApp`, `SpeedBumpApp`).
open class ReferenceCompanionApp: App {
    public let options: ProductOptions
    public let defaults: SharedDefaults
    public let shields: Shields
    public let center = DeviceActivityCenter()

    public required init(options: ProductOptions, defaults: SharedDefaults) {
        self.options = options
        self.defaults = defaults
        shields = Shields(storeName: options.store)
        super.init()
    }

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }
    /// The activity names the app shares with the monitor.
    public var names: ReferenceMonitorNames { ReferenceMonitorNames(options: options) }

    /// The companion app of the product its options name.
    public static func make(options: ProductOptions, defaults: SharedDefaults) -> ReferenceCompanionApp {
        let type: ReferenceCompanionApp.Type = options.product.pick(habitLock: HabitLockApp.self, focusWindow: FocusWindowApp.self, speedBump: SpeedBumpApp.self)
        return type.init(options: options, defaults: defaults)
    }

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
            setUpFailed(error, when: "at launch")
        }
    }

    /// The selection could not be saved (a full or read-only disk): nothing is shielded until it is. Said on the bus,
    /// and tried again a minute later and at the next foreground — not only at the next launch, which may be days away.
    private func setUpFailed(_ error: Error, when: String) {
        guard !selectionSaved else {
            logger?.error("set-up \(when) failed: \(error)")
            return
        }
        retry.failed(error, when: when)
    }

    private lazy var retry = SetUpRetry(app: self, what: "the companion app's set-up")
    /// Whether the last set-up got as far as saving the picker's selection.
    private var selectionSaved = false

    /// Tries a set-up that failed again, if the app is still authorized.
    private func setUpAgainIfPending() {
        guard !isSetUp, AuthorizationCenter.shared.authorizationStatus == .approved else { return }
        retry.tryAgain {
            do {
                try setUp()
                return true
            } catch {
                setUpFailed(error, when: "again")
                return false
            }
        }
    }

    open override func timerFired(_ id: String) {
        if id == SetUpRetry.timerID { setUpAgainIfPending() }
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
        selectionSaved = false
        let selection = try AuthorizationCenter.shared.pickActivities()
        try saveSelection(BlockList(selection))
        selectionSaved = true
        var refused: Error?
        do {
            try startSchedules(afterLostAuthorization: lostAuthorization)
            if lostAuthorization { try restoreShieldsAfterLostAuthorization() }
        } catch {
            // A registration refused (the activity limit full after an approval): what is due now is still shielded,
            // by the synchronous check below.
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
            retry.authorizationLost()
            return
        }
        guard !isSetUp else { return }
        do {
            try setUp()
        } catch {
            setUpFailed(error, when: "after the approval")
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

    /// Starts the schedules; `afterLostAuthorization`: again, after a revocation stopped them mid-day.
    open func startSchedules(afterLostAuthorization: Bool) throws {
        try names.keptSelection.register(try LockState.readBlockList(from: defaults), center: center)
        try startProductSchedules(afterLostAuthorization: afterLostAuthorization)
    }

    /// The product's own schedules, with the reserve slot (`registerReserve()`) among them.
    open func startProductSchedules(afterLostAuthorization: Bool) throws {}

    /// The revocation cleared the shields: what the product still holds today goes up again once its schedules are
    /// registered anew.
    open func restoreShieldsAfterLostAuthorization() throws {}

    /// The reserve slot: a place among DeviceActivity's 20 kept for the monitor's checks (the habit lock's unlock, a
    /// grace pass's end, the speed bump's cooldown and its end at midnight), which the monitor reuses when a new
    /// schedule is refused (the app's other activities may fill the rest). Registered once: the monitor may hold a re-check in it. A refusal here
    /// (the limit already full) costs the reserve only, not the product's other schedules.
    func registerReserve() {
        do {
            if try !center.monitoredActivities().contains(names.reserve) {
                try center.startMonitoring(names.reserve, during: TrueTimeSchedules.allDay)
            }
        } catch {
            logger?.warning("no reserve re-check slot: \(error)")
        }
    }

    // MARK: Foreground

    open override func willEnterForeground() {
        setUpAgainIfPending()
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

    /// The product's synchronous re-block check, run before anything else the app does (lesson 7): only the habit lock
    /// has one, as only its unlocks are ended by the app too.
    open func foregroundCheck() {}

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
