import AppGroupStore
import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import SQLite
import XCTest

/// Durable delivery through the real broker and the real companion app: events a plugin's process was given
/// and did not acknowledge go to its next process, and the SDK handles each of them once.
final class DurableDeliveryTests: XCTestCase {
    let group = "group.dev.shieldbus.durable"

    /// The companion app alone, running the habit lock with more habits a day than the test completes.
    var configuration: String {
        """
        name: durable
        timeZone: UTC
        bus: {heartbeatMs: 200, sessionTimeoutMs: 2000}
        device: {companionApp: Habit Lock, companionPlugin: app}
        appGroups:
          - name: \(group)
            slices: {app: [isCurrentlyUnlocked, quotaEndTimestamp, "globalSerialized*", "habits.*", "DeepLinkInbox.*"]}
        plugins:
          - {name: app, executable: \(BuildProducts.path("companion-app")), role: app,
             options: {product: habit-lock, appGroup: \(group), habitsPerDay: 100000, unlockMinutes: 30}}
        """
    }

    func appEntry(_ broker: BrokerProcess) -> JSONValue? {
        (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == "app" }
    }

    /// Every habit the app recorded, over all days (the run may cross midnight).
    func recordedHabits(_ defaults: SharedDefaults) throws -> [String] {
        try defaults.dictionaryRepresentation().keys.filter { $0.hasPrefix("habits.") }.sorted()
            .flatMap { try defaults.value([String].self, forKey: $0) ?? [] }
    }

    func testKillingTheAppInTheMiddleOfABurstOfHabitsLosesNone() throws {
        let broker = try BrokerProcess(configuration: configuration)
        waitUntil("the app to connect (log: \(broker.log(tail: 10)))") { appEntry(broker)?["connected"]?.boolValue == true }
        let firstPid = try XCTUnwrap(appEntry(broker)?["pid"]?.intValue)
        let container = AppGroupContainer(root: URL(fileURLWithPath: broker.runtime.path + "/state/appgroups"))
        let defaults = try SharedDefaults(suiteName: group, container: container)

        let tool = try broker.connect(name: "burst", role: .tool, subscriptions: [])
        let total = 800
        for n in 0..<total {
            try tool.publish(Publish(topic: "input.habit.request", body: ["habit": .string("habit-\(n)")], corr: "burst-\(n)"))
        }
        // SIGKILL while the app is working through the backlog: some recorded, many delivered or queued.
        waitUntil("the app to record some habits") { (try? recordedHabits(defaults).count ?? 0) ?? 0 >= 50 }
        kill(pid_t(firstPid), SIGKILL)
        let recordedAtKill = try recordedHabits(defaults).count
        XCTAssertLessThan(recordedAtKill, total, "the kill came in the middle of the burst")

        waitUntil("every habit to be recorded", timeoutSeconds: 60) { (try? recordedHabits(defaults).count) == total }
        let habits = try recordedHabits(defaults)
        XCTAssertEqual(habits.count, total, "none lost")
        XCTAssertEqual(Set(habits).count, habits.count, "none recorded twice")
        XCTAssertEqual(Set(habits), Set((0..<total).map { "habit-\($0)" }))
        let entry = try XCTUnwrap(appEntry(broker))
        XCTAssertEqual(entry["restarts"]?.intValue, 1)
        XCTAssertNotEqual(entry["pid"]?.intValue, firstPid)
        XCTAssertNil(try broker.status()["counters"]?["errorsByCode"]?["delivery-abandoned"], "nothing given up")
    }

    func testAfterABrokerSIGKILLThePluginsGetWhatTheyHadNotAcknowledged() throws {
        let configuration = """
            name: broker-crash
            bus: {heartbeatMs: 200, sessionTimeoutMs: 1000}
            plugins:
              - {name: slow, executable: \(BuildProducts.path("fixture-supervised")), role: generic}
            """
        let work = TemporaryDirectory(prefix: "sbmissed")
        let runtime = work.file("run")
        let first = try BrokerProcess(configuration: configuration, runtimeDirectory: runtime)
        func slow(_ broker: BrokerProcess) -> JSONValue? { (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == "slow" } }
        waitUntil("the plugin to connect") { slow(first)?["connected"]?.boolValue == true }
        // The plugin hangs on the first event; the pings wait behind it, unacknowledged, when the broker dies.
        let tool = try first.connect(name: "pinger", role: .tool, subscriptions: [])
        try tool.publish(Publish(topic: "app.sup.hang", body: [:]))
        for n in 1...3 { try tool.publish(Publish(topic: "app.sup.ping", body: ["n": .int(Int64(n))])) }
        waitUntil("the broker to keep the pings for the plugin") { slow(first)?["kept"]?.intValue == 4 }
        first.stop(signal: SIGKILL)

        let second = try BrokerProcess(configuration: configuration, runtimeDirectory: runtime)
        defer { second.stop() }
        let tap = try second.connect(name: "pong-tap", subscriptions: ["app.sup.pong"])
        let pongs = try collectEvents(from: tap, timeoutSeconds: 20) { $0.count >= 3 }
        XCTAssertEqual(pongs.compactMap { $0.bodyValue["n"]?.intValue }, [1, 2, 3], "the new broker delivered what the old one had not seen acknowledged")
        XCTAssertEqual(try second.status()["counters"]?["errorsByCode"]?["delivery-abandoned"]?.intValue, 1, "the hang itself was given up after two crashes")
    }

    // MARK: What a plugin published when its broker was killed

    var fixtureConfiguration: String {
        """
        name: publish-once
        bus: {heartbeatMs: 200, sessionTimeoutMs: 1000}
        plugins:
          - {name: slow, executable: \(BuildProducts.path("fixture-supervised")), role: generic}
        """
    }

    func slow(_ broker: BrokerProcess) -> JSONValue? {
        (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == "slow" }
    }

    /// The events of a journal file so far (a line being written is left out).
    func journal(_ path: String) -> [Envelope] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? WireCodec.decodeEnvelope(Array($0.utf8)) }
    }

    /// The plugin handles an event, publishes what it causes and records the event as handled — and the broker
    /// is killed before it has read that publication. The next broker delivers the event again; the plugin's next
    /// process, which must skip it, sends what handling it published instead: it arrives, once.
    func testAPublicationTheKilledBrokerHadNotReadArrivesOnce() throws {
        let work = TemporaryDirectory(prefix: "sbunread")
        let runtime = work.file("run")
        let first = try BrokerProcess(configuration: fixtureConfiguration, arguments: ["--journal", work.file("first.jsonl")], runtimeDirectory: runtime)
        waitUntil("the plugin to connect") { slow(first)?["connected"]?.boolValue == true }
        let tap = try first.connect(name: "pong-tap", role: .tap, subscriptions: ["app.sup.pong"])
        let tool = try first.connect(name: "freezer", role: .tool, subscriptions: [])
        try tool.publish(Publish(topic: "app.sup.ping", body: ["n": 0]))
        let pong = try XCTUnwrap(try collectEvents(from: tap) { !$0.isEmpty }.first, "the plugin answers")

        // Once the broker has kept the event for the plugin, it is stopped; then the plugin publishes: the
        // publication (and the acknowledgement after it) waits unread in the socket.
        try tool.publish(Publish(topic: "app.sup.publish-when-stopped", body: ["n": 1]))
        waitUntil("the broker to keep the event for the plugin") { slow(first)?["kept"]?.intValue == 1 }
        kill(first.process.processIdentifier, SIGSTOP)
        let cursors = try SQLiteConnection(path: runtime + "/state/cursors/slow.sqlite", flags: [.readOnly])
        waitUntil("the plugin to record the event as handled") {
            (try? cursors.prepare("SELECT 1 FROM handled WHERE seq > ?", bindings: [.integer(Int64(pong.seq))]).step()) == true
        }
        first.stop(signal: SIGKILL)

        let second = try BrokerProcess(configuration: fixtureConfiguration, arguments: ["--journal", work.file("second.jsonl")], runtimeDirectory: runtime)
        defer { second.stop() }
        waitUntil("the publication to arrive (log: \(second.log(tail: 10)))") {
            journal(work.file("second.jsonl")).contains { $0.topic == "app.sup.frozen" }
        }
        waitUntil("the plugin to acknowledge what it was given again") { slow(second)?["kept"]?.intValue == 0 }
        let frozen = (journal(work.file("first.jsonl")) + journal(work.file("second.jsonl"))).filter { $0.topic == "app.sup.frozen" }
        XCTAssertEqual(frozen.map { $0.bodyValue["n"] }, [1], "once, from the plugin")
        XCTAssertEqual(frozen.first?.source, "slow")
    }

    /// The plugin publishes and hangs before recording the event as handled; the broker reads the publication and
    /// is killed. The next broker delivers the event again and the plugin's next process handles it again,
    /// publishing the same: the new broker knows it has it (from bus.sqlite) and keeps it once.
    func testAPublicationSentAgainAfterABrokerKillIsKeptOnce() throws {
        let work = TemporaryDirectory(prefix: "sbrepeat")
        let runtime = work.file("run")
        let first = try BrokerProcess(configuration: fixtureConfiguration, arguments: ["--journal", work.file("first.jsonl")], runtimeDirectory: runtime)
        waitUntil("the plugin to connect") { slow(first)?["connected"]?.boolValue == true }
        let tool = try first.connect(name: "echoer", role: .tool, subscriptions: [])
        try tool.publish(Publish(topic: "app.sup.echo-then-hang", body: ["n": 7]))
        waitUntil("the echo to be journaled") { journal(work.file("first.jsonl")).contains { $0.topic == "app.sup.echo" } }
        _ = try first.status()  // answered after the turn that sequenced the echo, and saved what it published
        first.stop(signal: SIGKILL)

        let second = try BrokerProcess(configuration: fixtureConfiguration, arguments: ["--journal", work.file("second.jsonl")], runtimeDirectory: runtime)
        defer { second.stop() }
        waitUntil("the plugin to handle the event again and acknowledge it") {
            slow(second)?["connected"]?.boolValue == true && slow(second)?["kept"]?.intValue == 0
        }
        XCTAssertEqual(try second.status()["counters"]?["repeatsDropped"]?.intValue, 1, "the copy came and was dropped")
        let echoes = (journal(work.file("first.jsonl")) + journal(work.file("second.jsonl"))).filter { $0.topic == "app.sup.echo" }
        XCTAssertEqual(echoes.map { $0.bodyValue["n"] }, [7], "once")
    }
}
