import DeviceActivity
import Foundation
import Logging
import ShieldBusSDK

/// A monitor that keeps a product's shields in true time. At every callback that can change something — a check of
/// its chain, the app's wake-up, a change to one of the App Group keys it watches, a clock or zone change — it notes
/// the zone, decides by the wall clock and the person's choices (`decide`, the product's part), and asks its chain for
/// a check at the next instant anything can change. It never trusts which schedule fired: a far schedule may fire late
/// or never, and a clock the person sets moves them all.
///
/// A product subclasses it, names its `MonitoredProduct`, and overrides `decide` (and `watchedKeys` for the keys the
/// app and the action write).
open class ChainedMonitor: DeviceActivityMonitor {
    public let product: MonitoredProduct
    public private(set) lazy var defaults = product.defaults()
    public private(set) lazy var shields = Shields(storeName: product.storeName)
    public private(set) lazy var chain = defaults.map { CheckChain(defaults: $0, prefix: product.name, reserve: product.reserve) }

    public init(product: MonitoredProduct) {
        self.product = product
        super.init()
    }

    /// The App Group keys whose change means a new decision: the pick, and the product's choices (`watchedKeys`).
    open var watchedKeys: [String] { [product.selectionKey] }

    /// The App Group's changes besides the callbacks (every plugin hears the clock's and the zone's changes).
    open override var subscriptions: [String] { super.subscriptions + ["state.changed"] }

    /// Only the watched keys' changes: the broker hands the monitor no other (`handleOther` checks again).
    open override var watchedStateKeys: [String: [String]]? { [product.group: watchedKeys] }

    /// Shields or lifts by the wall clock at `now`, and returns the next instant anything can change (the chain
    /// checks at most `CheckChain.horizon` ahead whatever it returns).
    open func decide(at now: Date, defaults: SharedDefaults, zones: ZoneReading) throws -> Date {
        now.addingTimeInterval(CheckChain.horizon)
    }

    /// One of the watched keys changed (after its write): by default, a new decision.
    open func watchedKeyChanged(_ key: String) {
        sync()
    }

    open override func intervalDidStart(for activity: DeviceActivityName) {
        if let chain, chain.startMeansNothing(activity) { return }
        if activity == product.reserve, chain?.takeReserveCheck() != true { return }
        sync()
    }

    open override func intervalWillEndWarning(for activity: DeviceActivityName) {
        guard let chain, chain.startMeansNothing(activity) else { return }
        if activity == product.reserve, !chain.takeReserveCheck() { return }
        sync()
    }

    open override func handleOther(_ envelope: Envelope) {
        if envelope.topic == "state.changed" {
            guard envelope.bodyValue["group"]?.stringValue == product.group,
                  let key = envelope.bodyValue["key"]?.stringValue, watchedKeys.contains(key) else { return }
            watchedKeyChanged(key)
        } else if envelope.isFromSystem, envelope.topic == DeviceTopic.clockChanged || envelope.topic == DeviceTopic.timeZoneChanged {
            chain?.clockChanged()  // every wall-clock schedule now fires at another true instant
            sync()
        }
    }

    /// Notes the zone, decides, and plans the next check.
    public func sync() {
        guard let defaults, let chain else { return }
        let zones = ZoneHistory(defaults: defaults)
        do { try zones.record() } catch { logger?.error("cannot note the time zone: \(error)") }
        let now = BusClock.absoluteNow
        var next = now.addingTimeInterval(CheckChain.horizon)  // a decision that failed is tried again then
        do {
            next = try decide(at: now, defaults: defaults, zones: zones.reader())
        } catch {
            logger?.error("cannot keep \(product.name)'s shields: \(error)")
        }
        do { try chain.call(at: next) } catch { logger?.error("cannot plan \(product.name)'s next check: \(error)") }
    }

    public var logger: Logger? { PluginRuntime.current?.logger }
}
