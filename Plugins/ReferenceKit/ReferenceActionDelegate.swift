import Foundation
import Logging
import ManagedSettings
import ShieldBusSDK

/// The reference action delegate: decides what the shield's buttons do and records intents (grace passes,
/// nudges) in the App-Group store. It never lifts a shield itself — the monitor does (the Rork write-up).
open class ReferenceActionDelegate: ShieldActionDelegate {
    public let options: ProductOptions
    public let defaults: SharedDefaults

    public init(options: ProductOptions, defaults: SharedDefaults) {
        self.options = options
        self.defaults = defaults
        super.init()
    }

    var logger: Logger? { PluginRuntime.current?.logger }
    var now: Date { BusClock.absoluteNow }

    open override func handle(action: ShieldAction, for application: ApplicationToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        switch (options.product, action) {
        case (.focusWindow, .secondaryButtonPressed):
            completionHandler(grantPass(to: application) ? .defer : .none)
        case (.speedBump, .primaryButtonPressed):
            // The token the system hands over now: valid even after an OS update regenerated the saved ones (Tether).
            completionHandler(recordNudge(for: application) ? .defer : .close)
        case (_, .primaryButtonPressed):
            completionHandler(.close)
        default:
            completionHandler(.none)  // a stray tap, or a button this product does not offer
        }
    }

    open override func handle(action: ShieldAction, for webDomain: WebDomainToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(action == .primaryButtonPressed ? .close : .none)
    }

    open override func handle(action: ShieldAction, for category: ActivityCategoryToken, completionHandler: @escaping (ShieldActionResponse) -> Void) {
        completionHandler(action == .primaryButtonPressed ? .close : .none)
    }

    /// Records a grace pass for one app (the monitor lifts its shield until the pass ends), and tallies it.
    open func grantPass(to application: ApplicationToken) -> Bool {
        let until = now.addingTimeInterval(Double(options.passMinutes) * 60)
        let tallyKey = SharedKey.graceTally(on: DayKey.today())
        do {
            let tally = try defaults.transaction { tx -> Int in
                let tally = (try tx.integer(forKey: tallyKey) ?? 0) + 1
                _ = try tx.set(tally, forKey: tallyKey)
                _ = try tx.set(application.rawValue, forKey: SharedKey.passApplication)
                _ = try tx.set(until.timeIntervalSince1970, forKey: SharedKey.passUntil)
                return tally
            }.value
            try PluginRuntime.current?.publish("app.intent.grace-pass", json: ["until": .int(busTime(until)), "tallyToday": .int(Int64(tally))])
            return true
        } catch {
            PluginRuntime.current?.reportWriteFailure("the grace pass", error)
            return false
        }
    }

    /// Records a nudge: the app to unblock and the cooldown during which monitoring pauses.
    open func recordNudge(for application: ApplicationToken) -> Bool {
        let until = now.addingTimeInterval(Double(options.cooldownMinutes) * 60)
        do {
            _ = try defaults.transaction { tx in
                _ = try tx.set((try tx.integer(forKey: SharedKey.nudgeCount) ?? 0) + 1, forKey: SharedKey.nudgeCount)
                _ = try tx.set(application.rawValue, forKey: SharedKey.nudgeApplication)
                _ = try tx.set(until.timeIntervalSince1970, forKey: SharedKey.nudgeCooldownUntil)
            }
            try PluginRuntime.current?.publish("app.intent.nudge", json: ["cooldownUntil": .int(busTime(until))])
            return true
        } catch {
            PluginRuntime.current?.reportWriteFailure("the nudge", error)
            return false
        }
    }
}
