import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// What one outside client may cost or take from the others, through the real broker: requests between outside
/// clients, correlation ids that are each requester's own, the limits per session and per credential, and the
/// person's input, which only the tool credential carries (docs/protocol.md § 5.5, § 6.4; docs/security.md § 5).
final class SessionLimitsTests: XCTestCase {
    // Set in `class func setUp` before this class's tests and cleared in `class func tearDown` after them; XCTest runs
    // them one at a time, so nothing reads it while it is written.
    nonisolated(unsafe) static var broker: BrokerProcess!

    override class func setUp() {
        // The `clients:` example of protocol.md § 5.5.
        broker = try! BrokerProcess(configuration: """
        name: limits
        clients:
          - {roles: [tap, generic]}
          - {name: deploy-check, roles: [tool]}

        """)
    }

    override class func tearDown() {
        broker.stop()
        broker = nil
    }

    var broker: BrokerProcess { Self.broker }

    /// The test's clients, kept alive (heartbeats) while it waits on one of them.
    var clients: [BusConnection] = []

    func generic(_ name: String, subscriptions: [String] = []) throws -> BusConnection {
        let client = try broker.connect(name: name, role: .generic, subscriptions: subscriptions)
        clients.append(client)
        return client
    }

    /// The next error `client` is sent, or the first event `until` accepts, within 5 s. The other clients send
    /// their heartbeats meanwhile: a client silent that long is a dead one to the broker.
    func next(from client: BusConnection, until accepts: (Envelope) -> Bool = { _ in false }) throws -> BrokerMessage? {
        let deadline = monotonicMilliseconds() + 5000
        while monotonicMilliseconds() < deadline {
            for other in clients where other !== client { try? other.maintain() }
            switch try client.receive(timeoutMilliseconds: 50) {
            case .error(let report)?: return .error(report)
            case .event(let envelope, let delivery)? where accepts(envelope): return .event(envelope, delivery: delivery)
            default: continue
            }
        }
        return nil
    }

    func errorCode(_ message: BrokerMessage?) -> String? {
        if case .error(let report)? = message { return report.code }
        return nil
    }

    /// Two outside clients: one asks in the other's namespace, the owner answers, the asker gets the reply; a third
    /// cannot answer in the owner's place.
    func testTwoOutsideClientsDoRequestAndReplyInTheAnswerersNamespace() throws {
        let answerer = try generic("oracle", subscriptions: ["x.oracle.ask.request"])
        let asker = try generic("asker")
        let meddler = try generic("meddler")
        defer { [answerer, asker, meddler].forEach { $0.close() } }
        try asker.publish(Publish(topic: "x.oracle.ask.request", body: ["q": "time?"], corr: "asker-1"))
        let request = try next(from: answerer) { $0.topic == "x.oracle.ask.request" }
        guard case .event(let envelope, _)? = request else { return XCTFail("the owner did not get the request: \(String(describing: request))") }
        XCTAssertEqual(envelope.corr, "asker-1")
        XCTAssertEqual(envelope.sender, "asker")
        try meddler.publish(Publish(topic: "x.oracle.ask.reply", body: ["a": "never"], corr: "asker-1"))
        XCTAssertEqual(errorCode(try next(from: meddler)), "foreign-namespace", "only the owner answers in its namespace")
        try answerer.publish(Publish(topic: "x.oracle.ask.reply", body: ["a": "noon"], corr: "asker-1"))
        let reply = try next(from: asker) { $0.topic == "x.oracle.ask.reply" }
        guard case .event(let answer, _)? = reply else { return XCTFail("the asker got no reply: \(String(describing: reply))") }
        XCTAssertEqual(answer.bodyValue["a"]?.stringValue, "noon", "the reply reaches the asker, who does not subscribe to it")
        XCTAssertEqual(answer.sender, "oracle")
        try answerer.publish(Publish(topic: "x.oracle.ask.reply", body: ["a": "again"], corr: "asker-1"))
        XCTAssertEqual(errorCode(try next(from: answerer)), "reply-refused", "a request is answered once")
        // Without a corr, a `.request` is an ordinary event: in another's namespace, refused.
        try asker.publish(Publish(topic: "x.oracle.ask.request", body: [:]))
        XCTAssertEqual(errorCode(try next(from: asker)), "foreign-namespace")
    }

    /// A client that claims ids another client will use cannot make that client's requests fail: ids are each
    /// requester's own, unless two requests would wait for the same reply topic.
    func testCorrelationIdsAreEachRequestersOwn() throws {
        let owner = try generic("keeper", subscriptions: ["x.keeper."])
        let squatter = try generic("squatter")
        let victim = try generic("victim")
        defer { [owner, squatter, victim].forEach { $0.close() } }
        // The squatter claims the victim's next ids, on requests nobody answers.
        for n in 1...50 { try squatter.publish(Publish(topic: "x.keeper.hold.request", body: [:], corr: "victim-\(n)")) }
        XCTAssertNil(errorCode(try next(from: squatter) { $0.topic == "never" }), "each of the squatter's ids is its own")
        try victim.publish(Publish(topic: "x.keeper.ask.request", body: [:], corr: "victim-1"))
        let request = try next(from: owner) { $0.topic == "x.keeper.ask.request" }
        guard case .event(let envelope, _)? = request else { return XCTFail("the victim's request was refused: \(String(describing: request))") }
        XCTAssertEqual(envelope.sender, "victim")
        try owner.publish(Publish(topic: "x.keeper.ask.reply", body: ["ok": true], corr: "victim-1"))
        guard case .event(let reply, _)? = try next(from: victim, until: { $0.topic == "x.keeper.ask.reply" }) else { return XCTFail("no reply") }
        XCTAssertEqual(reply.corr, "victim-1")
        // The same id twice by one client, or by two clients for the same reply topic, would be ambiguous.
        try squatter.publish(Publish(topic: "x.keeper.hold.request", body: [:], corr: "victim-1"))
        XCTAssertEqual(errorCode(try next(from: squatter)), "duplicate-corr")
        try victim.publish(Publish(topic: "x.keeper.hold.request", body: [:], corr: "victim-2"))
        XCTAssertEqual(errorCode(try next(from: victim)), "duplicate-corr", "the squatter's request waits for that reply topic with that id")
    }

    func testASessionMayHaveAtMostTheLimitOfRequestsWaiting() throws {
        let hoarder = try generic("hoarder")
        defer { hoarder.close() }
        for n in 0..<OpenRequests_perSessionLimit { try hoarder.publish(Publish(topic: "x.hoarder.q.request", body: [:], corr: "h-\(n)")) }
        XCTAssertNil(errorCode(try next(from: hoarder) { $0.topic == "never" }), "up to the limit, every request is taken")
        try hoarder.publish(Publish(topic: "x.hoarder.q.request", body: [:], corr: "h-over"))
        let refusal = try next(from: hoarder)
        XCTAssertEqual(errorCode(refusal), "too-many-requests", "\(String(describing: refusal))")
        // Its session ending frees them: a new session of the same name asks again.
        hoarder.close()
        let again = try generic("hoarder")
        defer { again.close() }
        try again.publish(Publish(topic: "x.hoarder.q.request", body: [:], corr: "h-over"))
        XCTAssertNil(errorCode(try next(from: again) { $0.topic == "never" }))
    }

    func testAHelloWithTooManySubscriptionsIsRefused() throws {
        let many = (0...1_000).map { "x.sub\($0)." }
        XCTAssertThrowsError(try generic("greedy", subscriptions: many)) { error in
            XCTAssertTrue("\(error)".contains("too-many-subscriptions") || "\(error)".contains("1001 subscriptions"), "\(error)")
        }
        let long = (0..<20).map { "x.\(String(repeating: "a", count: 1_000))\($0)." }
        XCTAssertThrowsError(try generic("verbose", subscriptions: long)) { error in
            XCTAssertTrue("\(error)".contains("subscriptions of"), "\(error)")
        }
        let enough = try generic("modest", subscriptions: Array(many.prefix(1_000)))
        enough.close()
    }

    /// Raw hellos on one libzmq context: the 257th session presenting the cookie is refused, and one closed makes room.
    func testOneCredentialHoldsAtMostTheLimitOfSessions() throws {
        let broker = try BrokerProcess(configuration: "name: crowd\n")  // its own: the sessions it fills stay a while
        defer { broker.stop() }
        let context = try Context()
        let cookie = try XCTUnwrap(broker.runtime.cookie())
        var sockets: [Socket] = []
        defer { sockets.forEach { $0.close() } }
        func hello(_ n: Int) throws -> BrokerMessage? {
            let socket = try Socket(context, .dealer)
            try socket.setReceiveTimeout(milliseconds: 5000)
            try socket.connect(broker.runtime.brokerEndpoint())
            sockets.append(socket)
            _ = try socket.send(WireCodec.encode(.hello(Hello(name: "crowd-\(n)", role: .tap, subscriptions: [], credential: cookie))))
            return try socket.receive().map { try WireCodec.decodeBrokerMessage($0) }
        }
        let limit = 32  // Admission.sessionsPerCredential, as protocol.md § 12.2 documents it
        // Fill up to the limit, then one more; a hello refused for its pace (`too-many-hellos`) is tried again.
        var welcomed = 0, refusal: BrokerMessage?
        let deadline = monotonicMilliseconds() + 30_000
        var n = 0
        while refusal == nil && welcomed <= limit && monotonicMilliseconds() < deadline {
            let answer = try hello(n)
            n += 1
            if case .welcome? = answer { welcomed += 1 } else if errorCode(answer) != "too-many-hellos" { refusal = answer }
        }
        XCTAssertEqual(errorCode(refusal), "too-many-sessions", "after \(welcomed) sessions: \(String(describing: refusal))")
        XCTAssertLessThanOrEqual(welcomed, limit)
        XCTAssertGreaterThan(welcomed, limit - 10)
        // The person's tools hold their own credential: still admitted.
        let tool = try broker.connect(name: "still-me", role: .tool, subscriptions: [])
        tool.close()
    }

    /// A client that connects and leaves in a loop is held to the hello rate; the person's tools have a bucket of their
    /// own. The crowd's refusals are said on the bus as in the log — at most one `bus.error` a second, carrying how many
    /// it stands for — and every one is counted in `status`.
    func testHellosFasterThanTheRateAreRefusedCheaply() throws {
        let broker = try BrokerProcess(configuration: "name: churn\n")  // its own: the bucket it empties refills slowly
        defer { broker.stop() }
        let watcher = try broker.connect(name: "error-watcher", role: .tool, subscriptions: ["bus.error"])
        defer { watcher.close() }
        let context = try Context()
        let cookie = try XCTUnwrap(broker.runtime.cookie())
        let started = monotonicMilliseconds()
        var welcomed = 0, refused = 0, refusal: String?, firstRefusedAt: Int64?
        // Until refusals span more than a second, so that a second line says those the first held back.
        for n in 0..<20_000 where refused < 100 || monotonicMilliseconds() - (firstRefusedAt ?? .max / 2) < 1_200 {
            let socket = try Socket(context, .dealer)
            defer { socket.close() }
            try socket.setReceiveTimeout(milliseconds: 5000)
            try socket.connect(broker.runtime.brokerEndpoint())
            _ = try socket.send(WireCodec.encode(.hello(Hello(name: "churn-\(n)", role: .tap, subscriptions: [], credential: cookie))))
            let answer = try socket.receive().map { try WireCodec.decodeBrokerMessage($0) }
            if case .welcome? = answer, refused == 0 {
                welcomed += 1
                _ = try socket.send(WireCodec.encode(.bye))
            } else if case .welcome? = answer {
                _ = try socket.send(WireCodec.encode(.bye))  // the bucket refilled by a token meanwhile
            } else {
                refused += 1
                firstRefusedAt = firstRefusedAt ?? monotonicMilliseconds()
                refusal = refusal ?? errorCode(answer) ?? "\(String(describing: answer))"
            }
        }
        let seconds = Double(monotonicMilliseconds() - started) / 1_000
        XCTAssertEqual(refusal, "too-many-hellos", "after \(welcomed) hellos in \(seconds) s")
        XCTAssertLessThanOrEqual(Double(welcomed), 200 + 20 * seconds + 1, "the burst, and the rate since (HelloRate: 200, then 20 a second)")
        let counted = try XCTUnwrap(try broker.status()["counters"]?["errorsByCode"]?["too-many-hellos"]?.intValue)
        XCTAssertEqual(counted, Int64(refused), "status counts every refusal")
        // A refusal of the watcher's own marks the end: the bus.errors before it have all arrived by then.
        try watcher.publish(Publish(topic: "plugin.up", body: [:]))
        let said = try collectEvents(from: watcher) { events in events.contains { $0.bodyValue["sender"]?.stringValue == "error-watcher" } }
            .filter { $0.bodyValue["code"]?.stringValue == "too-many-hellos" }
        let sum = said.compactMap { $0.bodyValue["refusals"]?.intValue }.reduce(0, +)
        XCTAssertFalse(said.isEmpty, "the refusals are said on the bus")
        XCTAssertLessThanOrEqual(Double(said.count), seconds + 1, "at most one bus.error a second, not one for each of \(refused)")
        // Each line counts those since the one before; what came after the last line waits for the next.
        XCTAssertGreaterThan(sum, Int64(said.count), "a line stands for the refusals it held back: \(said.map(\.bodyValue.jsonText))")
        XCTAssertLessThanOrEqual(sum, Int64(refused))
        let tool = try broker.connect(name: "do-after-churn", role: .tool, subscriptions: [])
        tool.close()
    }

    /// The person's input: only the tool credential carries it, whatever `clients:` grants.
    func testThePersonsInputNeedsTheToolCredential() throws {
        let cookie = try XCTUnwrap(broker.runtime.cookie())
        let toolCredential = try XCTUnwrap(broker.runtime.toolCredential())
        XCTAssertNotEqual(cookie, toolCredential)
        var info = stat()
        XCTAssertEqual(stat(broker.runtime.toolCredentialPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "the tool credential is its owner's alone")
        let input = Publish(topic: "input.home.request", body: [:], corr: "in-1")
        // A tool `clients:` names, admitted by the cookie: a tool, but not the person.
        let named = try BusConnection(endpoint: broker.runtime.brokerEndpoint(),
                                      hello: Hello(name: "deploy-check", role: .tool, subscriptions: [], credential: cookie), runtime: broker.runtime)
        _ = try named.connect(timeoutMilliseconds: 5000)
        defer { named.close() }
        try named.publish(input)
        XCTAssertEqual(errorCode(try next(from: named)), "reserved-topic")
        // Another name with the cookie may not be a tool at all.
        XCTAssertThrowsError(try BusConnection(endpoint: broker.runtime.brokerEndpoint(),
                                               hello: Hello(name: "sneaky", role: .tool, subscriptions: [], credential: cookie),
                                               runtime: broker.runtime).connect(timeoutMilliseconds: 5000)) { error in
            XCTAssertTrue("\(error)".contains("role-not-allowed") || "\(error)".contains("role not allowed"), "\(error)")
        }
        // The person's tool (BusConnection presents the tool credential for `tool`), under a name of its own.
        let person = try broker.connect(name: "do-1234-1", role: .tool, subscriptions: ["input."])
        defer { person.close() }
        try person.publish(input)
        let seen = try next(from: person) { $0.topic == "input.home.request" }
        guard case .event(let envelope, _)? = seen else { return XCTFail("the person's input was refused: \(String(describing: seen))") }
        XCTAssertEqual(envelope.sender, "do-1234-1")
    }
}

/// `OpenRequests.perSessionLimit`, as the wire documents it (the broker's types are internal).
let OpenRequests_perSessionLimit = 1_024
