import BusProtocol
import DeviceAPI
import Foundation

/// The companion app's life as iOS runs it: foreground and background, its timers (which stop while it is
/// suspended under the ios-realistic profile), its async tasks' suspension points, and opening URLs —
/// which an app can do and an extension cannot.
///
/// The timers are kept in the device's store: a broker crash is not the app's end, so a restarted broker
/// fires them at their time. A force-quit or a device restart ends them, as on iOS.
final class AppLifecycle {
    private struct PendingTimer {
        let request: AppTimerRequest
        let requester: String
        var timer: UInt64?
    }

    /// A timer as stored: what the app asked for, and who asked.
    private struct StoredTimer: Codable {
        let request: AppTimerRequest
        let requester: String
    }

    private static let storeKey = "app.timers"

    private unowned let device: DeviceOS
    private(set) var isForeground = false
    private var timers: [String: PendingTimer] = [:]
    /// Suspension points of async tasks waiting for the app to come back.
    private var heldResumptions: [Envelope] = []

    /// Takes over the timers a previous broker left; `resumeTimers()` arms them once the bus is ready.
    init(device: DeviceOS) throws {
        self.device = device
        for stored in try device.state.load([StoredTimer].self, key: Self.storeKey) ?? [] {
            timers[stored.request.id] = PendingTimer(request: stored.request, requester: stored.requester, timer: nil)
        }
    }

    /// Arms the timers taken over from a previous broker (at once if overdue), unless a suspended app holds them.
    func resumeTimers() {
        guard isForeground || !suspendsInBackground else { return }
        armWaitingTimers()
    }

    private func armWaitingTimers() {
        for id in timers.keys.sorted() where timers[id]!.timer == nil { arm(id) }
    }

    private func saveTimers() {
        let stored = timers.keys.sorted().map { StoredTimer(request: timers[$0]!.request, requester: timers[$0]!.requester) }
        device.save(stored, key: Self.storeKey)
    }

    private var suspendsInBackground: Bool { device.settings.fidelity.has(.suspendedBackgroundApps) }

    func enterForeground(reason: String) {
        guard !isForeground else { return }
        isForeground = true
        device.emit(topic: DeviceTopic.willEnterForeground, body: ["reason": .string(reason)])
        // A resumed app's overdue timers fire now, late; its suspended tasks continue.
        armWaitingTimers()
        let held = heldResumptions
        heldResumptions = []
        for request in held { device.reply(to: request, .success(NoValue())) }
    }

    /// The app's process ended (force-quit): its timers and suspended tasks end with it.
    func appTerminated() {
        for pending in timers.values { if let timer = pending.timer { device.bus.cancel(timer) } }
        timers = [:]
        saveTimers()
        heldResumptions = []
        isForeground = false
    }

    func enterBackground() {
        guard isForeground else { return }
        isForeground = false
        device.emit(topic: DeviceTopic.didEnterBackground, body: [:])
        guard suspendsInBackground else { return }
        for id in timers.keys.sorted() {
            if let timer = timers[id]?.timer { device.bus.cancel(timer) }
            timers[id]?.timer = nil
        }
    }

    func handle(_ envelope: Envelope) {
        switch envelope.topic {
        case DeviceTopic.timerRequest:
            guard let request = device.decode(AppTimerRequest.self, from: envelope) else { return }
            if let old = timers[request.id]?.timer { device.bus.cancel(old) }
            timers[request.id] = PendingTimer(request: request, requester: envelope.source, timer: nil)
            saveTimers()
            if isForeground || !suspendsInBackground { arm(request.id) }
            device.reply(to: envelope, .success(NoValue()))
        case "app.yield.request":
            // An async task's suspension point: it continues at once, unless the app is suspended.
            if isForeground || !device.settings.fidelity.has(.suspendedAsyncTasks) {
                device.reply(to: envelope, .success(NoValue()))
            } else {
                heldResumptions.append(envelope)
            }
        case DeviceTopic.openURLRequest:
            guard let request = device.decode(OpenURL.self, from: envelope) else { return }
            if envelope.source != device.settings.companionPluginName {
                device.fail(envelope, code: "unavailable-in-extensions",
                            "UIApplication.shared.open is unavailable in app extensions (\(envelope.source) is one); write a pending route to the App-Group store and let the app open it when it comes to the foreground")
            } else if !isForeground {
                device.fail(envelope, code: "not-foreground", "the app can open URLs only while it is in the foreground")
            } else {
                device.emit(DeviceTopic.urlOpened, request)
                device.reply(to: envelope, .success(NoValue()))
            }
        default:
            break
        }
    }

    private func arm(_ id: String) {
        guard let pending = timers[id] else { return }
        let fireAt = max(busTime(pending.request.fireAt), device.bus.now)
        timers[id]?.timer = device.bus.schedule(at: fireAt) { [weak self] in
            guard let self, timers[id] != nil else { return }
            timers[id] = nil
            saveTimers()
            device.emit(DeviceTopic.timerFired, AppTimerFired(id: id, scheduledFor: pending.request.fireAt))
        }
    }
}
