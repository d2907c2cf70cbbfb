import DeviceActivity
import Foundation
import ShieldBusSDK

/// The app of a `MonitoredProduct`: its set-up (`MonitoredProduct.setUp`) at every start — after a force-quit and a
/// device restart too — and again at every approval, as a revocation takes every schedule with it. A set-up that
/// failed where trying again can succeed (a full disk, an OS that did not answer) is said on the bus and tried again
/// a minute later and at the next foreground (`SetUpRetry`); any other failure is logged. A product's app subclasses
/// it, names its `schedules`, and adds the person's controls.
open class MonitoredProductApp: App {
    public let product: MonitoredProduct
    private lazy var retry = SetUpRetry(app: self, what: "\(product.name)'s set-up")

    public init(product: MonitoredProduct) {
        self.product = product
        super.init()
    }

    /// The product's own schedules, each registered at set-up when missing (none: its check chain alone keeps it).
    open var schedules: [DeviceActivityName: DeviceActivitySchedule] { [:] }

    open override func didStart() {
        setUp(when: "at launch")
    }

    /// An approval sets the app up; any other authorization change ends a pending try (the next approval sets up).
    open override func handleOther(_ envelope: Envelope) {
        guard envelope.topic == DeviceTopic.authorizationChanged else { return }
        if MonitoredProduct.isApproval(envelope) { setUp(when: "after the approval") } else { retry.authorizationLost() }
    }

    open override func timerFired(_ id: String) {
        if id == SetUpRetry.timerID { retry.tryAgain { setUp(when: "again") } }
    }

    open override func willEnterForeground() {
        retry.tryAgain { setUp(when: "again") }
    }

    /// Sets up; true when done. `when` names the occasion in what a failure says.
    @discardableResult
    private func setUp(when: String) -> Bool {
        do {
            let done = try product.setUp(schedules: schedules)
            if done { retry.succeeded() }
            return done
        } catch where SetUpRetry.canPass(error) {
            retry.failed(error, when: when)
        } catch {
            PluginRuntime.current?.logger.error("cannot set up \(product.name) \(when): \(error)")
        }
        return false
    }
}
