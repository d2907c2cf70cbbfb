import BusProtocol
import Configuration
import DeviceAPI
import Foundation

/// Posted notifications, and what happens when the person taps one: the companion app of the poster's product
/// comes to the foreground (the notifier's pending deep-link route is the app's to read).
final class NotificationCenterService {
    /// A delivered notification and the plugin that posted it: a tap opens that plugin's app.
    struct Delivered: Codable {
        var request: NotificationRequest
        var poster: String
    }

    /// The stored list (one row per notification, by id: a post writes one row however many were delivered before).
    static let storeList = "notifications.delivered"
    private unowned let host: any DeviceHost
    private let directory: DeviceDirectory
    /// The person tapped a notification: its poster's companion app comes to the front.
    private let openApp: (CatalogApp) -> Void
    /// Persisted, as on iOS: a notification not yet tapped is still there after a restart (a broker SIGKILL).
    private var entries: [Delivered]
    var delivered: [NotificationRequest] { entries.map(\.request) }

    /// The notifications the device's state holds; a tap opens the poster's app through `openApp`.
    init(host: any DeviceHost, directory: DeviceDirectory, openApp: @escaping (CatalogApp) -> Void) throws {
        self.host = host
        self.directory = directory
        self.openApp = openApp
        entries = try host.state.items(Delivered.self, list: Self.storeList)
        // State saved before the list had rows of its own kept it whole under one key: move it over once.
        if let saved = try host.state.load([Delivered].self, key: Self.storeList) {
            for entry in saved { try host.state.appendItem(entry, id: entry.request.id, list: Self.storeList) }
            try host.state.removeValue(key: Self.storeList)
            entries = try host.state.items(Delivered.self, list: Self.storeList)
        }
    }

    func handle(_ envelope: Envelope) {
        guard let request = host.decode(NotificationRequest.self, from: envelope) else { return }
        // As on iOS, a request with the identifier of a delivered notification replaces it: a notifier that
        // posts again after a restart (a redelivered trigger) does not post twice.
        let isRepost = entries.contains { $0.request.id == request.id }
        entries.removeAll { $0.request.id == request.id }
        let entry = Delivered(request: request, poster: envelope.source)
        entries.append(entry)
        host.saving("a delivered notification") { try $0.appendItem(entry, id: request.id, list: Self.storeList) }
        if !isRepost { host.emit(DeviceTopic.notificationPosted, request) }
        host.replySuccess(to: envelope)
    }

    /// The person taps a notification (the latest when `id` is nil).
    func tap(id: String?) {
        guard let notification = id.map({ wanted in entries.last { $0.request.id == wanted } }) ?? entries.last else {
            // A tapped notification leaves the list, as on iOS: "none waiting" covers never posted and tapped already.
            return host.actionDidNothing("no-notification", id.map { "no notification with id '\($0)' is waiting to be tapped" }
                ?? "no notification is waiting to be tapped (none was posted, or each was tapped already); the tap did nothing")
        }
        entries.removeAll { $0.request.id == notification.request.id }
        host.saving("a tapped notification") { try $0.removeItem(id: notification.request.id, list: Self.storeList) }
        host.emit(topic: DeviceTopic.notificationTapped, body: ["id": .string(notification.request.id), "kind": notification.request.kind.map(JSONValue.string) ?? .null])
        if let app = directory.product(of: notification.poster)?.companionApp { openApp(app) }
    }
}
