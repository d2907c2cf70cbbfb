// Studio: ShieldBus Studio — the simulated phone, its timeline, bus and state, live in a browser (or replayed from a
// journal), served over HTTP and a WebSocket on loopback; a bus client like `shieldbus tap`, never the broker.
import BusClient
import BusProtocol
import BusTools
import Configuration
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging

/// The Studio's web server: the page and its assets, the feed over a WebSocket, and the person's actions.
public struct StudioServer: Sendable {
    /// Where the Studio's events come from.
    public enum Source: Sendable {
        /// A running broker, followed live; the page may act as the person.
        case live(runtimeDirectory: String?)
        /// A recorded journal, replayed with a time slider; nothing can be acted on.
        case journal(path: String, timeZone: TimeZone)
    }

    private let source: Source
    private let port: Int
    private let homeScreen: [CatalogApp]
    /// The controls in the products' apps the page offers (`app-action`).
    private let appControls: [AppControl]
    /// The habits the products' apps offer (`habit`); empty: none listed, any name goes.
    private let habits: [String]
    private let iconDirectories: [URL]
    private let feed: EventFeed
    private let keptEvents: Int
    /// The device's time zone when a live broker's journal begins (a saved scenario starts in it).
    private let timeZone: TimeZone
    /// The journal replayed (nil when live).
    private let journal: RecordedJournal?
    private let logger = Logger(label: "shieldbus.studio")

    /// How many events a live Studio keeps in memory unless told otherwise (room for a busy day's events).
    public static let defaultKeptEvents = 20_000

    /// A server on 127.0.0.1:`port` (0: any free port) showing `homeScreen`'s apps, and shield icons from
    /// `iconDirectories` (the shield plugins' resources), keeping the newest `keptEvents` live events in memory.
    /// A journal's page opens just after the event with this seq (nil: at its end).
    private let openAt: UInt64?
    /// The checker's account of a journal (`shieldbus check`'s verdicts, each violation with the seq it begins after),
    /// shown beside the phone; nil when nothing was judged.
    private let account: JSONValue?
    /// Where the page's files are (`resourcesFolder`).
    private let resources: URL

    public init(source: Source, port: Int, homeScreen: [CatalogApp], appControls: [AppControl] = [], habits: [String] = [], iconDirectories: [URL], keptEvents: Int = defaultKeptEvents,
                openAt: UInt64? = nil, account: JSONValue? = nil, timeZone: TimeZone = TimeZone(identifier: "UTC")!,
                progress: (Int, Int) -> Void = { _, _ in }) throws {
        resources = try Self.resourcesFolder()
        self.timeZone = timeZone
        self.openAt = openAt
        self.account = account
        self.keptEvents = keptEvents
        self.source = source
        self.port = port
        self.homeScreen = homeScreen
        self.appControls = appControls
        self.habits = habits
        self.iconDirectories = iconDirectories
        switch source {
        case .live:
            journal = nil
            feed = EventFeed(capacity: keptEvents)
        case .journal(let path, let timeZone):
            // Where the checker's violations and `--at` are, found while the journal is read (not asked for one by one).
            let seqs = Set((account?["products"]?.arrayValue ?? []).flatMap { $0["violations"]?.arrayValue ?? [] }
                .compactMap { $0["at"]?.intValue.map { UInt64($0) } } + (openAt.map { [$0] } ?? []))
            let journal = try RecordedJournal(path: path, timeZone: timeZone, placing: seqs, progress: progress)
            // An event to open at that the journal does not have would open the page somewhere else, as if it were there.
            if let openAt, journal.places[openAt] == nil { throw StudioError.noEvent(seq: openAt, path: path) }
            self.journal = journal
            feed = EventFeed(capacity: keptEvents, journal: journal)
            feed.update(kind: "connection", json: JSONValue.object([
                "connected": false, "message": .string("replaying \(path)"), "timeZone": .string(timeZone.identifier),
            ]).jsonText)
        }
    }

    /// Serves until the process ends; `onListening` gets the address once the port is bound.
    public func run(onListening: @escaping @Sendable (String) -> Void) async throws {
        if case .live(let runtimeDirectory) = source { LiveBus(runtimeDirectory: runtimeDirectory, feed: feed).start() }
        let hello = helloMessage()
        let feed = self.feed
        let app = Application(
            router: router(),
            server: .http1WebSocketUpgrade(configuration: .init(ws: .init(maxFrameSize: 1 << 20))) { request, _, _ in
                guard request.path == "/ws", Self.isFromLoopbackPage(authority: request.authority, origin: request.headerFields[.origin]) else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    try await outbound.write(.text(hello))
                    let (backlog, stream, stop) = feed.listen()
                    defer { stop() }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        // The page only listens: its own frames are read (and dropped) from the start, so that its
                        // leaving is noticed and its answers to the server's pings are taken while a long backlog is
                        // sent (unanswered for a minute, the connection would be closed).
                        group.addTask { for try await _ in inbound {} }
                        group.addTask {
                            for chunk in backlog { try await outbound.write(.text(try chunk())) }
                            for await message in stream { try await outbound.write(.text(message)) }
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                }
            },
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "ShieldBus Studio"),
            onServerRunning: { channel in
                onListening("http://127.0.0.1:\(channel.localAddress?.port ?? port)")
            },
            logger: logger
        )
        try await app.runService()
    }

    // MARK: Routes

    private func router() -> Router<BasicRequestContext> {
        let router = Router()
        let iconDirectories = self.iconDirectories
        let source = self.source
        let resources = self.resources
        router.get("/") { _, _ in try Self.resource("index.html", type: "text/html; charset=utf-8", in: resources) }
        router.get("/studio.css") { _, _ in try Self.resource("studio.css", type: "text/css; charset=utf-8", in: resources) }
        for script in ["studio.js", "studio-model.js", "studio-draw.js", "studio-journal.js"] {
            router.get(RouterPath("/" + script)) { _, _ in try Self.resource(script, type: "text/javascript; charset=utf-8", in: resources) }
        }
        router.get("/icon/{name}") { _, context in
            // Only a plain file name in the shield plugins' resources, as UIImage(named:) reads its own bundle.
            guard let name = context.parameters.get("name"), !name.hasPrefix("."), !name.contains("/"),
                  let file = iconDirectories.map({ $0.appendingPathComponent(name) }).first(where: { FileManager.default.fileExists(atPath: $0.path) }),
                  let data = FileManager.default.contents(atPath: file.path) else { throw HTTPError(.notFound) }
            return Self.response(.ok, type: name.hasSuffix(".svg") ? "image/svg+xml" : "image/png", data)
        }
        router.get("/api/journal") { request, context in
            // This session's journal as a download: the live broker's journal as written so far, or the one replayed.
            guard Self.isFromLoopbackPage(authority: request.head.authority, origin: request.headers[.origin]) else {
                return Self.failure(.forbidden, "only the Studio's own page may export the journal")
            }
            let path: String
            switch source {
            case .live(let runtimeDirectory):
                guard let written = RuntimeDirectory.resolve(runtimeDirectory).journalPath() else {
                    return Self.failure(.notFound, "the broker writes no journal: start it with `shieldbus run --journal FILE`")
                }
                path = written
            case .journal(let replayed, _):
                path = replayed
            }
            let name = "shieldbus-journal-\(Int(Date().timeIntervalSince1970)).jsonl"
            return Response(status: .ok, headers: [.contentType: "application/x-ndjson", .contentDisposition: "attachment; filename=\"\(name)\"",
                                                   .cacheControl: "no-store"],
                            body: try await FileIO().loadFile(path: path, context: context))
        }
        if let journal { JournalRoutes.add(to: router, journal: journal) }
        let liveZone = timeZone
        router.get("/api/scenario") { request, _ in
            // The person's actions up to the instant shown (a journal's `count` of events; live, all so far), as a
            // scenario file `shieldbus run --scenario` replays.
            guard Self.isFromLoopbackPage(authority: request.head.authority, origin: request.headers[.origin]) else {
                return Self.failure(.forbidden, "only the Studio's own page may save a scenario")
            }
            let path: String, zone: TimeZone
            switch source {
            case .live(let runtimeDirectory):
                guard let written = RuntimeDirectory.resolve(runtimeDirectory).journalPath() else {
                    return Self.failure(.notFound, "the broker writes no journal to save the person's actions from: start it with `shieldbus run --journal FILE`")
                }
                (path, zone) = (written, liveZone)
            case .journal(let replayed, let journalZone):
                (path, zone) = (replayed, journalZone)
            }
            let count = request.uri.queryParameters.get("count", as: Int.self) ?? .max
            let (saved, through) = try Self.savedScenario(path: path, through: count)
            guard saved.count > 0, let through else {
                return Self.failure(.notFound, "the device accepted no action of the person's up to here: there is nothing to save")
            }
            let text = saved.text(name: "studio-session", timeZone: zone, comment: """
                Saved by ShieldBus Studio from \(path) through #\(through): the \(saved.count) action(s) of the person's the device accepted.
                Replay it with the configuration the journal was made with: shieldbus run --config CONFIG --scenario THIS-FILE
                """)
            return Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8", .cacheControl: "no-store",
                                                   .contentDisposition: "attachment; filename=\"shieldbus-scenario-\(through).yml\""],
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        router.post("/api/input") { request, _ in
            await Self.liveAction(request, source: source, doing: "act as the person") { runtimeDirectory, body in
                let input = try PersonInput(action: body["action"]?.stringValue ?? "", value: body["value"]?.stringValue,
                                            tab: Int(body["tab"]?.intValue ?? 1), isPrivate: body["private"]?.boolValue ?? false,
                                            app: body["app"]?.stringValue)
                let (verb, inputBody) = (input.verb, input.body)
                return { try BusTool.input(runtimeDir: runtimeDirectory, verb, inputBody) }
            }
        }
        router.post("/api/clock") { request, _ in
            // The same request as `shieldbus clock`: {action, speed?, to?}.
            await Self.liveAction(request, source: source, doing: "steer the bus clock") { runtimeDirectory, body in
                { try BusTool.controlClock(runtimeDir: runtimeDirectory, action: body["action"]?.stringValue ?? "", speed: body["speed"]?.doubleValue,
                                           to: body["to"]?.stringValue).clock }
            }
        }
        return router
    }

    /// The person's actions in the journal at `path`, through its first `count` events (a live broker's, through the
    /// last line it finished), and the seq of the last event read.
    static func savedScenario(path: String, through count: Int) throws -> (SavedScenario, UInt64?) {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StudioError.unreadableJournal(path: path) }
        defer { try? handle.close() }
        var saved = SavedScenario()
        var read = 0
        var last: UInt64?
        _ = try JournalLines.read(handle, from: 0, unterminatedToo: false) { bytes, _ in
            guard read < count else { return false }
            guard !JournalLines.isBlank(bytes) else { return true }
            let envelope = try WireCodec.decodeEnvelope(Array(bytes))
            saved.read(envelope)
            last = envelope.seq
            read += 1
            return true
        }
        return (saved, last)
    }

    /// A page's request to act on the live broker: only from the Studio's own page (JSON from a loopback origin), only
    /// live; `request` makes, from the JSON body, the bus request to send (or throws what is wrong with the body).
    private static func liveAction(_ request: Request, source: Source, doing what: String,
                                   _ makeRequest: (String?, JSONValue) throws -> @Sendable () throws -> JSONValue) async -> Response {
        guard isFromLoopbackPage(authority: request.head.authority, origin: request.headers[.origin]), request.headers[.contentType]?.hasPrefix("application/json") == true else {
            return failure(.forbidden, "only the Studio's own page may \(what) (JSON from a loopback origin)")
        }
        guard case .live(let runtimeDirectory) = source else {
            return failure(.conflict, "a recorded journal is replayed, not acted on (its time moves with the timeline)")
        }
        let send: @Sendable () throws -> JSONValue
        do {
            let bytes = try await request.body.collect(upTo: 64 * 1024)
            send = try makeRequest(runtimeDirectory, try JSONValue(parsing: Array(buffer: bytes)))
        } catch {
            return failure(.badRequest, "\(error)")
        }
        return await Self.send(send)
    }

    /// Sends a request as `shieldbus do` or `shieldbus clock` does, off the server's threads (it waits for the answer).
    private static func send(_ request: @escaping @Sendable () throws -> JSONValue) async -> Response {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    let value = try request()
                    continuation.resume(returning: response(.ok, type: "application/json", Data(JSONValue.object(["ok": true, "value": value]).jsonText.utf8)))
                } catch let refusal as DeviceRefusal {
                    continuation.resume(returning: failure(.conflict, refusal.message, code: refusal.code))
                } catch let invalid as BusTool.Invalid {
                    continuation.resume(returning: failure(.badRequest, invalid.description))
                } catch {
                    continuation.resume(returning: failure(.serviceUnavailable, "\(error)"))
                }
            }
        }
    }

    /// The first message a page gets: where the events come from and the home screen.
    private func helloMessage() -> String {
        let mode: String
        switch source {
        case .live: mode = "live"
        case .journal: mode = "journal"
        }
        let apps = homeScreen.map { app -> JSONValue in
            ["name": .string(app.name), "bundle": .string(app.bundleIdentifier), "category": .string(app.categoryID)]
        }
        let controls = appControls.map { control -> JSONValue in
            ["app": control.app.map { .string($0) } ?? .null, "action": .string(control.action)]
        }
        // A journal's page is told how many events are coming, to show its progress while they load.
        let total: JSONValue = feed.journalCount.map { .int(Int64($0)) } ?? .null
        // And, for its markers, how many events of each timeline kind it has.
        let marks: JSONValue = journal.map { .object($0.storyCounts.mapValues { .int(Int64($0)) }) } ?? .null
        let places: JSONValue = journal.map { .object(Dictionary(uniqueKeysWithValues: $0.places.map { (String($0.key), .int(Int64($0.value))) })) } ?? .null
        return JSONValue.object(["kind": "hello", "mode": .string(mode), "apps": .array(apps), "controls": .array(controls),
                                 "habits": .array(habits.map(JSONValue.string)), "total": total, "marks": marks, "places": places,
                                 "keep": .int(Int64(keptEvents)),
                                 "at": openAt.map { .int(Int64($0)) } ?? .null, "account": account ?? .null]).jsonText
    }

    /// Whether a request comes from a page of this server (or from no page at all, as curl): a loopback host,
    /// and no foreign origin — so that no web site the person visits can drive the device.
    static func isFromLoopbackPage(authority: String?, origin: String?) -> Bool {
        let loopback = ["127.0.0.1", "localhost", "[::1]"]
        func isLoopback(_ authority: String) -> Bool {
            let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }) + "]" : String(authority.prefix { $0 != ":" })
            return loopback.contains(host)
        }
        guard let authority, isLoopback(authority) else { return false }
        guard let origin else { return true }
        guard let url = URL(string: origin), url.scheme == "http", let originHost = url.host else { return false }
        return isLoopback(originHost.contains(":") ? "[\(originHost)]" : originHost)
    }

    /// The page's files: the Studio target's resource bundle (`ShieldBus_Studio.resources`), which the build leaves beside
    /// the program and which must travel with it. Found at start, beside the program only: `Bundle.module` stops the
    /// process when it finds no bundle, which a copied `shieldbus` would do at its first page request.
    static func resourcesFolder(programFolder: URL = Bundle.main.bundleURL) throws -> URL {
        let bundle = programFolder.appendingPathComponent("ShieldBus_Studio.resources", isDirectory: true)
        let folder = bundle.appendingPathComponent("Resources", isDirectory: true)
        guard access(folder.path, R_OK | X_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            throw StudioError.missingResourceBundle(path: folder.path, reason: reason, programFolder: programFolder.path)
        }
        return folder
    }

    private static func resource(_ name: String, type: String, in folder: URL) throws -> Response {
        guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
            throw StudioError.missingResource(name: name)
        }
        return response(.ok, type: type, data)
    }

    private static func response(_ status: HTTPResponse.Status, type: String, _ data: Data) -> Response {
        Response(status: status, headers: [.contentType: type, .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private static func failure(_ status: HTTPResponse.Status, _ message: String, code: String? = nil) -> Response {
        var error: [String: JSONValue] = ["message": .string(message)]
        if let code { error["code"] = .string(code) }
        return response(status, type: "application/json", Data(JSONValue.object(["ok": false, "error": .object(error)]).jsonText.utf8))
    }
}
