import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import SQLite
import XCTest
import ZeroMQ

/// How a synchronous call made while handling an event can end, one by one, and what the SDK does with the event:
/// a call that lost its broker — a `bye`, a new session, the process asked to stop — leaves it unrecorded and
/// unacknowledged, so it is handled again from the start; a reply, or a timeout with the broker still there,
/// completes it. The plugin is the real fixture with a handled record (supervised, with a state folder); the
/// broker is a stand-in on a raw ROUTER socket, so that each ending is staged exactly.
final class InterruptedCallTests: XCTestCase {
    /// A broker's side of one plugin connection: it welcomes every hello and keeps what the plugin sends.
    final class StandInBroker {
        let context: Context
        let router: Socket
        var identity: [UInt8] = []
        var received: [ClientMessage] = []
        var hellos = 0
        private var nextDelivery: UInt64 = 1
        private var seq: UInt64 = 0
        /// What its welcomes say: the bus clock's mode, and the heartbeat interval (long by default: the plugin says
        /// nothing on its own while a test stages a call's end).
        private let clock: String
        private let heartbeatMilliseconds: Int64

        init(endpoint: String, clock: String = "real", heartbeatMilliseconds: Int64 = 10_000) throws {
            (self.clock, self.heartbeatMilliseconds) = (clock, heartbeatMilliseconds)
            context = try Context()
            router = try Socket(context, .router)
            try router.setReceiveTimeout(milliseconds: 50)
            try router.bind(endpoint)
        }

        func send(_ message: BrokerMessage) throws {
            try router.send([identity] + WireCodec.encode(message))
        }

        /// Delivers an event in the current session.
        func deliver(seq: UInt64, topic: String, body: JSONValue = [:], corr: String? = nil) throws {
            let envelope = Envelope(seq: seq, time: 2_000 + Int64(seq), topic: topic, source: "tool", corr: corr, body: body.jsonBytes)
            try send(.event(envelope, delivery: nextDelivery))
            nextDelivery += 1
        }

        /// Reads the plugin's messages until `done` holds; false after 10 s.
        @discardableResult
        func pump(until what: String, file: StaticString = #filePath, line: UInt = #line, _ done: () -> Bool) throws -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while !done() {
                guard Date() < deadline else {
                    XCTFail("timed out waiting for \(what); received: \(received.map(describe))", file: file, line: line)
                    return false
                }
                guard let frames = try router.receive() else { continue }
                identity = frames[0]
                let message = try WireCodec.decodeClientMessage(frames[1...])
                received.append(message)
                if case .hello(let hello) = message {
                    hellos += 1
                    // A hello that asks to resume (the plugin heard nothing for three intervals) goes on in its session.
                    if !hello.resume { nextDelivery = 1 }  // a new session counts deliveries from 1
                    let welcome = Welcome(name: hello.name, time: 1_000, seq: 0, clock: clock, heartbeatMilliseconds: heartbeatMilliseconds,
                                          settings: ["ready": true], resumed: hello.resume)
                    try send(.welcome(welcome))
                }
            }
            return true
        }

        /// The events the plugin published, as "topic n" (in order).
        var publications: [String] {
            received.compactMap { message in
                guard case .publish(let publish) = message, !publish.topic.hasSuffix(".request") else { return nil }
                return "\(publish.topic) \((try? JSONValue(parsing: publish.body))?["n"]?.jsonText ?? "-")"
            }
        }

        /// The requests the plugin made, in order.
        var requests: [Publish] {
            received.compactMap { message in
                guard case .publish(let publish) = message, publish.topic.hasSuffix(".request") else { return nil }
                return publish
            }
        }

        var acknowledgements: [UInt64] {
            received.compactMap { message in
                guard case .ack(let seq) = message else { return nil }
                return seq
            }
        }

        func describe(_ message: ClientMessage) -> String {
            switch message {
            case .publish(let publish): return "publish \(publish.topic)"
            case .ack(let seq): return "ack \(seq)"
            default: return "\(message)".prefix(30).description
            }
        }
    }

    /// The fixture as the broker starts it — supervised, with a state folder, so it keeps a handled record.
    func startPlugin(endpoint: String, state: String, arguments: [String] = [], brokerPid: Int32? = nil, log: String? = nil) throws -> Process {
        let process = Process()
        if let log {
            FileManager.default.createFile(atPath: log, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: log)
        }
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("fixture-supervised"))
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SHIELDBUS_ENDPOINT"] = endpoint
        environment["SHIELDBUS_PLUGIN_NAME"] = "sup"
        environment["SHIELDBUS_CREDENTIAL"] = "test"
        environment["SHIELDBUS_SUPERVISED"] = "1"
        environment["SHIELDBUS_STATE_DIR"] = state
        environment["SHIELDBUS_APP_GROUP"] = nil
        environment["SHIELDBUS_EPHEMERAL"] = nil
        environment["SHIELDBUS_BROKER_PID"] = brokerPid.map(String.init)
        environment["SHIELDBUS_LOG_LEVEL"] = "info"  // the lines some cases read are notices
        process.environment = environment
        try process.run()
        return process
    }

    /// Whether the plugin recorded `seq` as handled.
    func recorded(_ seq: UInt64, state: String) throws -> Bool {
        // Read-write: a read-only connection cannot open a WAL database whose writer has ended (no -shm file left).
        let cursors = try SQLiteConnection(path: StatePaths.handledEventsRecord("sup", in: state), flags: [.readWrite])
        return try cursors.prepare("SELECT 1 FROM handled WHERE seq = ?", bindings: [.integer(Int64(seq))]).step()
    }

    /// Says hello to the plugin as a restarted broker does: its next message is refused with `hello-required`.
    func forget(_ broker: StandInBroker) throws {
        try broker.send(.error(ErrorReport(.helloRequired(kind: "heartbeat"))))
    }

    /// Starts the plugin, delivers `app.sup.ask` (seq 5) and waits for its call; `interrupt` ends the call its way.
    /// Then, in a new session, the event comes again (with seq 6, a ping delivered during the call, behind it) and
    /// the call is answered: what the plugin sent over the whole story is returned for the case to check.
    func askThenInterrupt(_ interrupt: (StandInBroker, Process) throws -> Void, file: StaticString = #filePath, line: UInt = #line) throws -> (broker: StandInBroker, state: String, work: TemporaryDirectory) {
        let work = TemporaryDirectory(prefix: "sbcall")
        let endpoint = "ipc://\(work.path)/broker.sock"
        let broker = try StandInBroker(endpoint: endpoint)
        let plugin = try startPlugin(endpoint: endpoint, state: work.file("state"))
        addTeardownBlock { if plugin.isRunning { plugin.terminate(); plugin.waitUntilExit() } }
        try broker.pump(until: "the hello", file: file, line: line) { broker.hellos == 1 }
        try broker.deliver(seq: 5, topic: "app.sup.ask", body: ["n": 1])
        try broker.pump(until: "the call", file: file, line: line) { broker.requests.count == 1 }
        try broker.deliver(seq: 6, topic: "app.sup.ping", body: ["n": 2])  // kept by the SDK while the call waits
        try interrupt(broker, plugin)
        return (broker, work.file("state"), work)
    }

    /// What a handling the call's end left unhandled gets in the new session: the event again, then the ping,
    /// each handled once, in order, and acknowledged.
    func handleAgainInANewSession(_ broker: StandInBroker, state: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertFalse(try recorded(5, state: state), "the event whose call was cut off is not recorded as handled", file: file, line: line)
        XCTAssertEqual(broker.acknowledgements, [], "nor acknowledged", file: file, line: line)
        let before = broker.received.count
        try broker.deliver(seq: 5, topic: "app.sup.ask", body: ["n": 1])
        try broker.deliver(seq: 6, topic: "app.sup.ping", body: ["n": 2])
        guard try broker.pump(until: "the call made again", file: file, line: line, { broker.requests.count == 2 }) else { return }
        let call = broker.requests[1]
        try broker.deliver(seq: 7, topic: "x.sup.question.reply", body: ["yes": true], corr: call.corr)
        try broker.pump(until: "the acknowledgements", file: file, line: line) { broker.acknowledgements.last == 6 }
        XCTAssertEqual(Array(broker.received[before...]).compactMap { message -> String? in
            if case .ack(let seq) = message { return "ack \(seq)" }
            if case .publish(let publish) = message, !publish.topic.hasSuffix(".request") { return publish.topic }
            return nil
        }, ["app.sup.asking", "app.sup.answered", "ack 5", "app.sup.pong", "ack 6"],
        "the event handled again from the start, then the ping once — the copy kept from the old session was dropped", file: file, line: line)
        XCTAssertTrue(try recorded(5, state: state), file: file, line: line)
        let causes = broker.received.compactMap { message -> String? in
            guard case .publish(let publish) = message, publish.topic == "app.sup.asking", let cause = publish.cause else { return nil }
            return "\(cause.seq)/\(cause.index)"
        }
        XCTAssertEqual(causes, ["5/0", "5/0"], "published again with the same cause, which the broker drops as a copy", file: file, line: line)
        XCTAssertFalse(broker.publications.contains { $0.hasPrefix("app.sup.call-failed") }, "nothing of the cut-off handling reached the bus: \(broker.publications)", file: file, line: line)
    }

    /// A plugin whose broker died before the plugin asked to die with it gets no death signal; its parent is then
    /// another process — init, or a subreaper that is not pid 1 (a container's init, a test harness). It sees that its
    /// parent is not the broker that started it and stops, instead of waiting for that broker for ever.
    func testAPluginWhoseBrokerDiedBeforeItStartedStopsAtOnce() throws {
        let work = TemporaryDirectory(prefix: "sbgone")
        let endpoint = "ipc://\(work.path)/broker.sock"
        let broker = try StandInBroker(endpoint: endpoint)
        // The test process is the plugin's parent: any other pid is a broker that is gone.
        let log = work.file("orphan.log")
        let orphan = try startPlugin(endpoint: endpoint, state: work.file("state"), brokerPid: getpid() == 2 ? 3 : 2, log: log)
        addTeardownBlock { if orphan.isRunning { orphan.terminate(); orphan.waitUntilExit() } }
        // Within less than its 10 s wait for a broker: it does not wait at all.
        waitUntil("the plugin to stop", timeoutSeconds: 5) { !orphan.isRunning }
        XCTAssertFalse(orphan.isRunning)
        if !orphan.isRunning {
            XCTAssertEqual(orphan.terminationStatus, 0, "it stops, it does not fail")
            let said = try String(contentsOfFile: log, encoding: .utf8)
            XCTAssertTrue(said.contains("the broker that started this process is gone"), "the reason, not a signal's: \(said)")
        }

        // Started by its parent, the same plugin stays and says hello.
        let plugin = try startPlugin(endpoint: endpoint, state: work.file("state"), brokerPid: getpid())
        addTeardownBlock { if plugin.isRunning { plugin.terminate(); plugin.waitUntilExit() } }
        try broker.pump(until: "the hello") { broker.hellos == 1 }
        XCTAssertEqual(broker.hellos, 1, "only the plugin whose parent is its broker said hello")
    }

    /// A plugin asked to stop (SIGTERM, as its broker does when it stops) while it waits for the broker's welcome stops
    /// then, cleanly, saying why — it does not wait out its 10-second connect and then fail as if no broker answered.
    func testAPluginAskedToStopBeforeItsWelcomeStopsThenAndSaysWhy() throws {
        let work = TemporaryDirectory(prefix: "sbnowelcome")
        let endpoint = "ipc://\(work.path)/broker.sock"
        // A broker that hears the hello and never answers it: the stand-in's socket, read without its welcomes.
        let router = try StandInBroker(endpoint: endpoint).router
        let log = work.file("sup.log")
        let plugin = try startPlugin(endpoint: endpoint, state: work.file("state"), brokerPid: getpid(), log: log)
        addTeardownBlock { if plugin.isRunning { plugin.terminate(); plugin.waitUntilExit() } }
        var hello: Hello?
        XCTAssertTrue(try waitUntil("the plugin's hello") {
            guard let frames = try router.receive(), case .hello(let said) = try WireCodec.decodeClientMessage(frames[1...]) else { return false }
            hello = said
            return true
        })
        XCTAssertEqual(hello?.name, "sup")
        plugin.terminate()
        plugin.waitUntilExit()
        let said = try String(contentsOfFile: log, encoding: .utf8)
        XCTAssertEqual(plugin.terminationReason, .exit)
        XCTAssertEqual(plugin.terminationStatus, 0, "a stop, not a failure to reach the broker: \(said)")
        XCTAssertTrue(said.contains("asked to stop while waiting for the broker's welcome"), said)
        XCTAssertFalse(said.contains("no broker answered"), said)
    }

    func testACallTheBrokerLeftLeavesTheEventToBeHandledAgain() throws {
        let (broker, state, work) = try askThenInterrupt { broker, _ in
            try broker.send(.bye(reason: "broker stopping"))
            try forget(broker)  // the restarted broker
            try broker.pump(until: "the hello to the restarted broker") { broker.hellos == 2 }
        }
        try handleAgainInANewSession(broker, state: state)
        withExtendedLifetime(work) {}
    }

    func testACallWhoseSessionEndedLeavesTheEventToBeHandledAgain() throws {
        let (broker, state, work) = try askThenInterrupt { broker, _ in
            try forget(broker)
            try broker.pump(until: "the hello of a new session") { broker.hellos == 2 }
        }
        try handleAgainInANewSession(broker, state: state)
        withExtendedLifetime(work) {}
    }

    /// SIGTERM while the call waits (a supervised plugin gets it when its broker dies): the process ends soon, as
    /// asked, leaving the event unrecorded and unacknowledged for its next process.
    func testACallInterruptedByAStopRequestLeavesTheEventToTheNextProcess() throws {
        let (broker, state, work) = try askThenInterrupt { broker, plugin in
            plugin.terminate()
            waitUntil("the plugin to end") { !plugin.isRunning }
            try broker.pump(until: "its goodbye") { broker.received.contains(.bye) }
            XCTAssertEqual(plugin.terminationStatus, 0)
        }
        XCTAssertFalse(try recorded(5, state: state), "the event is not recorded as handled")
        XCTAssertEqual(broker.acknowledgements, [], "nor acknowledged")
        XCTAssertEqual(broker.publications, ["app.sup.asking 1"], "nothing after the call was published")
        withExtendedLifetime(work) {}
    }

    /// In virtual time the broker's own silence (it did not run: stopped, or starved of CPU) does not count against a
    /// call: past the call's timeout and three heartbeat intervals of silence the plugin asks to resume its session, the
    /// broker wakes and answers, and the event completes in the same session — given up on, the session would be
    /// renewed and the plugin's return journaled by the machine's load.
    func testInVirtualTimeACallWaitsThroughTheBrokersSilence() throws {
        try askThroughTheBrokersSilence("app.sup.ask", callTimeout: 200, resumes: 1)
    }

    /// The same for a call from another thread (a `Task`), which the plugin's thread makes for it: in virtual time its
    /// caller waits for the call the plugin's thread has begun, past the call's timeout, as the call itself does.
    /// Silent for two resumes (about 600 ms): past the 300 ms its caller's thread waits for a call not yet begun.
    func testInVirtualTimeACallFromATaskWaitsThroughTheBrokersSilence() throws {
        try askThroughTheBrokersSilence("app.sup.ask-from-task", callTimeout: 300, resumes: 2)
    }

    /// Delivers `topic` to the plugin under a virtual clock, and says nothing through its call until it asked to
    /// resume its session `resumes` times; then answers: the call must be answered in the same session.
    func askThroughTheBrokersSilence(_ topic: String, callTimeout: Int, resumes: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let work = TemporaryDirectory(prefix: "sbcallsilence")
        let endpoint = "ipc://\(work.path)/broker.sock"
        let broker = try StandInBroker(endpoint: endpoint, clock: "virtual", heartbeatMilliseconds: 100)
        let plugin = try startPlugin(endpoint: endpoint, state: work.file("state"), arguments: ["--call-timeout-ms", "\(callTimeout)"])
        defer { if plugin.isRunning { plugin.terminate(); plugin.waitUntilExit() } }
        try broker.pump(until: "the hello", file: file, line: line) { broker.hellos == 1 }
        try broker.deliver(seq: 5, topic: topic, body: ["n": 1])
        try broker.pump(until: "the call", file: file, line: line) { broker.requests.count == 1 }
        // The stand-in sends nothing: silent past the call's timeout, the plugin asks to resume after three intervals.
        try broker.pump(until: "hellos to resume", file: file, line: line) { broker.hellos == 1 + resumes }
        let hellos = broker.received.compactMap { message -> Bool? in
            guard case .hello(let hello) = message else { return nil }
            return hello.resume
        }
        XCTAssertEqual(hellos, [false] + Array(repeating: true, count: resumes), "the session is resumed, not renewed", file: file, line: line)
        try broker.deliver(seq: 6, topic: "x.sup.question.reply", body: ["yes": true], corr: broker.requests[0].corr)
        // What a `Task` publishes goes out from the plugin's thread, perhaps after the handler's acknowledgement.
        try broker.pump(until: "the answer and the acknowledgement", file: file, line: line) { broker.publications.count == 2 && broker.acknowledgements == [5] }
        XCTAssertEqual(broker.publications, ["app.sup.asking 1", "app.sup.answered 1"], "the call was answered, in the same session", file: file, line: line)
        XCTAssertEqual(broker.requests.count, 1, "asked once", file: file, line: line)
        XCTAssertTrue(try recorded(5, state: work.file("state")), file: file, line: line)
    }

    /// A timeout with the broker still there completes the event: the handler was told and acted on it (here: it
    /// says so), the event is recorded and acknowledged — as before.
    func testACallThatTimesOutWithTheBrokerThereCompletesTheEvent() throws {
        let work = TemporaryDirectory(prefix: "sbcalltimeout")
        let endpoint = "ipc://\(work.path)/broker.sock"
        let broker = try StandInBroker(endpoint: endpoint)
        let plugin = try startPlugin(endpoint: endpoint, state: work.file("state"), arguments: ["--call-timeout-ms", "200"])
        defer { if plugin.isRunning { plugin.terminate(); plugin.waitUntilExit() } }
        try broker.pump(until: "the hello") { broker.hellos == 1 }
        try broker.deliver(seq: 5, topic: "app.sup.ask", body: ["n": 1])
        try broker.pump(until: "the acknowledgement") { broker.acknowledgements == [5] }
        XCTAssertEqual(broker.publications, ["app.sup.asking 1", "app.sup.call-failed 1"])
        XCTAssertTrue(try recorded(5, state: work.file("state")))
    }
}
