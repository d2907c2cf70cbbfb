import BusClient
import BusProtocol
import DeviceAPI
import Foundation
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// Admission, the status without a credential, and namespaces, through the real broker with outside clients
/// (the attacks on the reference plugins are in PythonPluginTests/TrustAttackTests).
final class AuthorityTests: XCTestCase {
    // Set in `class func setUp` before this class's tests and cleared in `class func tearDown` after them; XCTest runs
    // them one at a time, so nothing reads it while it is written.
    nonisolated(unsafe) static var broker: BrokerProcess!

    override class func setUp() {
        broker = try! BrokerProcess(configuration: """
        name: authority
        clients:
          - {roles: [tap, tool, generic]}
          - {name: coach, roles: [generic], namespaces: [focuscoach]}
          - {name: dev-reports, roles: [report]}

        """)
    }

    override class func tearDown() {
        broker.stop()
        broker = nil
    }

    var broker: BrokerProcess { Self.broker }

    /// Publishes from `client` and returns the refusal's code, or nil when `watcher` saw the event instead.
    func outcome(of topic: String, from client: BusConnection, watcher: BusConnection) throws -> String? {
        try client.publish(Publish(topic: topic, body: ["n": 1]))
        let deadline = monotonicMilliseconds() + 5000
        while monotonicMilliseconds() < deadline {
            switch try client.receive(timeoutMilliseconds: 50) {
            case .error(let report)?: return report.code
            default: break
            }
            if case .event(let envelope, _)? = try watcher.receive(timeoutMilliseconds: 50), envelope.topic == topic {
                XCTAssertEqual(envelope.sender, client.hello.name, "the broker stamps the sender")
                return nil
            }
        }
        XCTFail("neither the event nor a refusal of \(topic) arrived")
        return "timeout"
    }

    func testOnlyANamespacesOwnerPublishesThere() throws {
        let watcher = try broker.connect(name: "ns-watcher", role: .tap, subscriptions: ["focuscoach.", "x."])
        let coach = try broker.connect(name: "coach", role: .generic, subscriptions: [])
        let other = try broker.connect(name: "other", role: .generic, subscriptions: [])
        defer { [watcher, coach, other].forEach { $0.close() } }
        XCTAssertNil(try outcome(of: "focuscoach.session.started", from: coach, watcher: watcher), "a declared namespace is its owner's")
        XCTAssertEqual(try outcome(of: "focuscoach.session.started", from: other, watcher: watcher), "foreign-namespace")
        XCTAssertNil(try outcome(of: "x.other.note", from: other, watcher: watcher), "x.<name>. is the client's own")
        XCTAssertEqual(try outcome(of: "x.coach.note", from: other, watcher: watcher), "foreign-namespace")
        XCTAssertEqual(try outcome(of: "weather.rain", from: other, watcher: watcher), "unknown-topic")
        XCTAssertEqual(try outcome(of: "activity.habit.completed", from: other, watcher: watcher), "reserved-topic")
    }

    /// A report builder under development, admitted by `clients:` to the role `report`: requests to the role reach
    /// it alone, and only its reply reaches the requester.
    func testRequestsToARoleReachItsHolderAloneAndOnlyItsReplyCounts() throws {
        XCTAssertThrowsError(try broker.connect(name: "not-reports", role: .report, subscriptions: []), "the grant names dev-reports only")
        let holder = try broker.connect(name: "dev-reports", role: .report, subscriptions: ["report."])
        let bystander = try broker.connect(name: "report-snoop", role: .generic, subscriptions: ["report."])
        let asker = try broker.connect(name: "asker-tool", role: .tool, subscriptions: [])
        defer { [holder, bystander, asker].forEach { $0.close() } }
        try asker.publish(Publish(topic: "report.daily.request", body: [:], corr: "ask-1"))
        let request = try XCTUnwrap(try collectEvents(from: holder) { $0.contains { $0.topic == "report.daily.request" } }.first { $0.topic == "report.daily.request" })
        XCTAssertEqual(request.sender, "asker-tool")
        try bystander.publish(Publish(topic: "report.daily.reply", body: ["ok": false], corr: "ask-1"))
        var refusal: String?
        try waitUntil("the snoop's reply to be refused") {
            if case .error(let report)? = try bystander.receive(timeoutMilliseconds: 50) { refusal = report.code }
            return refusal != nil
        }
        XCTAssertEqual(refusal, "reply-refused")
        try holder.publish(Publish(topic: "report.daily.reply", body: ["ok": true], corr: "ask-1"))
        let reply = try XCTUnwrap(try collectEvents(from: asker) { !$0.isEmpty }.first)
        XCTAssertEqual(reply.sender, "dev-reports")
        XCTAssertEqual(reply.bodyValue["ok"]?.boolValue, true)
        let snooped = try collectEvents(from: bystander, timeoutSeconds: 1) { $0.contains { $0.topic == "report.daily.reply" } }
        XCTAssertFalse(snooped.contains { $0.topic == "report.daily.request" }, "the request went to the role's holder only")
    }

    func testAClientWithoutTheCookieIsNotAdmitted() throws {
        let stranger = try BusConnection(endpoint: broker.runtime.brokerEndpoint(),
                                         hello: Hello(name: "stranger", role: .tap, subscriptions: [""], credential: String(repeating: "0", count: 64)))
        defer { stranger.close() }
        XCTAssertThrowsError(try stranger.connect(timeoutMilliseconds: 5000)) { error in
            guard case BusClientError.refused(let report) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(report.code, "not-admitted", report.message)
        }
        var info = stat()
        XCTAssertEqual(stat(broker.runtime.cookiePath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "only the owner reads the cookie")
    }

    func testStatusWithoutACredentialShowsNoPidsPathsOrErrors() throws {
        let context = try Context()
        let dealer = try Socket(context, .dealer)
        try dealer.setReceiveTimeout(milliseconds: 5000)
        try dealer.connect(broker.runtime.brokerEndpoint())
        func report(_ credential: String?) throws -> JSONValue? {
            try dealer.send(WireCodec.encode(.status(credential: credential)))
            guard case .status(let report)? = try dealer.receive().map(WireCodec.decodeBrokerMessage) else { return nil }
            return report
        }
        let anonymous = try XCTUnwrap(try report(nil))
        XCTAssertNil(anonymous["broker"]?["pid"])
        XCTAssertNil(anonymous["broker"]?["runtimeDir"])
        XCTAssertNil(anonymous["broker"]?["endpoint"])
        XCTAssertNotNil(anonymous["counters"]?["events"], "the harmless part stays")
        let full = try XCTUnwrap(try report(broker.runtime.cookie()))
        XCTAssertEqual(full["broker"]?["pid"]?.intValue, Int64(broker.process.processIdentifier))
    }
}
