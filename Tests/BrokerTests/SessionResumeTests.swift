import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// A hello with `resume` on the connection that opened a session with the same hello: the session goes on
/// (`welcome.resumed`), answered at most once a heartbeat; any other hello on it opens a new session.
final class SessionResumeTests: XCTestCase {
    func testAResumeGoesOnWithTheSessionOnceAHeartbeatAndAChangedHelloOpensANewOne() throws {
        let broker = try BrokerProcess(configuration: "name: resume\nbus: {heartbeatMs: 5000, sessionTimeoutMs: 20000}\n")
        defer { broker.stop() }
        let context = try Context()
        let cookie = try XCTUnwrap(broker.runtime.cookie())
        let socket = try Socket(context, .dealer)
        defer { socket.close() }
        try socket.setReceiveTimeout(milliseconds: 5000)
        try socket.connect(broker.runtime.brokerEndpoint())
        func send(_ message: ClientMessage) throws { _ = try socket.send(WireCodec.encode(message)) }
        /// The next message that is not a heartbeat.
        func next() throws -> BrokerMessage? {
            while let frames = try socket.receive() {
                let message = try WireCodec.decodeBrokerMessage(frames)
                if case .heartbeat = message { continue }
                return message
            }
            return nil
        }
        let hello = Hello(name: "watcher", role: .tap, subscriptions: ["app."], credential: cookie)
        var resume = hello
        resume.resume = true

        try send(.hello(hello))
        guard case .welcome(let opened)? = try next() else { return XCTFail("no welcome for the first hello") }
        XCTAssertFalse(opened.resumed)

        try send(.hello(resume))
        guard case .welcome(let resumed)? = try next() else { return XCTFail("no welcome for the resume") }
        XCTAssertTrue(resumed.resumed, "the session it opened goes on")

        // A second resume within the heartbeat gets no welcome: the status asked after it is the next answer.
        try send(.hello(resume))
        try send(.status(credential: cookie))
        guard case .status(let report)? = try next() else { return XCTFail("a second welcome within a heartbeat") }
        let sessions = (report["plugins"]?.arrayValue ?? []) + (report["clients"]?.arrayValue ?? [])
        XCTAssertEqual(sessions.filter { $0["name"]?.stringValue == "watcher" }.count, 1, "one session, still: \(report.jsonText)")

        // A resume whose hello differs from the one that opened the session is a new hello: a new session.
        var changed = resume
        changed.subscriptions = ["app.", "shield."]
        try send(.hello(changed))
        guard case .welcome(let renewed)? = try next() else { return XCTFail("no welcome for the changed hello") }
        XCTAssertFalse(renewed.resumed, "a changed hello is not the session's")
    }
}
