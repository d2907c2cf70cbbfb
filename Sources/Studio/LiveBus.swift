import BusClient
import BusProtocol
import BusTools
import DeviceAPI
import Foundation
import Logging

/// The Studio's own connection to a running broker, on a thread of its own: what the broker journaled before the tap
/// was welcomed, then every event (a tap session), the ManagedSettings stores and a look at the phone asked once at
/// connect, and the broker's status report once a second. Loses nothing while it runs and says hello again when the
/// broker comes back, catching up from the journal on what went by meanwhile.
final class LiveBus: @unchecked Sendable {
    private let runtimeDirectory: String?
    private let feed: EventFeed
    private let logger = Logger(label: "shieldbus.studio.bus")
    private var narrator: EventNarrator?
    /// The App-Group stores of the broker followed, for the values its `state.changed` events announce.
    private var storedValues: StoredValues?
    /// The seq of the newest event given to the feed: where the journal's history and the tap's events meet, so that
    /// each event is given once.
    private var lastSeq: UInt64 = 0
    /// Where the broker run followed began numbering (its welcome's `firstSeq`).
    private var runFirstSeq: UInt64?
    /// How long to wait for journal lines the broker has not flushed yet.
    static let journalPatienceMilliseconds: Int64 = 2000

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
        let zone = connection.welcome?.settings["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        if narrator == nil { narrator = EventNarrator(timeZone: zone) }
        storedValues = StoredValues(stateDirectory: RuntimeDirectory.resolve(runtimeDirectory).stateDirectory())
        let missing = connection.welcome.flatMap { catchUp(after: $0) }
        try askWhatCameBefore()
        report(connected: true, message: "following the broker at \(connection.endpoint)" + (missing.map { "; \($0)" } ?? ""), timeZone: zone)
        connection.onGap = { [weak self] missed in
            self?.report(connected: true, message: "the Studio missed \(missed.count) event(s): it could not keep up", timeZone: zone)
        }
        // A broker killed and started again welcomes the tap anew (inside `receive`, before the events after it).
        let endpoint = connection.endpoint
        connection.onReconnect = { [weak self] welcome in
            guard let self, let missing = catchUp(after: welcome) else { return }
            report(connected: true, message: "following the broker at \(endpoint); \(missing)", timeZone: zone)
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
            case .event(let envelope, _)? where envelope.seq > lastSeq:  // not one read from the journal already
                take(envelope)
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

    private func take(_ envelope: Envelope) {
        lastSeq = envelope.seq
        feed.append(event: narrator!.narrate(envelope, stored: storedValues?.value(announcedBy: envelope)))
    }

    /// Gives the feed what the broker journaled up to `welcome`'s seq (its last when it welcomed the tap) that the feed
    /// does not have yet; what could not be read, in words (nil when nothing is missing).
    private func catchUp(after welcome: Welcome) -> String? {
        let welcomed = welcome.seq
        let (first, renumbered) = Self.firstUnseen(after: lastSeq, runFirstSeq: runFirstSeq, welcome: welcome)
        runFirstSeq = welcome.firstSeq
        if renumbered { lastSeq = 0 }  // a broker numbering afresh (a new state folder): all its events are new
        guard welcomed >= first else { return nil }
        guard let path = RuntimeDirectory.resolve(runtimeDirectory).journalPath() else {
            return "the broker writes no journal (--journal): events #\(first)–#\(welcomed) are not shown"
        }
        do {
            let reached = try JournalHistory.read(path: path, after: lastSeq, through: welcomed,
                                                  patienceMilliseconds: Self.journalPatienceMilliseconds) { take($0) }
            return reached < welcomed ? "its journal \(path) ends at #\(reached): events #\(reached + 1)–#\(welcomed) are not shown" : nil
        } catch {
            logger.warning("cannot read the broker's journal", metadata: ["path": "\(path)", "error": "\(error)"])
            return "cannot read its journal: \(error)"
        }
    }

    /// The first event a feed that has those through `lastSeq` (of the broker run that began numbering at `runFirstSeq`)
    /// has not seen, when `welcome` greets it: the next one on the same run; the new run's first when the broker
    /// restarted on its state (it numbers on past what the last one set aside: those numbers were never sent); #1 on a
    /// new bus (a new state folder numbers afresh), `renumbered`.
    static func firstUnseen(after lastSeq: UInt64, runFirstSeq: UInt64?, welcome: Welcome) -> (seq: UInt64, renumbered: Bool) {
        let newRun = welcome.firstSeq.flatMap { $0 == runFirstSeq ? nil : $0 }
        if welcome.seq < lastSeq || newRun.map({ $0 <= lastSeq }) == true { return (1, true) }
        if let newRun, lastSeq > 0 { return (newRun, false) }
        return (lastSeq + 1, false)
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
