import DeviceActivity
import Foundation
import ManagedSettings
import MonitorKit
import ShieldBusSDK
import UserNotifications

/// The night's shields, kept in true time: at every callback the monitor judges the night by the wall clock (not by
/// which schedule fired: a far schedule may fire late or never, a clock the person sets moves them all), shields the
/// selection but for running passes — or lifts everything outside the night and on a skipped one — and asks for a
/// check at the next instant anything changes: the night's edges, the wind-down, a pass's end.
final class BedtimeMonitor: DeviceActivityMonitor {
    private lazy var defaults = Bedtime.defaults()
    private lazy var shields = Shields(storeName: Bedtime.store)
    private lazy var chain = defaults.map { CheckChain(defaults: $0, prefix: "bedtime", reserve: Bedtime.reserve) }
    private var passBook: PassBook? { defaults.map { PassBook(defaults: $0) } }

    override var subscriptions: [String] { super.subscriptions + ["state.changed", "device.clock-changed", "device.time-zone-changed"] }

    override func intervalDidStart(for activity: DeviceActivityName) {
        if let chain, chain.startMeansNothing(activity) { return }
        if activity == Bedtime.reserve, chain?.takeReserveCheck() != true { return }
        sync()
    }

    override func intervalWillEndWarning(for activity: DeviceActivityName) {
        if let chain, chain.startMeansNothing(activity) { sync() }
    }

    override func intervalDidEnd(for activity: DeviceActivityName) {
        if activity == Bedtime.nightly { sync() }
    }

    override func handleOther(_ envelope: Envelope) {
        if envelope.topic == "state.changed" {
            guard envelope.bodyValue["group"]?.stringValue == Bedtime.group, let key = envelope.bodyValue["key"]?.stringValue,
                  [Bedtime.passUntilKey, Bedtime.skipKey, Bedtime.selectionKey].contains(key) else { return }
            if key == Bedtime.passUntilKey { recordThePass() }
            sync()
        } else if envelope.isFromSystem {
            // The clock or the zone changed: every wall-clock schedule now fires at another true instant.
            chain?.clockChanged()
            sync()
        }
    }

    /// The action recorded a pass: the monitor keeps every running one (the action keeps only the last).
    private func recordThePass() {
        guard let defaults, let until = (try? defaults.double(forKey: Bedtime.passUntilKey)) ?? nil,
              let app = (try? defaults.string(forKey: Bedtime.passAppKey)) ?? nil, until > Bedtime.now.timeIntervalSince1970 else { return }
        do { try passBook?.grant(ApplicationToken(rawValue: app), until: Date(timeIntervalSince1970: until)) } catch { log("cannot record the pass: \(error)") }
    }

    /// Shields or lifts by the wall clock now, and plans the next check.
    private func sync() {
        guard let defaults, let chain, let passBook else { return }
        let now = Bedtime.now
        let zones = ZoneHistory(defaults: defaults)
        do { try zones.record() } catch { log("cannot note the time zone: \(error)") }
        let reading = zones.reader()
        let skippedAt = ((try? defaults.double(forKey: Bedtime.skipKey)) ?? nil).map(Date.init(timeIntervalSince1970:))
        let skipped = skippedAt.map { Bedtime.night.isTheOccurrence(after: $0, containing: now, zones: reading) } ?? false
        do {
            if Bedtime.night.contains(now) && !skipped {
                let passes = passBook.all().filter { $0.value > now.timeIntervalSince1970 }
                try passBook.save(passes)
                // One write: the selection shielded, the ended passes' apps with it, the running ones left out (an app
                // shielded by one write and lifted by the next is closed and shows its shield).
                try shields.block(Bedtime.selection(defaults), passing: Set(passes.keys.map(ApplicationToken.init(rawValue:))))
            } else if try shields.isBlocking() {
                try shields.liftAll()
            }
            postTheWindDown(now, defaults: defaults)
            var next = [Bedtime.night].nextChange(after: now, within: CheckChain.horizon)
            if let end = passBook.nextCheck(), end > now { next = min(next, end) }
            if let windDown = nextWindDown(after: now) { next = min(next, windDown) }
            try chain.call(at: next)
        } catch {
            log("cannot keep the night: \(error)")
        }
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
        do { try defaults.set(now.timeIntervalSince1970, forKey: Bedtime.windDownPostedKey) } catch { log("cannot note the wind-down: \(error)") }
    }

    private func log(_ message: String) { PluginRuntime.current?.logger.error("\(message)") }
}
