import Foundation
import Logging
import ManagedSettings
import ShieldBusSDK

/// The reference action delegate's common part: what the shield's buttons do — the primary one closes the app — and,
/// per product (`HabitLockAction`, `FocusWindowAction`, `SpeedBumpAction`), the intents a press records in the
/// App-Group store (grace passes, nudges). It never lifts a shield itself — the monitor does (the Rork write-up).
open class ReferenceActionDelegate: ShieldActionDelegate {
    public let options: ProductOptions
    public let defaults: SharedDefaults

    public required init(options: ProductOptions, defaults: SharedDefaults) {
        self.options = options
        self.defaults = defaults
        super.init()
    }

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }

    /// The action delegate of the product its options name.
    public static func make(options: ProductOptions, defaults: SharedDefaults) -> ReferenceActionDelegate {
        let type: ReferenceActionDelegate.Type = options.product.pick(habitLock: HabitLockAction.self, focusWindow: FocusWindowAction.self, speedBump: SpeedBumpAction.self)
        return type.init(options: options, defaults: defaults)
    }

    open override func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(response(to: action, for: application))
    }

    open override func handle(action: ShieldAction, for webDomain: WebDomainToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(closes(action))
    }

    open override func handle(action: ShieldAction, for category: ActivityCategoryToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(closes(action))
    }

    /// A press on an app's shield: the product's button records its intent; any other is `closes(_:)`.
    open func response(to action: ShieldAction, for application: ApplicationToken) -> ShieldActionResponse {
        closes(action)
    }

    /// The primary button closes the app; any other press is a stray tap, or a button this product does not offer.
    public func closes(_ action: ShieldAction) -> ShieldActionResponse {
        action == .primaryButtonPressed ? .close : .none
    }

    /// Records an intent on one app in one App-Group transaction — one more on its count, the app, and its end `minutes`
    /// from now — then announces it (`announce(end, count)`). False, the failure reported, when it cannot be recorded.
    public func recordIntent(_ what: String, on application: ApplicationToken, minutes: Int, countKey: String, applicationKey: String,
                             endKey: String, announce: (Date, Int) throws -> Void) -> Bool {
        let end = now.addingTimeInterval(Double(minutes) * 60)
        do {
            let count = try defaults.transaction { tx -> Int in
                let count = (try tx.integer(forKey: countKey) ?? 0) + 1
                _ = try tx.set(count, forKey: countKey)
                _ = try tx.set(application.rawValue, forKey: applicationKey)
                _ = try tx.set(end.timeIntervalSince1970, forKey: endKey)
                return count
            }.value
            try announce(end, count)
            return true
        } catch {
            PluginRuntime.current?.reportWriteFailure(what, error)
            return false
        }
    }
}
