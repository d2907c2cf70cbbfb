import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// The bus tools as a person runs them: `tap`, `send`, `replay` and `status` against a real broker.
final class CommandLineToolTests: XCTestCase {
    func shieldbus(_ arguments: [String], runtime: RuntimeDirectory) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        process.arguments = arguments + ["--runtime-dir", runtime.path]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    func testTapSeesWhatSendInjectsAndReplayPlaysARecordedJournal() throws {
        let broker = try BrokerProcess(configuration: "name: tools\n")
        let work = TemporaryDirectory()
        let journal = work.file("recorded.jsonl")
        // A tap in the background, recording; it stops by itself after 2 events (--count).
        let tap = Process()
        tap.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        tap.arguments = ["tap", "--json", "--count", "2", "--record", journal, "--runtime-dir", broker.runtime.path, "app."]
        let tapOutput = Pipe()
        tap.standardOutput = tapOutput
        try tap.run()
        waitUntil("the tap to connect") {
            ((try? broker.status())?["plugins"]?.arrayValue ?? []).contains { $0["role"]?.stringValue == "tap" }
        }
        let sent = try shieldbus(["send", "app.greeting", #"{"hello": "world"}"#], runtime: broker.runtime)
        XCTAssertEqual(sent.status, 0, sent.errors)
        XCTAssertTrue(sent.output.hasPrefix("sent app.greeting as #"), sent.output)
        // Its bus time read out on the device's clock, not as epoch milliseconds.
        XCTAssertNotNil(sent.output.range(of: #"^sent app\.greeting as #\d+ at \S.* \d{2}:\d{2}:\d{2}(\.\d+)? \(bus time\)\n$"#, options: .regularExpression), sent.output)
        XCTAssertNil(sent.output.range(of: #"\d{12}"#, options: .regularExpression), sent.output)
        XCTAssertEqual(try shieldbus(["send", "app.greeting", #"{"n": 2}"#], runtime: broker.runtime).status, 0)
        let lines = String(decoding: tapOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        tap.waitUntilExit()
        XCTAssertEqual(tap.terminationStatus, 0)
        XCTAssertEqual(lines.count, 2, "tap --count 2 prints two events")
        let first = try WireCodec.decodeEnvelope(Array(lines[0].utf8))
        XCTAssertEqual(first.topic, "app.greeting")
        XCTAssertEqual(first.bodyValue["hello"]?.stringValue, "world")
        XCTAssertEqual(try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n").count, 2, "--record wrote the journal")

        // Replay onto the running broker: the same topics and bodies come back with new sequence numbers.
        let watcher = try broker.connect(name: "watcher", subscriptions: ["app.greeting"])
        let replayed = try shieldbus(["replay", journal], runtime: broker.runtime)
        XCTAssertEqual(replayed.status, 0, replayed.errors)
        XCTAssertTrue(replayed.output.contains("replayed 2 of 2 events"), replayed.output)
        let events = try collectEvents(from: watcher) { $0.count >= 2 }
        XCTAssertEqual(events.map { $0.bodyValue }, [["hello": "world"], ["n": 2]])
        XCTAssertTrue(events.allSatisfy { $0.seq > first.seq })
    }

    /// `tap --from`: the events the broker journaled from a seq (or a span back from now) through the tap's welcome,
    /// each once, then the live ones; without a journal, or with a start it cannot read, it says so.
    func testTapFromTheJournalShowsTheHistoryThenFollowsLive() throws {
        let work = TemporaryDirectory()
        let broker = try BrokerProcess(configuration: "name: tools\n", arguments: ["--journal", work.file("bus.jsonl")])
        defer { broker.stop() }
        var seqs: [UInt64] = []
        for n in 1...3 {
            let sent = try shieldbus(["send", "app.history", "{\"n\": \(n)}"], runtime: broker.runtime)
            XCTAssertEqual(sent.status, 0, sent.errors)
            seqs.append(try XCTUnwrap(sent.output.firstMatch(of: #/as #(\d+)/#).flatMap { UInt64($0.1) }, sent.output))
        }
        func tap(_ arguments: [String]) throws -> (Process, Pipe) {
            let tap = Process()
            tap.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
            tap.arguments = ["tap", "--json"] + arguments + ["app.history", "--runtime-dir", broker.runtime.path]
            let output = Pipe()
            tap.standardOutput = output
            try tap.run()
            return (tap, output)
        }
        // From the second: it and the third from the journal, then a fourth sent once the tap is connected.
        let (fromSecond, output) = try tap(["--from", String(seqs[1]), "--count", "3"])
        waitUntil("the tap to connect") { ((try? broker.status())?["plugins"]?.arrayValue ?? []).contains { $0["role"]?.stringValue == "tap" } }
        XCTAssertEqual(try shieldbus(["send", "app.history", #"{"n": 4}"#], runtime: broker.runtime).status, 0)
        let events = try JournalLines.decode(output.fileHandleForReading.readDataToEndOfFile())
        fromSecond.waitUntilExit()
        XCTAssertEqual(fromSecond.terminationStatus, 0)
        XCTAssertEqual(events.map { $0.bodyValue["n"]?.intValue }, [2, 3, 4])
        // A span back from now: everything sent in the last hour, from the journal alone.
        let (lastHour, recent) = try tap(["--from", "-1h", "--count", "4"])
        let all = try JournalLines.decode(recent.fileHandleForReading.readDataToEndOfFile())
        lastHour.waitUntilExit()
        XCTAssertEqual(all.map { $0.bodyValue["n"]?.intValue }, [1, 2, 3, 4])

        let bad = try shieldbus(["tap", "--from", "yesterday-ish"], runtime: broker.runtime)
        XCTAssertEqual(bad.status, 64, bad.errors)
        XCTAssertTrue(bad.errors.contains("--from is a seq (120), a span back from now (-10m, -2h) or a local date-time"), bad.errors)
        let unjournaled = try BrokerProcess(configuration: "name: tools\n")
        defer { unjournaled.stop() }
        let none = try shieldbus(["tap", "--from", "1", "--count", "1"], runtime: unjournaled.runtime)
        XCTAssertEqual(none.status, 1, none.errors)
        XCTAssertTrue(none.errors.contains("this broker writes none"), none.errors)
    }

    /// What a client sends cannot act on the person's terminal: tap's text and JSON escape control characters
    /// (ESC, the 8-bit CSI, BEL) and invisible ones (zero-width, bidirectional overrides).
    func testTapEscapesWhatWouldActOnTheTerminal() throws {
        let broker = try BrokerProcess(configuration: "name: tools\n")
        let hostile = "\u{1B}]0;owned\u{7}\u{1B}[2J\u{9B}31m\u{200B}\u{202E}"
        for json in [false, true] {
            let tap = Process()
            tap.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
            tap.arguments = ["tap", "--count", "1", "--runtime-dir", broker.runtime.path, "app.hostile"] + (json ? ["--json"] : [])
            let output = Pipe()
            tap.standardOutput = output
            try tap.run()
            waitUntil("the tap to connect") {
                ((try? broker.status())?["plugins"]?.arrayValue ?? []).contains { $0["role"]?.stringValue == "tap" }
            }
            let sender = try broker.connect(name: "hostile-\(json)", role: .generic, subscriptions: [])
            try sender.publish(Publish(topic: "app.hostile", body: ["text": .string(hostile)], corr: hostile))
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            tap.waitUntilExit()
            sender.close()
            XCTAssertFalse(printed.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B || $0.value == 0x200B || $0.value == 0x202E },
                           "nothing raw reaches the terminal: \(printed.debugDescription)")
            XCTAssertTrue(printed.contains("owned"), printed)
            if json {
                let envelope = try WireCodec.decodeEnvelope(Array(printed.trimmingCharacters(in: .newlines).utf8))
                XCTAssertEqual(envelope.bodyValue["text"]?.stringValue, hostile, "escaped JSON still means the same")
            }
        }
    }

    func testSendRefusesWhatTheBrokerWouldRefuse() throws {
        let broker = try BrokerProcess(configuration: "name: tools\n")
        let reserved = try shieldbus(["send", "clock.tick", "{}"], runtime: broker.runtime)
        XCTAssertNotEqual(reserved.status, 0)
        XCTAssertTrue(reserved.errors.contains("only the system produces"), reserved.errors)
        let notJSON = try shieldbus(["send", "app.x", "{oops"], runtime: broker.runtime)
        XCTAssertNotEqual(notJSON.status, 0)
        XCTAssertTrue(notJSON.errors.contains("not JSON"), notJSON.errors)
    }

    func testStatusPrintsATableAndJSON() throws {
        let broker = try BrokerProcess(configuration: "name: tools\n")
        let table = try shieldbus(["status"], runtime: broker.runtime)
        XCTAssertEqual(table.status, 0, table.errors)
        XCTAssertTrue(table.output.contains("PLUGIN"), table.output)
        let json = try shieldbus(["status", "--json"], runtime: broker.runtime)
        XCTAssertEqual(try JSONValue(parsing: json.output.trimmingCharacters(in: .whitespacesAndNewlines))["broker"]?["pid"]?.intValue,
                       Int64(broker.process.processIdentifier))
    }

    /// A reference plugin started by hand, outside a broker, says so and what to do — not "plugin this plugin".
    func testAPluginStartedOutsideABrokerSaysSo() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("activity-monitor"))
        process.environment = ["PATH": "/usr/bin:/bin"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertNotEqual(process.terminationStatus, 0)
        XCTAssertTrue(text.contains("started outside `shieldbus run`"), text)
        XCTAssertTrue(text.contains("plugins:"), text)
        XCTAssertFalse(text.contains("plugin this plugin"), text)
    }

    /// Each tool says at once that no broker runs there, names the folder and how to start or find one — not a
    /// wait that never happened ("no broker answered … within 0 ms").
    func testToolsSayClearlyWhenNoBrokerRuns() throws {
        let empty = RuntimeDirectory(path: TemporaryDirectory().path)
        for tool in [["status"], ["status", "--json"], ["tap"], ["send", "app.x", "{}"]] {
            let result = try shieldbus(tool, runtime: empty)
            XCTAssertNotEqual(result.status, 0, "\(tool)")
            XCTAssertTrue(result.errors.contains("no broker is running on \(empty.path)"), "\(tool): \(result.errors)")
            XCTAssertTrue(result.errors.contains("shieldbus run"), "\(tool): \(result.errors)")
            XCTAssertFalse(result.errors.contains("within 0 ms"), "\(tool): \(result.errors)")
        }
    }
}
