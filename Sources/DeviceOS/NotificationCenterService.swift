import BusProtocol
import DeviceAPI
import Foundation

/// Posted notifications, and what happens when the person taps one: the companion app of the poster's product
/// comes to the foreground (the notifier's pending deep-link route is the app's to read).
final class NotificationCenterService {
    private unowned let device: DeviceOS
    private(set) var delivered: [NotificationRequest] = []
    /// Who posted each delivered notification (by id): a tap opens that plugin's app.
    private var posters: [String: String] = [:]

    init(device: DeviceOS) {
        self.device = device
    }

    func handle(_ envelope: Envelope) {
        guard let request = device.decode(NotificationRequest.self, from: envelope) else { return }
        // As on iOS, a request with the identifier of a delivered notification replaces it: a notifier that
        // posts again after a restart (a redelivered trigger) does not post twice.
        let isRepost = delivered.contains { $0.id == request.id }
        delivered.removeAll { $0.id == request.id }
        delivered.append(request)
        posters[request.id] = envelope.source
        if !isRepost { device.emit(DeviceTopic.notificationPosted, request) }
        device.reply(to: envelope, .success(NoValue()))
    }

    /// The person taps a notification (the latest when `id` is nil).
    func tap(id: String?) {
        guard let notification = id.map({ wanted in delivered.last { $0.id == wanted } }) ?? delivered.last else {
            device.emit(topic: "bus.error", body: ["code": "no-notification", "sender": "broker",
                                                   "message": .string(id.map { "no notification with id '\($0)' was posted" } ?? "no notification was posted yet; nothing to tap")])
            return
        }
        delivered.removeAll { $0.id == notification.id }
        let poster = posters.removeValue(forKey: notification.id)
        device.emit(topic: DeviceTopic.notificationTapped, body: ["id": .string(notification.id), "kind": notification.kind.map(JSONValue.string) ?? .null])
        if let app = poster.flatMap(device.product(of:))?.companionApp { device.screen.open(app, reason: "notification") }
    }
}
