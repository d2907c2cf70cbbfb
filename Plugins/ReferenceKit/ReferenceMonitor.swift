import DeviceActivity
import Foundation
import Logging
import ShieldBusSDK

/// The reference activity monitor's common part: the owner of the ManagedSettings stores and the only component that
/// lifts a shield. It re-blocks everything selected, reads the lock state, keeps its checks in a MonitorKit chain and
/// dispatches the OS's callbacks and the App Group's changes to its product — one subclass per product
/// (`HabitLockMonitor`, `FocusWindowMonitor`, `SpeedBumpMonitor`), each on its own hooks.
///
/// Every defence is an overridable step, so a test can build the naive plugin each seed describes.
open class ReferenceMonitor: DeviceActivityMonitor {
    public let options: ProductOptions
    public let defaults: SharedDefaults
    public let shields: Shields
    public let center = DeviceActivityCenter()
    /// The checks at true instants the product relies on (MonitorKit).
    public let chain: CheckChain

    public required init(options: ProductOptions, defaults: SharedDefaults) {
        self.options = options
        self.defaults = defaults
        shields = Shields(storeName: options.store)
        chain = CheckChain(center: center, defaults: defaults, prefix: options.product.rawValue, reserve: ReferenceMonitorNames(options: options).reserve)
        super.init()
        chain.slotName = { [unowned self] in chainSlotName($0) }
        chain.onRefusal = { [unowned self] in try recheckRefused(at: $0, refusal: $1) }
    }

    open override var subscriptions: [String] { super.subscriptions + ["state.changed"] }

    /// The App-Group keys the monitor acts on, each with its hook: one list for what it watches and what it does.
    static let keyHooks: [(key: String, hook: @Sendable (ReferenceMonitor) -> Void)] = [
        // The app writes the timestamp and then the flag in one transaction: the flag's change is the signal.
        (SharedKey.isCurrentlyUnlocked, { $0.unlockChanged() }),
        (SharedKey.passUntil, { $0.passGranted() }),
        (SharedKey.nudgeCooldownUntil, { $0.nudged() }),
    ]

    /// Only the keys `handleOther` acts on: the broker hands the monitor no other change (it checks again).
    open override var watchedStateKeys: [String: [String]]? {
        [options.appGroup: Self.keyHooks.map(\.key)]
    }

    var prefix: String { options.product.rawValue }
    public var names: ReferenceMonitorNames { ReferenceMonitorNames(options: options) }

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }

    /// The monitor of the product its options name.
    public static func make(options: ProductOptions, defaults: SharedDefaults) -> ReferenceMonitor {
        let type: ReferenceMonitor.Type = options.product.pick(habitLock: HabitLockMonitor.self, focusWindow: FocusWindowMonitor.self, speedBump: SpeedBumpMonitor.self)
        return type.init(options: options, defaults: defaults)
    }

    // MARK: Chained re-checks (lesson 2)

    /// The name of a re-check slot. Rotating names (…_0 to …_4) so that no schedule overwrites another.
    open func chainSlotName(_ index: Int) -> DeviceActivityName { DeviceActivityName("\(prefix).reblock_\(index % 5)") }

    /// A re-check the OS refused at the activity limit: into the chain's reserve slot.
    open func recheckRefused(at date: Date, refusal: DeviceError) throws {
        try chain.moveToReserve(at: date, refusal: refusal)
    }

    // MARK: The lock

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

    // MARK: Callbacks

    open override func intervalDidStart(for activity: DeviceActivityName) {
        keepTheDismissedApplicationCurrent()
        guard !chain.startMeansNothing(activity) else { return }  // its check is the end warning
        checkIsDue(for: activity)
    }

    /// An interval started, or the end warning that stands for its start came: the check it brings — the chain's own,
    /// or the product's (`productCheckIsDue`).
    func checkIsDue(for activity: DeviceActivityName) {
        if activity == names.reserve {
            guard chain.takeReserveCheck() else { return }
            chainedCheckIsDue()
        } else if chain.isChainSlot(activity) {
            chainedCheckIsDue()
        } else {
            productCheckIsDue(for: activity)
        }
    }

    /// One of the product's own activities started (or the end warning standing for its start came).
    open func productCheckIsDue(for activity: DeviceActivityName) {}

    open override func intervalWillEndWarning(for activity: DeviceActivityName) {
        if chain.isWarningSlot(activity) { chainedCheckIsDue() } else if chain.checksAtEndWarning().contains(activity.rawValue) { checkIsDue(for: activity) }
    }

    /// A check of the chain or of the reserve came. It re-evaluates the product's whole state, not only the chain: a
    /// check in the reserve stands in for any registration the OS refused (an unlock's re-check, a pass's end, a
    /// cooldown's end).
    open func chainedCheckIsDue() {}

    open override func intervalDidEnd(for activity: DeviceActivityName) {
        keepTheDismissedApplicationCurrent()
        productIntervalDidEnd(activity)
    }

    /// One of the product's activities ended (a re-registration ends it too: lesson 3).
    open func productIntervalDidEnd(_ activity: DeviceActivityName) {}

    open override func handleOther(_ envelope: Envelope) {
        if envelope.topic == DeviceTopic.clockChanged || envelope.topic == DeviceTopic.timeZoneChanged, envelope.isFromSystem {
            return clockChanged()
        }
        guard envelope.topic == "state.changed" else { return }
        // The watched keys' changes (`watchedStateKeys`; a broker that knows no `watch` hands over every change,
        // so the group and key are checked here too): the body is parsed once.
        let body = envelope.bodyValue
        guard body["group"]?.stringValue == options.appGroup, let key = body["key"]?.stringValue else { return }
        Self.keyHooks.first { $0.key == key }?.hook(self)
    }

    /// The unlock started or changed (the companion app wrote the flag and timestamp).
    open func unlockChanged() {}

    /// The delegate recorded a pass.
    open func passGranted() {}

    /// The delegate recorded a nudge.
    open func nudged() {}

    /// After an OS update, what the product keeps in tokens is carried into today's.
    open func keepTheDismissedApplicationCurrent() {}

    // MARK: The device clock

    /// The person set the device clock or the time zone changed (the OS announces both, as iOS posts its
    /// significant-time-change notification): every wall-clock schedule now fires at another true instant, so the
    /// product judges its state in true time and plans its checks again on the new clock (each product's override).
    /// Expiries are absolute already, so the new clock extends nothing.
    open func clockChanged() {
        chain.replanReserveCheck()
    }
}
