import BusClient
import BusProtocol
import BusTools
import DeviceAPI
import Foundation
import Logging

/// The Studio's own connection to a running broker, on a thread of its own: every event (a tap session), the
/// ManagedSettings stores and a look at the phone asked once at connect, and the broker's status report once a second.
/// Loses nothing while it runs and says hello again when the broker comes back.
final class LiveBus: @unchecked Sendable {
    private let runtimeDirectory: String?
    private let feed: EventFeed
    private let logger = Logger(label: "shieldbus.studio.bus")
    private var narrator: EventNarrator?

    init(runtimeDirectory: String?, feed: EventFeed) {
        self.runtimeDirectory = runtimeDirectory
        self.feed = feed
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "studio-bus"
        thread.start()
    }

    private func run() {
        while true {
            do {
                try follow()
            } catch {
                report(connected: false, message: "\(error)")
                logger.info("no broker to follow yet", metadata: ["error": "\(error)"])
            }
            Thread.sleep(forTimeInterval: 0.2)  // a broker may come (back) at any time: look again soon
        }
    }

    /// Taps the broker until it leaves or the connection fails.
    private func follow() throws {
        // A tap, as `shieldbus tap`: only taps receive every event, the requests to a role among them.
        let connection = try BusTool.connect(runtimeDir: runtimeDirectory, name: BusTool.name("studio"), role: .tap, subscriptions: [""])
        defer { connection.close() }
        try askWhatCameBefore()
        let zone = connection.welcome?.settings["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        if narrator == nil { narrator = EventNarrator(timeZone: zone) }
        report(connected: true, message: "following the broker at \(connection.endpoint)", timeZone: zone)
        connection.onGap = { [weak self] missed in
            self?.report(connected: true, message: "the Studio missed \(missed.count) event(s): it could not keep up", timeZone: zone)
        }
        let status = try BusConnection(endpoint: connection.endpoint, hello: Hello(name: BusTool.name("studio-status"), role: .tool, subscriptions: []))
        defer { status.close() }
        var nextStatus: Int64 = 0
        while true {
            if monotonicMilliseconds() >= nextStatus {
                if let report = try? status.status(timeoutMilliseconds: 1000) { feed.update(kind: "status", json: report.jsonText) }
                nextStatus = monotonicMilliseconds() + 1000
            }
            switch try connection.receive(timeoutMilliseconds: 250) {
            case .event(let envelope, _)?:
                feed.append(event: narrator!.narrate(envelope))
            case .bye(let reason)?:
                report(connected: false, message: "the broker left: \(reason)")
                return
            case .error(let error)?:
                logger.warning("error from the broker", metadata: ["code": "\(error.code)", "message": "\(error.message)"])
            default:
                continue
            }
        }
    }

    /// What was set before the Studio came — the stores, read as any plugin reads them, and a look at the phone (what
    /// is on screen, the notifications waiting, the monitored schedules) — from a tool session of its own (taps only
    /// read); the tap sees the OS's replies after every event before them, and the page folds them.
    private func askWhatCameBefore() throws {
        let name = BusTool.name("studio-read")
        let tool = try BusTool.connect(runtimeDir: runtimeDirectory, name: name, role: .tool, subscriptions: [])
        defer { tool.close() }
        try tool.publish(Publish(topic: DeviceTopic.settingsReadRequest, body: [:], corr: "\(name)-stores"))
        try tool.publish(Publish(topic: DeviceTopic.lookRequest, body: [:], corr: "\(name)-look"))
    }

    private func report(connected: Bool, message: String, timeZone: TimeZone? = nil) {
        var body: [String: JSONValue] = ["connected": .bool(connected), "message": .string(message)]
        if let timeZone { body["timeZone"] = .string(timeZone.identifier) }
        feed.update(kind: "connection", json: JSONValue.object(body).jsonText)
    }
}
