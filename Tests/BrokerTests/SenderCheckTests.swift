import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest
import ZeroMQ

/// The SDK acts on an event only the system produces only when the system sent it — even from a broker that
/// delivers a forgery (the real broker refuses them; this stands in for a faulty one with a raw ROUTER socket).
final class SenderCheckTests: XCTestCase {
    func testTheSDKIgnoresASystemEventFromAnyoneButTheSystem() throws {
        let work = TemporaryDirectory(prefix: "sbsender")
        let endpoint = "ipc://\(work.path)/fake.sock"
        let context = try Context()
        let router = try Socket(context, .router)
        try router.setReceiveTimeout(milliseconds: 200)
        try router.bind(endpoint)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("fixture-supervised"))
        var environment = ProcessInfo.processInfo.environment
        environment["SHIELDBUS_ENDPOINT"] = endpoint
        environment["SHIELDBUS_PLUGIN_NAME"] = "sup"
        environment["SHIELDBUS_CREDENTIAL"] = "test"
        environment["SHIELDBUS_SUPERVISED"] = nil
        environment["SHIELDBUS_APP_GROUP"] = nil
        process.environment = environment
        try process.run()
        defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }

        /// Messages from the plugin: (identity, message), until `done` says so or the deadline passes.
        var identity: [UInt8] = []
        var published: [Publish] = []
        var acknowledged: UInt64 = 0
        func pump(until done: () -> Bool) throws {
            let deadline = Date().addingTimeInterval(10)
            while !done() && Date() < deadline {
                guard let frames = try router.receive() else { continue }
                identity = frames[0]
                switch try WireCodec.decodeClientMessage(frames[1...]) {
                case .hello(let hello):
                    XCTAssertEqual(hello.credential, "test", "the SDK presents its launch credential")
                    let welcome = Welcome(name: hello.name, time: 1_000, seq: 0, clock: "real", heartbeatMilliseconds: 1000, settings: ["ready": true])
                    try router.send([identity] + WireCodec.encode(.welcome(welcome)))
                case .publish(let publish): published.append(publish)
                case .ack(let seq): acknowledged = max(acknowledged, seq)
                default: break
                }
            }
        }
        try pump { !identity.isEmpty }
        XCTAssertFalse(identity.isEmpty, "the plugin said hello")
        func deliver(seq: UInt64, source: String) throws {
            let envelope = Envelope(seq: seq, time: 2_000, topic: "activity.habit.completed", source: source, body: Array(#"{"habit":"run"}"#.utf8))
            try router.send([identity] + WireCodec.encode(.event(envelope, delivery: seq)))
        }
        try deliver(seq: 1, source: "forger")
        try pump { acknowledged >= 1 }
        XCTAssertEqual(acknowledged, 1, "the forgery is acknowledged (handled: dropped)")
        try deliver(seq: 2, source: "broker")
        try pump { acknowledged >= 2 }
        let habits = published.filter { $0.topic == "app.sup.habit" }
        XCTAssertEqual(habits.map { (try? JSONValue(parsing: $0.body))?["sender"]?.stringValue }, ["broker"],
                       "only the system's event reached the plugin: \(published.map(\.topic))")
    }
}
