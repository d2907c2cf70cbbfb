import BusProtocol
import BusTools
import Foundation
import ShieldBusTestSupport
import XCTest

/// `shieldbus tap`'s filters (prefixes and globs to show, patterns to hide, senders), and `tap` and `send` as a person runs them.
final class TapFilterTests: XCTestCase {
    func envelope(_ topic: String, from source: String = "broker") -> Envelope {
        Envelope(seq: 1, time: 0, topic: topic, source: source, body: Array("{}".utf8))
    }

    func testPrefixesGlobsExcludesAndSenders() {
        let filter = TapFilter(include: ["shield.", "deviceactivity.*.reply"], exclude: ["shield.configuration.*"], sources: ["broker", "monitor"])
        XCTAssertEqual(filter.subscriptions, ["deviceactivity.", "shield."], "the broker is asked for each pattern's literal start")
        XCTAssertTrue(filter.shows(envelope("shield.shown")))
        XCTAssertFalse(filter.shows(envelope("shield.configuration.request")), "excluded by a glob")
        XCTAssertTrue(filter.shows(envelope("deviceactivity.start-monitoring.reply")))
        XCTAssertFalse(filter.shows(envelope("deviceactivity.start-monitoring.request")), "a glob matches the whole topic")
        XCTAssertFalse(filter.shows(envelope("shield.shown", from: "app")), "not a chosen sender")
        XCTAssertFalse(filter.shows(envelope("state.changed")))

        let everything = TapFilter(exclude: ["state.changed"])
        XCTAssertEqual(everything.subscriptions, [""])
        XCTAssertTrue(everything.shows(envelope("clock.tick")))
        XCTAssertFalse(everything.shows(envelope("state.changed")))
        XCTAssertTrue(TapFilter(include: ["*.reply"]).shows(envelope("a.b.reply")))
        XCTAssertFalse(TapFilter(include: ["a*b*c"]).shows(envelope("aXbY")))
        XCTAssertTrue(TapFilter(include: ["a*b*c"]).shows(envelope("aXbYc")))
    }
}

/// What a tap says when it follows a broker again: which numbers were never sent, and which events went by.
final class TapReconnectionTests: XCTestCase {
    func welcome(seq: UInt64, firstSeq: UInt64?, time: BusTime = 2_000) -> Welcome {
        Welcome(name: "tap", time: time, seq: seq, clock: "real", heartbeatMilliseconds: 1000, firstSeq: firstSeq)
    }

    func seen(_ seq: UInt64, _ topic: String = "app.one") -> Envelope {
        Envelope(seq: seq, time: 1_000, topic: topic, source: "greeter", body: Array("{}".utf8))
    }

    /// A broker restarted on its state numbers on past the 1,000 numbers the last one set aside: without a --journal,
    /// only the new run's own events before the welcome went by, never the numbers skipped.
    func testTheNumbersARestartedBrokerSkippedAreNotEventsThatWentBy() {
        let everything = TapReconnection(lastSeen: seen(41), lastKnownSeq: 41, runFirstSeq: 1, seesEveryEvent: true)
        let said = everything.notice(for: welcome(seq: 1_046, firstSeq: 1_042), journalPath: nil)
        XCTAssertEqual(said.text, "⚠ the broker restarted on its state and numbers on from #1042; #42–#1041 were never sent: numbers the last broker "
            + "set aside; its events #1042–#1046 went by while the tap was away (the broker writes no --journal: they are not kept)")
        XCTAssertEqual(said.lastKnownSeq, 1_046)

        // A tap that hears some topics only saw a stopped broker to its end when it saw its `bus.stopping`.
        let filtered = TapReconnection(lastSeen: seen(41), lastKnownSeq: 41, runFirstSeq: 1, seesEveryEvent: false)
        XCTAssertEqual(filtered.notice(for: welcome(seq: 1_046, firstSeq: 1_042), journalPath: nil).text,
                       "⚠ the broker restarted on its state and numbers on from #1042; #42–#1041 were the last broker's: numbers it set aside "
                       + "unused, or events outside the tap's topics; its events #1042–#1046 went by while the tap was away (the broker writes no --journal: they are not kept)")
        let sawItStop = TapReconnection(lastSeen: seen(43, Topic.busStopping), lastKnownSeq: 43, runFirstSeq: 1, seesEveryEvent: false)
        XCTAssertTrue(sawItStop.notice(for: welcome(seq: 1_046, firstSeq: 1_044), journalPath: nil).text?
            .contains("#44–#1043 were never sent: numbers the last broker set aside; its events #1044–#1046 went by") == true)

        // The same run (the tap's own connection was lost): every number after its last event went by.
        XCTAssertEqual(everything.notice(for: welcome(seq: 50, firstSeq: 1), journalPath: nil).text,
                       "⚠ events #42–#50 went by while the tap was away (the broker writes no --journal: they are not kept)")
        // A fresh state numbers from #1 again: a new bus, whatever its numbers reached meanwhile.
        let secondRun = TapReconnection(lastSeen: seen(1_050), lastKnownSeq: 1_050, runFirstSeq: 1_042, seesEveryEvent: true)
        XCTAssertTrue(secondRun.notice(for: welcome(seq: 1_060, firstSeq: 1, time: 9_000), journalPath: nil).text?
            .hasPrefix("⚠ a new bus: the broker started again from #1 (now at #1060)") == true)
    }

    /// With a --journal, the new run's events are read back from it: the notice names the `tap --from` that shows them.
    func testARestartedBrokersEventsAreNamedInItsJournal() throws {
        let work = TemporaryDirectory(prefix: "sbtaprc")
        let journal = work.file("journal.jsonl")
        let lines = (1_042...1_046).map { seq in
            String(decoding: WireCodec.encodeEnvelope(Envelope(seq: seq, time: 3_000, topic: "bus.started", source: "broker", body: Array("{}".utf8))), as: UTF8.self)
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: journal, atomically: true, encoding: .utf8)
        let tap = TapReconnection(lastSeen: seen(41), lastKnownSeq: 41, runFirstSeq: 1, seesEveryEvent: true)
        XCTAssertEqual(tap.notice(for: welcome(seq: 1_046, firstSeq: 1_042, time: 4_000), journalPath: journal).text,
                       "⚠ the broker restarted on its state and numbers on from #1042; #42–#1041 were never sent: numbers the last broker "
                       + "set aside; its events #1042–#1046 went by while the tap was away (in the broker's --journal: `shieldbus tap --from 1042`)")
    }
}

extension CommandLineToolTests {
    /// `shieldbus ARGUMENTS` started (a tap), its output and errors written to files in `work`.
    func startTap(_ arguments: [String], in work: TemporaryDirectory) throws -> (process: Process, output: String, errors: String) {
        let output = work.file("tap.out"), errors = work.file("tap.err")
        let tap = Process()
        tap.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        tap.arguments = arguments
        try tap.run(outputTo: output, errorsTo: errors)
        return (tap, output, errors)
    }

    /// `topics` published on `broker` by a client named `name`, each with the body `{"n": 1}`; the client has left when
    /// this returns.
    func greet(_ broker: BrokerProcess, _ topics: String..., as name: String = "greeter") throws {
        let sender = try broker.connect(name: name, role: .generic, subscriptions: [])
        for topic in topics { try sender.publish(Publish(topic: topic, body: ["n": 1])) }
        sender.close()
        // Its goodbye taken in, so that the next greeting may use the name again.
        waitUntil("\(name)'s goodbye taken in") { !((try? broker.status())?["plugins"]?.arrayValue ?? []).contains { $0["name"]?.stringValue == name } }
    }

    /// Whether a tap is among `broker`'s clients.
    func tapConnected(_ broker: BrokerProcess) -> Bool {
        ((try? broker.status())?["plugins"]?.arrayValue ?? []).contains { $0["role"]?.stringValue == "tap" }
    }

    /// A tap started before its broker (--wait) shows only what its filters let through, in its template, and when
    /// the broker is stopped and another starts on the same runtime directory, it follows, saying what went by.
    func testTapWaitsFiltersAndFollowsABrokerRestart() throws {
        let work = TemporaryDirectory(prefix: "sbtap")
        let runtime = work.file("run")
        let (tap, output, errors) = try startTap(["tap", "--wait", "--count", "2", "--exclude", "app.noise", "--source", "greeter",
                                                  "--format", "{topic} {source} {body}", "--runtime-dir", runtime, "app."], in: work)
        defer { if tap.isRunning { tap.terminate() } }

        let configuration = "name: tools\n"
        let first = try BrokerProcess(configuration: configuration, runtimeDirectory: runtime)
        waitUntil("the waiting tap to connect") { tapConnected(first) }
        try greet(first, "app.noise")
        try greet(first, "app.hello", as: "stranger")
        try greet(first, "app.hello")
        waitUntil("the tap to show the first greeting") { ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("app.hello") }
        _ = first.stop()

        let second = try BrokerProcess(configuration: configuration, runtimeDirectory: runtime)
        defer { _ = second.stop() }
        waitUntil("the tap to follow the new broker") { tapConnected(second) }
        try greet(second, "app.again")
        waitUntil("the tap to end after two events") { !tap.isRunning }
        XCTAssertEqual(tap.terminationStatus, 0)
        XCTAssertEqual(try String(contentsOfFile: output, encoding: .utf8), "app.hello greeter {\"n\":1}\napp.again greeter {\"n\":1}\n",
                       "the excluded topic and the other sender are not shown; the template is followed")
        let said = try String(contentsOfFile: errors, encoding: .utf8)
        XCTAssertTrue(said.contains("the broker left"), said)
        XCTAssertTrue(said.contains("reconnected to the broker"), said)
        XCTAssertTrue(said.contains("went by while the tap was away (the broker writes no --journal: they are not kept)"),
                      "the broker's own start-up events went by, and nothing keeps them: \(said)")
        XCTAssertFalse(said.contains("a new bus"), "a broker restarted on its state goes on numbering: \(said)")
    }

    /// `tap --count N` whose broker leaves before N events were shown did not do what it was asked: exit 1, saying how
    /// many it showed — never 0 as if all had come.
    func testTapCountedExitsNonZeroWhenTheBrokerLeavesFirst() throws {
        let work = TemporaryDirectory(prefix: "sbtapleft")
        let runtime = work.file("run")
        let broker = try BrokerProcess(configuration: "name: tools\n", runtimeDirectory: runtime)
        let (tap, output, errors) = try startTap(["tap", "--count", "3", "--format", "{topic}", "--runtime-dir", runtime, "app."], in: work)
        defer { if tap.isRunning { tap.terminate() } }
        waitUntil("the tap to connect") { tapConnected(broker) }
        try greet(broker, "app.one")
        waitUntil("the tap to show it") { ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("app.one") }
        _ = broker.stop()
        waitUntil("the tap to end with its broker") { !tap.isRunning }
        let said = try String(contentsOfFile: errors, encoding: .utf8)
        XCTAssertEqual(tap.terminationStatus, 1, said)
        XCTAssertTrue(said.contains("the broker left after 1 of the 3 event(s) asked for"), said)
    }

    /// A broker restarted on a fresh state begins a new bus: its numbers start again at #1 and it writes its --journal
    /// anew. The tap says so — not that the new bus's numbers "went by" on the old one, nor that a journal keeps them.
    func testTapSaysWhenARestartedBrokerBeganANewBus() throws {
        let work = TemporaryDirectory(prefix: "sbtapnew")
        let runtime = work.file("run"), journal = work.file("journal.jsonl")
        let (tap, output, errors) = try startTap(["tap", "--wait", "--count", "3", "--format", "#{seq} {topic}", "--runtime-dir", runtime, "app."], in: work)
        defer { if tap.isRunning { tap.terminate() } }
        let first = try BrokerProcess(configuration: "name: tools\n", arguments: ["--journal", journal, "--state-dir", work.file("state-1")], runtimeDirectory: runtime)
        waitUntil("the waiting tap to connect") { tapConnected(first) }
        try greet(first, "app.one", "app.two")
        waitUntil("the tap to show both") { ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("app.two") }
        _ = first.stop()

        let second = try BrokerProcess(configuration: "name: tools\n", arguments: ["--journal", journal, "--state-dir", work.file("state-2")], runtimeDirectory: runtime)
        defer { _ = second.stop() }
        waitUntil("the tap to follow the new broker") { tapConnected(second) }
        try greet(second, "app.three")
        waitUntil("the tap to end after three events") { !tap.isRunning }
        XCTAssertEqual(tap.terminationStatus, 0)
        let shown = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(shown.map { $0.split(separator: " ").last.map(String.init) ?? "" }, ["app.one", "app.two", "app.three"])
        let said = try String(contentsOfFile: errors, encoding: .utf8)
        XCTAssertTrue(said.contains("⚠ a new bus: the broker started again from #1"), said)
        XCTAssertTrue(said.contains("its --journal was written anew"), said)
        XCTAssertFalse(said.contains("went by"), "the new bus's numbers are not the old one's: \(said)")
    }

    /// Brokers started again on the same state (and --journal) go on numbering past the numbers the last one set aside,
    /// and each writes the journal anew. One that was killed says no goodbye: the tap's connection finds the next
    /// broker itself. Either way the tap tells the numbers the last broker set aside (never sent) from the new broker's
    /// events that went by — with the `tap --from` to read them when the journal has them, and without a journal,
    /// never "#a–#b went by" for numbers that were never events.
    func testTapSaysWhatWentByWhenABrokerOnTheSameStateWasKilledOrStopped() throws {
        try followRestarts(journaled: true)
    }

    func testTapWithoutAJournalTellsTheNumbersARestartedBrokerSkippedFromEventsThatWentBy() throws {
        try followRestarts(journaled: false)
    }

    /// A tap hearing `app.` across a broker killed, then one stopped, each followed by another on the same state.
    private func followRestarts(journaled: Bool, line: UInt = #line) throws {
        let work = TemporaryDirectory(prefix: "sbtapkill")
        let runtime = work.file("run"), journal = work.file("journal.jsonl")
        let (tap, output, errors) = try startTap(["tap", "--wait", "--count", "4", "--format", "#{seq} {topic}", "--runtime-dir", runtime, "app."], in: work)
        defer { if tap.isRunning { tap.terminate() } }
        func shown() -> [(seq: UInt64, topic: String)] {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
                let parts = line.dropFirst().split(separator: " ")
                return parts.count == 2 ? UInt64(parts[0]).map { ($0, String(parts[1])) } : nil
            }
        }
        func said() -> String { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" }
        /// The broker's first number, from a welcome of its own.
        func firstSeq(_ broker: BrokerProcess) throws -> UInt64 {
            let connection = try broker.connect(name: "first-seq-probe", role: .tool, subscriptions: [])
            defer { connection.close() }
            return try XCTUnwrap(connection.welcome?.firstSeq, "a broker's welcome says where its run began")
        }
        /// The notice of the restart to a broker numbering from `first`: the numbers before it from after `last` (or
        /// after a later one, the stopped broker's `bus.stopping`), skipped as `skipped` says, and its own events.
        func assertTold(numberingFrom first: UInt64, after last: UInt64, skipped: String, line: UInt = #line) throws {
            let opening = "⚠ the broker restarted on its state and numbers on from #\(first); #"
            let told = try XCTUnwrap(said().split(separator: "\n").first { $0.hasPrefix(opening) }, said(), line: line)
            let range = told.dropFirst(opening.count).prefix { $0 != " " }.split(separator: "–#").compactMap { UInt64($0) }
            XCTAssertEqual(range.count, 2, String(told), line: line)
            XCTAssertGreaterThan(range.first ?? 0, last, String(told), line: line)
            XCTAssertEqual(range.last, first - 1, String(told), line: line)
            XCTAssertTrue(told.contains(" were \(skipped); its events #\(first)–#"), String(told), line: line)
            XCTAssertTrue(told.hasSuffix(journaled ? " went by while the tap was away (in the broker's --journal: `shieldbus tap --from \(first)`)"
                                                   : " went by while the tap was away (the broker writes no --journal: they are not kept)"),
                          String(told), line: line)
        }
        let arguments = (journaled ? ["--journal", journal] : []) + ["--state-dir", work.file("state")]
        let first = try BrokerProcess(configuration: "name: tools\n", arguments: arguments, runtimeDirectory: runtime)
        waitUntil("the waiting tap to connect") { tapConnected(first) }
        try greet(first, "app.one")
        try greet(first, "app.two")
        waitUntil("the tap to show both") { shown().count == 2 }
        _ = first.stop(signal: SIGKILL)

        let second = try BrokerProcess(configuration: "name: tools\n", arguments: arguments, runtimeDirectory: runtime)
        waitUntil("the tap to find the next broker", timeoutSeconds: 30) { tapConnected(second) }
        let secondFirst = try firstSeq(second)
        XCTAssertGreaterThan(secondFirst, shown()[1].seq + 1, "the second broker's numbers begin past those the first had set aside")
        try greet(second, "app.three")
        waitUntil("the tap to show the third") { shown().count == 3 }
        XCTAssertTrue(said().contains("reconnected to the broker (the last one went silent without a goodbye)"), said())
        // Killed, the first broker sent no `bus.stopping`: a tap hearing only `app.` cannot know it sent nothing else.
        try assertTold(numberingFrom: secondFirst, after: shown()[1].seq, skipped: "the last broker's: numbers it set aside unused, or events outside the tap's topics")
        _ = second.stop()

        let third = try BrokerProcess(configuration: "name: tools\n", arguments: arguments, runtimeDirectory: runtime)
        defer { _ = third.stop() }
        waitUntil("the tap to follow the broker after a goodbye") { tapConnected(third) }
        let thirdFirst = try firstSeq(third)
        try greet(third, "app.four")
        waitUntil("the tap to end after four events") { !tap.isRunning }
        XCTAssertEqual(tap.terminationStatus, 0)
        XCTAssertEqual(shown().map(\.topic), ["app.one", "app.two", "app.three", "app.four"])
        XCTAssertEqual(shown().map(\.seq), shown().map(\.seq).sorted(), "one bus: the numbers go on")
        XCTAssertTrue(said().contains("the broker left"), said())
        // Stopped, it said `bus.stopping` last: the numbers after it were never sent.
        try assertTold(numberingFrom: thirdFirst, after: shown()[2].seq, skipped: "never sent: numbers the last broker set aside")
        XCTAssertFalse(said().contains("⚠ events #"), "no numbers the last broker set aside are said to have gone by: \(said())")
        XCTAssertFalse(said().contains("a new bus"), "brokers on the same state go on numbering: \(said())")
    }
}

extension CommandLineToolTests {
    /// `send --stdin` sends one event per line (a tap's JSON lines too), says which lines it could not send and
    /// exits 1 for them, and `--json` prints each event's seq and bus time.
    func testSendReadsEventsFromStandardInput() throws {
        let broker = try BrokerProcess(configuration: "name: tools\n")
        defer { _ = broker.stop() }
        let watcher = try broker.connect(name: "watcher", subscriptions: ["app."])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        process.arguments = ["send", "--stdin", "--json", "--runtime-dir", broker.runtime.path]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let lines = [#"{"topic":"app.one","body":{"n":1}}"#, #"{"seq":7,"time":0,"topic":"app.two","source":"x","body":{"n":2}}"#,
                     "{oops", #"{"topic":"clock.tick","body":{}}"#, #"{"topic":"app.three","body":{"n":3}}"#, ""]
        input.fileHandleForWriting.write(Data(lines.joined(separator: "\n").utf8))
        try input.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 1, "two lines were not sent: \(said)")
        let sent = try printed.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        XCTAssertEqual(sent.map { $0["topic"] }, ["app.one", "app.two", "app.three"], "a refused line does not stop the rest: \(printed)")
        XCTAssertTrue(sent.allSatisfy { ($0["seq"]?.intValue ?? 0) > 0 && $0["time"]?.intValue != nil }, printed)
        XCTAssertTrue(said.contains("line 3: not JSON"), said)
        XCTAssertTrue(said.contains("line 4: the broker refused clock.tick"), said)
        let events = try collectEvents(from: watcher) { $0.count >= 3 }
        XCTAssertEqual(events.map(\.bodyValue), [["n": 1], ["n": 2], ["n": 3]], "the bodies arrive as given")
    }
}

extension CommandLineToolTests {
    /// `tap --rates` counts, every second, the events of each topic its filters show: the counts over its reports add
    /// up to exactly what was sent, excluded topics never appear, and each report's rates are its counts over its
    /// length. `--count` stops after that many seconds; `--format` is refused with it.
    func testTapRatesCountsEachTopicEverySecond() throws {
        let broker = try BrokerProcess(configuration: "name: tools\n")
        defer { _ = broker.stop() }
        let work = TemporaryDirectory(prefix: "sbrates")
        let output = work.file("rates.out")
        let tap = Process()
        tap.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        tap.arguments = ["tap", "--rates", "--json", "--exclude", "app.noise", "--runtime-dir", broker.runtime.path, "app."]
        try tap.run(outputTo: output, errorsTo: work.file("rates.err"))
        defer { if tap.isRunning { tap.terminate() } }
        waitUntil("the rates tap to connect") {
            ((try? broker.status())?["plugins"]?.arrayValue ?? []).contains { $0["role"]?.stringValue == "tap" }
        }
        let sender = try broker.connect(name: "sender", role: .generic, subscriptions: [])
        for n in 0..<42 { try sender.publish(Publish(topic: n % 7 == 0 ? "app.b" : "app.a", body: ["n": .int(Int64(n))])) }
        for n in 0..<5 { try sender.publish(Publish(topic: "app.noise", body: ["n": .int(Int64(n))])) }
        sender.close()

        func reports() throws -> [JSONValue] {
            try ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        }
        func total(_ topic: String, _ lines: [JSONValue]) -> Int64 {
            lines.reduce(0) { $0 + ($1["topics"]?[topic]?["events"]?.intValue ?? 0) }
        }
        let expected: [String: Int64] = ["app.a": 36, "app.b": 6]
        waitUntil("the reports to count every event sent") { let lines = (try? reports()) ?? []; return expected.allSatisfy { total($0.key, lines) >= $0.value } }
        let lines = try reports()
        XCTAssertEqual(total("app.a", lines), expected["app.a"])
        XCTAssertEqual(total("app.b", lines), expected["app.b"])
        XCTAssertEqual(total("app.noise", lines), 0, "an excluded topic is not counted")
        for line in lines {
            let seconds = try XCTUnwrap(line["seconds"]?.doubleValue)
            XCTAssertTrue((0.95...3).contains(seconds), "a report a second: \(line)")
            let topics = try XCTUnwrap(line["topics"]?.objectValue)
            XCTAssertEqual(line["events"]?.intValue, topics.values.reduce(0) { $0 + ($1["events"]?.intValue ?? 0) }, "\(line)")
            for (_, topic) in topics {
                XCTAssertEqual(try XCTUnwrap(topic["perSecond"]?.doubleValue), Double(try XCTUnwrap(topic["events"]?.intValue)) / seconds, accuracy: 0.01)
            }
            XCTAssertNotNil(ISO8601DateFormatter().date(from: String((line["end"]?.stringValue ?? "").prefix(19)) + "Z"), "\(line)")
        }

        let counted = try shieldbus(["tap", "--rates", "--count", "2"], runtime: broker.runtime)
        XCTAssertEqual(counted.status, 0, counted.errors)
        let printed = counted.output.split(separator: "\n")
        XCTAssertEqual(printed.count, 2, counted.output)
        XCTAssertTrue(printed.allSatisfy { $0.range(of: #"^\d\d:\d\d:\d\d  \d+(\.\d)? events/s"#, options: .regularExpression) != nil }, counted.output)

        let refused = try shieldbus(["tap", "--rates", "--format", "{topic}"], runtime: broker.runtime)
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.errors.contains("--rates prints events per second, not events: it takes no --format"), refused.errors)
    }

    /// `tap --rates` stamps each report with bus time on the device's wall clock, not the machine's: on a clock
    /// scaled ×60 from 10:00 in Berlin, three reports a wall second apart read about a bus minute apart, from 10:00.
    func testTapRatesStampsBusTimeOnTheDevicesClock() throws {
        let broker = try BrokerProcess(configuration: "name: tools\ntimeZone: Europe/Berlin\nclock: {mode: scaled, speed: 60, start: \"2026-11-23T10:00\"}\n")
        defer { _ = broker.stop() }
        let counted = try shieldbus(["tap", "--rates", "--count", "3", "app."], runtime: broker.runtime)
        XCTAssertEqual(counted.status, 0, counted.errors)
        let seconds = counted.output.split(separator: "\n").map { line -> Int in
            let clock = line.prefix(8).split(separator: ":").compactMap { Int($0) }
            return clock.count == 3 ? clock[0] * 3600 + clock[1] * 60 + clock[2] : -1
        }
        XCTAssertEqual(seconds.count, 3, counted.output)
        XCTAssertTrue(seconds.allSatisfy { (10 * 3600..<12 * 3600).contains($0) }, "bus time in Berlin, from 10:00: \(counted.output)")
        for (earlier, later) in zip(seconds, seconds.dropFirst()) {
            XCTAssertTrue((30...120).contains(later - earlier), "a wall second is a bus minute: \(counted.output)")
        }
    }
}

extension CommandLineToolTests {
    /// On a terminal (a pseudo-terminal) tap colors a topic by its kind — red for a failure — and cuts a long body to
    /// its line; piped, it prints no color and the whole body (for grep and jq).
    func testTapColorsOnATerminalAndPrintsWholeBodiesWhenPiped() throws {
        let broker = try BrokerProcess(configuration: "name: tools\n")
        defer { _ = broker.stop() }
        let long = String(repeating: "x", count: 400)
        func tap(to output: FileHandle) throws -> Process {
            let tap = Process()
            tap.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
            tap.arguments = ["tap", "--count", "1", "--runtime-dir", broker.runtime.path, "app."]
            tap.environment = ProcessInfo.processInfo.environment.filter { $0.key != "NO_COLOR" }
            tap.standardOutput = output
            try tap.run()
            waitUntil("the tap to connect") {
                ((try? broker.status())?["plugins"]?.arrayValue ?? []).filter { $0["role"]?.stringValue == "tap" }.count == 1
            }
            let sender = try broker.connect(name: "sender", role: .generic, subscriptions: [])
            try sender.publish(Publish(topic: "app.job.failed", body: ["text": .string(long)]))
            sender.close()
            return tap
        }

        let terminal = try PseudoTerminal()
        let onTerminal = try tap(to: terminal.terminal)
        waitUntil("the tap on the terminal to end") { !onTerminal.isRunning }
        XCTAssertEqual(onTerminal.terminationStatus, 0)
        waitUntil("the line on the terminal") { terminal.text.contains("\n") }
        let shown = terminal.text
        XCTAssertTrue(shown.contains(" \u{1B}[31mapp.job.failed\u{1B}[0m "), "a failure's topic in red: \(shown.debugDescription)")
        XCTAssertFalse(shown.contains(long), "a long body is cut to the terminal's line: \(shown)")
        XCTAssertTrue(shown.contains("xxx…"), shown)

        let pipe = Pipe()
        let piped = try tap(to: pipe.fileHandleForWriting)
        try pipe.fileHandleForWriting.close()
        let printed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        piped.waitUntilExit()
        XCTAssertEqual(piped.terminationStatus, 0)
        XCTAssertTrue(printed.contains(long), "piped, the whole body: \(printed)")
        XCTAssertFalse(printed.unicodeScalars.contains { $0.value == 0x1B }, "piped, no color: \(printed.debugDescription)")
    }
}

