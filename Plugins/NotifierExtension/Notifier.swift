// notifier: posts notifications for the events its rules name, within quiet hours and one-per-kind windows, and leaves the pending deep-link route.

import BusProtocol
import Foundation
import ReferenceKit
import ShieldBusSDK

/// The notifier extension. It keeps nothing in memory between events — the last post of each kind and the
/// pending route live in its App-Group slice — so it behaves the same when iOS starts it afresh for each callback.
final class Notifier: BusPlugin {
    let options: NotifierOptions
    private lazy var desktop = DesktopNotifier.ifAvailable(enabled: options.desktop)
    /// The App-Group store, opened at the first notification and kept: a connection, not a copy (every read goes to
    /// the store). Opening it for each notification would run a quick_check and the WAL set-up every time.
    private var openedDefaults: SharedDefaults?

    init(options: NotifierOptions) {
        self.options = options
    }

    override var role: Role { .notifier }
    override var subscriptions: [String] { options.topics }

    override func handle(_ envelope: Envelope) {
        let fields = TriggerFields.of(envelope)
        for rule in options.rules where rule.matches(topic: envelope.topic, fields: fields) {
            do {
                try notify(rule, fields: fields, trigger: envelope)
            } catch {
                PluginRuntime.current?.logger.error("rule '\(rule.kind)' on \(envelope.topic) (#\(envelope.seq)) failed: \(error)")
            }
        }
    }

    private func appGroup() throws -> SharedDefaults {
        if let openedDefaults { return openedDefaults }
        let opened = try SharedDefaults.forPlugin(suiteName: options.appGroup)
        openedDefaults = opened
        return opened
    }

    private func notify(_ rule: NotificationRule, fields: [String: String], trigger: Envelope) throws {
        guard let runtime = PluginRuntime.current else { throw PluginError.notRunning }
        let defaults = try appGroup()
        let now = runtime.now
        let lastKey = Self.lastPostedKey(rule.kind)
        let policy = NotificationPolicy(quietHours: options.quietHours, dedupWindow: TimeInterval(options.dedupMinutes * 60), timeZone: runtime.timeZone)
        if let suppression = policy.suppression(of: rule.interruptionLevel, at: now, lastOfKind: try defaults.date(forKey: lastKey)) {
            try runtime.publish("notification.suppressed", json: [
                "kind": .string(rule.kind), "reason": .string(suppression.rawValue), "trigger": .string(trigger.topic),
                "interruptionLevel": .string(rule.interruptionLevel.rawValue),
            ])
            return
        }
        let request = NotificationRequest(id: "\(rule.kind)-\(trigger.seq)", title: NotificationRule.fill(rule.title, with: fields),
                                          body: NotificationRule.fill(rule.body, with: fields), interruptionLevel: rule.interruptionLevel,
                                          kind: rule.kind)
        // The route is in place before the notification exists, so a tap always finds it.
        if let route = rule.route, let url = options.routes[route] {
            let expiry = now.addingTimeInterval(TimeInterval(options.routeLifetimeMinutes * 60))
            try defaults.set(PendingDeepLinkRoute(route: route, url: url, createdAt: now, expiresAt: expiry), forKey: PendingDeepLinkRoute.key)
        }
        try Notifications.post(request)
        // Recorded once posted: a notifier killed in between posts again for the redelivered trigger (the same
        // identifier, which the OS replaces) instead of taking its own unposted notification for a duplicate.
        try defaults.set(now, forKey: lastKey)
        desktop?.show(request)
    }

    /// Where the time of the last notification of a kind is kept (timestamps, not flags: the seeds' lesson).
    static func lastPostedKey(_ kind: String) -> String { "notifier.lastPosted.\(kind)" }
}

/// The fields of a triggering event that rules match on and fill into texts: its body's top-level strings, plus
/// `target` (the shielded app or domain) for `shield.shown`.
enum TriggerFields {
    static func of(_ envelope: Envelope) -> [String: String] {
        var fields: [String: String] = [:]
        let body = envelope.bodyValue
        if case .object(let members) = body {
            for (name, value) in members { if let text = value.stringValue { fields[name] = text } }
        }
        // Every shielded open makes a `shield.shown`: its body is read from the parsed value (`BodyReading`), and
        // only one it reads nil goes to `JSONDecoder`, which reads it or refuses it.
        if envelope.topic == DeviceTopic.shieldShown,
           let shown = ShieldShown(body: body) ?? (try? DeviceAPICoding.decode(ShieldShown.self, from: envelope.body)) {
            fields["target"] = shown.target.displayName
        }
        return fields
    }
}

/// Shows notifications on the Linux desktop with `notify-send`, when it exists and bus time is wall time.
struct DesktopNotifier {
    let executable: String

    /// A desktop notifier when enabled, `notify-send` is on PATH and the clock is real (a simulated day's
    /// notifications would otherwise pop up all at once); nil otherwise.
    static func ifAvailable(enabled: Bool) -> DesktopNotifier? {
        guard enabled, PluginRuntime.current?.clockMode == "real" else { return nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/notify-send" }
            .first(where: FileManager.default.isExecutableFile(atPath:)).map(DesktopNotifier.init(executable:))
    }

    func show(_ request: NotificationRequest) {
        let urgency: [NotificationRequest.InterruptionLevel: String] = [.passive: "low", .active: "normal", .timeSensitive: "critical"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--app-name=ShieldBus", "--urgency=\(urgency[request.interruptionLevel]!)", request.title, request.body]
        do {
            try process.run()
        } catch {
            PluginRuntime.current?.logger.warning("notify-send failed: \(error)")
        }
    }
}

/// `notifier`'s program: its `main` runs it, and a test hosts it in its own process.
public enum NotifierPlugin {
    public static let program = PluginProgram.options(NotifierOptions.self) { Notifier(options: $0) }
}
