import BusProtocol
import DeviceAPI
import Foundation

/// The companion apps' life as iOS runs it: foreground and background, their timers (which stop while the app is
/// suspended under the ios-realistic profile), their async tasks' suspension points, and opening URLs —
/// which an app can do and an extension cannot. Each product's app has its own: its timers, lifecycle events and
/// resumed tasks reach only that product's plugins.
///
/// The timers are kept in the device's store: a broker crash is not the app's end, so a restarted broker
/// fires them at their time. A force-quit or a device restart ends them, as on iOS.
final class AppLifecycle {
    private struct PendingTimer {
        let request: AppTimerRequest
        let requester: String
        var timer: UInt64?
    }

    /// A timer is the requesting app's: two products' apps may both name one `unlock-expiry`.
    private struct TimerKey: Hashable, Comparable {
        let requester: String
        let id: String
        static func < (a: TimerKey, b: TimerKey) -> Bool { (a.requester, a.id) < (b.requester, b.id) }
    }

    /// A timer as stored: what the app asked for, and who asked.
    private struct StoredTimer: Codable {
        let request: AppTimerRequest
        let requester: String
    }

    private static let storeKey = "app.timers"

    private unowned let host: any DeviceHost
    private let directory: DeviceDirectory
    /// The product whose companion app is in the foreground, if one is.
    private var foregroundProduct: String?
    private var timers: [TimerKey: PendingTimer] = [:]
    /// Suspension points of async tasks waiting for their app to come back.
    private var heldResumptions: [Envelope] = []

    /// Takes over the timers a previous broker left; `resumeTimers()` arms them once the bus is ready.
    init(host: any DeviceHost, directory: DeviceDirectory) throws {
        self.host = host
        self.directory = directory
        for stored in try host.state.load([StoredTimer].self, key: Self.storeKey) ?? [] {
            timers[TimerKey(requester: stored.requester, id: stored.request.id)] = PendingTimer(request: stored.request, requester: stored.requester, timer: nil)
        }
    }

    /// Whether `plugin`'s app is in the foreground.
    private func isForeground(_ plugin: String) -> Bool {
        foregroundProduct != nil && directory.product(of: plugin)?.name == foregroundProduct
    }

    /// Whether `plugin`'s timers and tasks run now: its app is in front, or apps are not suspended in the background.
    private func runs(_ plugin: String) -> Bool { isForeground(plugin) || !suspendsInBackground }

    /// Arms the timers taken over from a previous broker (at once if overdue), unless a suspended app holds them.
    func resumeTimers() {
        for key in timers.keys.sorted() where timers[key]!.timer == nil && runs(key.requester) { arm(key) }
    }

    private func saveTimers() {
        let stored = timers.keys.sorted().map { StoredTimer(request: timers[$0]!.request, requester: timers[$0]!.requester) }
        host.save(stored, key: Self.storeKey)
    }

    private var suspendsInBackground: Bool { directory.settings.fidelity.has(.suspendedBackgroundApps) }

    func enterForeground(_ product: DeviceProduct, reason: String) {
        guard foregroundProduct != product.name else { return }
        foregroundProduct = product.name
        host.emit(topic: DeviceTopic.willEnterForeground, body: ["reason": .string(reason)], audience: product.plugins)
        // A resumed app's overdue timers fire now, late; its suspended tasks continue.
        for key in timers.keys.sorted() where timers[key]!.timer == nil && product.includes(key.requester) { arm(key) }
        let held = heldResumptions.filter { product.includes($0.source) }
        heldResumptions.removeAll { product.includes($0.source) }
        for request in held { host.replySuccess(to: request) }
    }

    /// An app's process ended (force-quit; nil: every app, a device restart): its timers and suspended tasks end with it.
    func appTerminated(_ product: DeviceProduct?) {
        let ends = { (plugin: String) in product?.includes(plugin) ?? true }
        for (key, pending) in timers where ends(key.requester) {
            if let timer = pending.timer { host.bus.cancel(timer) }
            timers[key] = nil
        }
        saveTimers()
        heldResumptions.removeAll { ends($0.source) }
        if product == nil || foregroundProduct == product?.name { foregroundProduct = nil }
    }

    func enterBackground(_ product: DeviceProduct) {
        guard foregroundProduct == product.name else { return }
        foregroundProduct = nil
        host.emit(topic: DeviceTopic.didEnterBackground, body: [:], audience: product.plugins)
        guard suspendsInBackground else { return }
        for key in timers.keys.sorted() where product.includes(key.requester) {
            if let timer = timers[key]?.timer { host.bus.cancel(timer) }
            timers[key]?.timer = nil
        }
    }

    func handle(_ envelope: Envelope) {
        switch envelope.topic {
        case DeviceTopic.timerRequest:
            guard let request = host.decode(AppTimerRequest.self, from: envelope) else { return }
            let key = TimerKey(requester: envelope.source, id: request.id)
            if let old = timers[key]?.timer { host.bus.cancel(old) }
            timers[key] = PendingTimer(request: request, requester: envelope.source, timer: nil)
            saveTimers()
            if runs(envelope.source) { arm(key) }
            host.replySuccess(to: envelope)
        case "app.yield.request":
            // An async task's suspension point: it continues at once, unless the app is suspended.
            if isForeground(envelope.source) || !directory.settings.fidelity.has(.suspendedAsyncTasks) {
                host.replySuccess(to: envelope)
            } else {
                heldResumptions.append(envelope)
            }
        case DeviceTopic.openURLRequest:
            guard let request = host.decode(OpenURL.self, from: envelope) else { return }
            if directory.product(of: envelope.source)?.companionPluginName != envelope.source {
                host.fail(envelope, code: "unavailable-in-extensions",
                            "UIApplication.shared.open is unavailable in app extensions (\(envelope.source) is one); write a pending route to the App-Group store and let the app open it when it comes to the foreground")
            } else if !isForeground(envelope.source) {
                host.fail(envelope, code: "not-foreground", "the app can open URLs only while it is in the foreground")
            } else {
                host.emit(DeviceTopic.urlOpened, request)
                host.replySuccess(to: envelope)
            }
        default:
            break
        }
    }

    private func arm(_ key: TimerKey) {
        guard let pending = timers[key] else { return }
        let fireAt = max(busTime(pending.request.fireAt), host.bus.now)
        timers[key]?.timer = host.bus.schedule(at: fireAt) { [weak self] in
            guard let self, timers[key] != nil else { return }
            timers[key] = nil
            saveTimers()
            host.emit(DeviceTopic.timerFired, AppTimerFired(id: key.id, scheduledFor: pending.request.fireAt), audience: directory.audience(of: key.requester))
        }
    }
}
