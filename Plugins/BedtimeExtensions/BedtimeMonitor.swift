import BedtimeKit
import DeviceActivity
import Foundation
import ManagedSettings
import MonitorKit
import ShieldBusSDK
import UserNotifications

/// The night's shields, kept in true time (`ChainedMonitor`): the selection shielded through the night but for running
/// passes, everything lifted outside it and on a skipped night, and a check at the next instant anything changes: the
/// night's edges, the wind-down, a pass's end.
final class BedtimeMonitor: ChainedMonitor {
    init() { super.init(product: Bedtime.product) }

    private var passBook: PassBook? { defaults.map { PassBook(defaults: $0) } }

    override var watchedKeys: [String] { super.watchedKeys + [Bedtime.passUntilKey, Bedtime.skipKey] }

    override func intervalDidEnd(for activity: DeviceActivityName) {
        if activity == Bedtime.nightly { sync() }
    }

    override func watchedKeyChanged(_ key: String) {
        if key == Bedtime.passUntilKey { recordThePass() }
        sync()
    }

    /// The action recorded a pass: the monitor keeps every running one (the action keeps only the last).
    private func recordThePass() {
        guard let defaults, let until = (try? defaults.double(forKey: Bedtime.passUntilKey)) ?? nil,
              let app = (try? defaults.string(forKey: Bedtime.passAppKey)) ?? nil, until > Bedtime.now.timeIntervalSince1970 else { return }
        do { try passBook?.grant(ApplicationToken(rawValue: app), until: Date(timeIntervalSince1970: until)) } catch { logger?.error("cannot record the pass: \(error)") }
    }

    override func decide(at now: Date, defaults: SharedDefaults, zones: ZoneReading) throws -> Date {
        let passBook = PassBook(defaults: defaults)
        let skippedAt = ((try? defaults.double(forKey: Bedtime.skipKey)) ?? nil).map(Date.init(timeIntervalSince1970:))
        let skipped = skippedAt.map { Bedtime.night.isTheOccurrence(after: $0, containing: now, zones: zones) } ?? false
        if Bedtime.night.contains(now) && !skipped {
            let passes = passBook.all().filter { $0.value > now.timeIntervalSince1970 }
            try passBook.save(passes)
            // One write: the selection shielded, the ended passes' apps with it, the running ones left out (an app
            // shielded by one write and lifted by the next is closed and shows its shield).
            try shields.block(product.selection(defaults), passing: Set(passes.keys.map(ApplicationToken.init(rawValue:))))
        } else if try shields.isBlocking() {
            try shields.liftAll()
        }
        postTheWindDown(now, defaults: defaults)
        var next = [Bedtime.night].nextChange(after: now, within: CheckChain.horizon)
        if let end = passBook.nextCheck(), end > now { next = min(next, end) }
        if let windDown = nextWindDown(after: now) { next = min(next, windDown) }
        return next
    }

    /// The next whole minute the wall clock shows the wind-down, within the chain's horizon.
    private func nextWindDown(after now: Date) -> Date? {
        let window = WallClockWindow(start: Bedtime.windDown, end: ClockTime(minuteOfDay: Bedtime.windDown.minuteOfDay + 1))
        guard !window.contains(now) else { return nil }
        let next = [window].nextChange(after: now, within: CheckChain.horizon)
        return window.contains(next) ? next : nil
    }

    /// At the wind-down minute, once a night: a notification that opens the app where tonight can be skipped.
    private func postTheWindDown(_ now: Date, defaults: SharedDefaults) {
        guard ClockTime(of: now, in: BusClock.timeZone) == Bedtime.windDown else { return }
        let posted = (try? defaults.double(forKey: Bedtime.windDownPostedKey)) ?? nil
        guard posted.map({ now.timeIntervalSince1970 - $0 > 3600 }) ?? true else { return }
        let content = UNMutableNotificationContent()
        content.title = "Bedtime at 22:30"
        content.body = "Wind down: your apps rest at 22:30. Need tonight? Skip it in Bedtime."
        content.userInfo = ["url": "bedtime://tonight"]
        UNUserNotificationCenter.current().add(UNNotificationRequest(identifier: "wind-down", content: content, trigger: nil))
        do { try defaults.set(now.timeIntervalSince1970, forKey: Bedtime.windDownPostedKey) } catch { logger?.error("cannot note the wind-down: \(error)") }
    }
}
