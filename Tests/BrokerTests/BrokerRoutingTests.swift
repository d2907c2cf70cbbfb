import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Through the real broker process with real plugin processes (the bus-test-plugin fixture).
final class BrokerRoutingTests: XCTestCase {
    func pluginEntry(_ name: String, output: String, topic: String, count: Int, expected: Int, subscriptions: [String]) -> String {
        let args = [name, output, topic, String(count), String(expected)] + subscriptions
        return """
          - name: \(name)
            executable: \(BuildProducts.path("bus-test-plugin"))
            role: generic
            restart: never
            arguments: [\(args.map { "\"\($0)\"" }.joined(separator: ", "))]
            writable: ["\((output as NSString).deletingLastPathComponent)"]

        """
    }

    func testEveryEventArrivesOnceInSequenceOrderAtEveryMatchingSubscriber() throws {
        let work = TemporaryDirectory()
        let alphaOut = work.file("alpha.jsonl"), betaOut = work.file("beta.jsonl")
        // alpha hears both topics (its own 60 and beta's 60); beta hears only its own topic.
        let config = "name: routing\nplugins:\n"
            + pluginEntry("alpha", output: alphaOut, topic: "app.alpha", count: 60, expected: 120, subscriptions: ["app.alpha", "app.beta"])
            + pluginEntry("beta", output: betaOut, topic: "app.beta", count: 60, expected: 60, subscriptions: ["app.beta"])
        let journalPath = work.file("journal.jsonl")
        let broker = try BrokerProcess(configuration: config, arguments: ["--journal", journalPath])
        let tap = try broker.connect(name: "test-tap", subscriptions: ["app."])
        waitUntil("both plugins to connect") {
            let plugins = (try? broker.status())?["plugins"]?.arrayValue ?? []
            return plugins.filter { $0["connected"]?.boolValue == true && $0["supervised"]?.boolValue == true }.count == 2
        }
        try tap.publish(Publish(topic: "app.test.go", body: [:]))
        let seen = try collectEvents(from: tap) { $0.count >= 121 }
        XCTAssertEqual(seen.count, 121, "the tap sees the go signal and 120 events")

        waitUntil("both plugins to finish and exit") {
            let plugins = (try? broker.status())?["plugins"]?.arrayValue ?? []
            return plugins.filter { $0["state"]?.stringValue == "stopped" }.count == 2
        }
        let alpha = try readJournal(alphaOut), beta = try readJournal(betaOut)
        XCTAssertEqual(alpha.count, 120)
        XCTAssertEqual(beta.count, 60)
        for (name, events) in [("alpha", alpha), ("beta", beta)] {
            XCTAssertEqual(events.map(\.seq), events.map(\.seq).sorted(), "\(name) must receive in sequence order")
            XCTAssertEqual(Set(events.map(\.seq)).count, events.count, "\(name) must receive each event once")
        }
        XCTAssertTrue(beta.allSatisfy { $0.topic == "app.beta" }, "beta subscribed to app.beta only")
        let tapEvents = seen.filter { $0.topic != "app.test.go" }
        XCTAssertEqual(alpha.map(\.seq), tapEvents.map(\.seq), "alpha sees exactly what the tap sees")
        XCTAssertEqual(beta.map(\.seq), tapEvents.filter { $0.topic == "app.beta" }.map(\.seq))
        // Each publisher's own order is kept, and sources are stamped by the broker.
        let alphaNumbers = tapEvents.filter { $0.source == "alpha" }.compactMap { $0.bodyValue["n"]?.intValue }
        XCTAssertEqual(alphaNumbers, Array(1...60))
        XCTAssertEqual(broker.stop(), 0)
        // The journal holds every event of the run, with gap-free sequence numbers.
        let journal = try readJournal(journalPath)
        XCTAssertEqual(journal.map(\.seq), Array(1...UInt64(journal.count)))
        XCTAssertEqual(journal.filter { $0.topic.hasPrefix("app.") }.map(\.seq), seen.map(\.seq))
    }

    func testStopLeavesNoProcessesOrSocketFiles() throws {
        let work = TemporaryDirectory()
        let config = "name: stop\nplugins:\n" + pluginEntry("waiter", output: work.file("w.jsonl"), topic: "app.w", count: 0, expected: 1_000_000, subscriptions: [])
        let broker = try BrokerProcess(configuration: config)
        var pid: Int32 = 0
        waitUntil("the plugin to connect") {
            let plugin = (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == "waiter" }
            pid = Int32(plugin?["pid"]?.intValue ?? 0)
            return plugin?["connected"]?.boolValue == true
        }
        XCTAssertTrue(processExists(pid))
        XCTAssertEqual(broker.stop(signal: SIGINT), 0, broker.log())
        XCTAssertFalse(processExists(pid), "the plugin process must be gone")
        for leftover in [broker.runtime.busSocketPath, broker.runtime.endpointFilePath, broker.runtime.pidPath] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: leftover), "\(leftover) was left behind")
        }
    }

    func testSecondBrokerOnTheSameRuntimeDirectoryIsRefused() throws {
        let first = try BrokerProcess(configuration: "name: first\n")
        let second = Process()
        second.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        second.arguments = ["run", "--config", first.workDirectory.file("config.yml"), "--runtime-dir", first.runtime.path]
        let errors = Pipe()
        second.standardError = errors
        second.standardOutput = FileHandle.nullDevice
        try second.run()
        second.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertNotEqual(second.terminationStatus, 0)
        XCTAssertTrue(message.contains("a broker is already running on \(first.runtime.path)"), message)
        XCTAssertTrue(message.contains("pid \(first.process.processIdentifier)"), message)
        XCTAssertEqual(try first.status()["broker"]?["pid"]?.intValue, Int64(first.process.processIdentifier), "the first broker is undisturbed")
    }

    func testStaleSocketOfAKilledBrokerIsCleanedUp() throws {
        let first = try BrokerProcess(configuration: "name: stale\n")
        XCTAssertTrue(FileManager.default.fileExists(atPath: first.runtime.busSocketPath))
        first.stop(signal: SIGKILL)
        XCTAssertTrue(FileManager.default.fileExists(atPath: first.runtime.busSocketPath), "SIGKILL leaves the socket behind")
        let second = try BrokerProcess(configuration: "name: stale\n", runtimeDirectory: first.runtime.path)
        XCTAssertTrue(second.log().contains("removed a stale bus socket"), second.log())
        let tap = try BusConnection(endpoint: first.runtime.brokerEndpoint(), hello: Hello(name: "t", role: .tap, subscriptions: [""]))
        XCTAssertEqual(try tap.connect().name, "t")
        XCTAssertEqual(second.stop(), 0)
    }

    func testRuntimeDirectoryIsPrivate() throws {
        let broker = try BrokerProcess(configuration: "name: private\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: broker.runtime.path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o700)
    }

    func readJournal(_ path: String) throws -> [Envelope] {
        try JournalLines.read(path)
    }
}
