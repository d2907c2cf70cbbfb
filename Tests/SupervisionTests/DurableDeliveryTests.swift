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
        waitUntil("the app to record some habits") { ((try? recordedHabits(defaults).count) ?? 0) >= 50 }
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

    /// At the configured bound (`bus.deliveryLogLimit`), events for a plugin that stopped acknowledging are no
    /// longer kept: said once as `bus.error` `delivery-log-full` naming it, and counted in status — never silent.
    func testAFullDeliveryLogIsAClearErrorAndACounter() throws {
        let configuration = """
            name: log-full
            bus: {heartbeatMs: 200, sessionTimeoutMs: 30000, deliveryLogLimit: 3}
            plugins:
              - {name: slow, executable: \(BuildProducts.path("fixture-supervised")), role: generic}
            """
        let broker = try BrokerProcess(configuration: configuration)
        waitUntil("the plugin to connect") { slow(broker)?["connected"]?.boolValue == true }
        let watcher = try broker.connect(name: "error-watcher", role: .tap, subscriptions: ["bus.error"])
        let tool = try broker.connect(name: "flood", role: .tool, subscriptions: [])
        try tool.publish(Publish(topic: "app.sup.hang", body: [:]))  // it stops acknowledging
        for n in 1...6 { try tool.publish(Publish(topic: "app.sup.ping", body: ["n": .int(Int64(n))])) }
        let errors = try collectEvents(from: watcher) { $0.contains { $0.bodyValue["code"]?.stringValue == "delivery-log-full" } }
        let full = errors.filter { $0.bodyValue["code"]?.stringValue == "delivery-log-full" }
        XCTAssertEqual(full.count, 1, "once per episode")
        XCTAssertEqual(full.first?.bodyValue["receiver"]?.stringValue, "slow")
        XCTAssertTrue(full.first?.bodyValue["message"]?.stringValue?.contains("bus.deliveryLogLimit") == true)
        waitUntil("the broker to have read the flood") { (try? broker.status())?["counters"]?["events"]?.intValue ?? 0 >= 7 }
        XCTAssertEqual(try broker.status()["counters"]?["errorsByCode"]?["delivery-log-full"]?.intValue, 1)
        XCTAssertEqual(slow(broker)?["kept"]?.intValue, 3, "the bound holds")
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
        JournalLines.eventsSoFar(atPath: path)
    }

    /// The plugin handles an event, publishes what it causes and records the event as handled — and the broker
    /// is killed before it has read that publication. The next broker delivers the event again; the plugin's next
    /// process, which must skip it, sends what handling it published instead: it arrives, once.
    func testAPublicationTheKilledBrokerHadNotReadArrivesOnce() throws {
        let work = TemporaryDirectory(prefix: "sbunread")
        let runtime = work.file("run")
        // The fixture watches its broker's process to publish once it is stopped: only unsandboxed can it see it.
        let first = try BrokerProcess(configuration: fixtureConfiguration, arguments: ["--journal", work.file("first.jsonl"), "--no-sandbox"], runtimeDirectory: runtime)
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
        let cursors = try SQLiteConnection(path: StatePaths.handledEventsRecord("slow", in: runtime + "/state"), flags: [.readOnly])
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

    // MARK: A broker killed while a plugin's call waits for its reply

    /// Whether a process has ended (gone, or a zombie nobody has reaped yet).
    func hasEnded(_ pid: pid_t) -> Bool {
        guard processExists(pid) else { return true }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }

    /// The plugin handles an event with three OS calls — authorization, a ManagedSettings write (the shield), a
    /// DeviceActivity read — publishing a step before each. The broker is stopped just before call number `cutAt`
    /// is sent (the request waits unread in its socket) and SIGKILLed; the plugin, told by SIGTERM that its broker
    /// died, ends. Before the fix the call timed out, the SDK recorded the event as handled, and the next process
    /// skipped it when the new broker delivered it again: the write never happened (the lost lift). Now the event
    /// is handled again from the start: the write is applied, each step is on the bus once (the new broker drops
    /// the copies it has by their causes) and the handling ends, once — for each of the three calls cut off.
    func testAnEventWhoseCallLostItsBrokerIsHandledAgainByTheNextProcess() throws {
        for cutAt in 0...2 {
            let context = "cut before call \(cutAt)"
            let work = TemporaryDirectory(prefix: "sbcut")
            let runtime = work.file("run")
            // The fixture watches its broker's process to call it while stopped: only unsandboxed can it see it.
            let first = try BrokerProcess(configuration: fixtureConfiguration, arguments: ["--journal", work.file("first.jsonl"), "--no-sandbox"], runtimeDirectory: runtime)
            waitUntil("the plugin to connect") { slow(first)?["connected"]?.boolValue == true }
            let pid = pid_t(try XCTUnwrap(slow(first)?["pid"]?.intValue))
            let tool = try first.connect(name: "caller", role: .tool, subscriptions: [])
            try tool.publish(Publish(topic: "app.sup.calls", body: ["n": 1, "cutAt": .int(Int64(cutAt))]))
            waitUntil("step \(cutAt) to be journaled (\(context))") {
                journal(work.file("first.jsonl")).contains { $0.topic == "app.sup.step" && $0.bodyValue["step"]?.intValue == Int64(cutAt) }
            }
            _ = try first.status()  // answered after the turn that sequenced the step, and saved what it published
            kill(first.process.processIdentifier, SIGSTOP)
            waitUntil("the plugin to make call \(cutAt) to the stopped broker (\(context))") {
                FileManager.default.fileExists(atPath: runtime + "/state/containers/slow/slow-cut")
            }
            first.stop(signal: SIGKILL)
            // Its successor must not race it: the old process has ended (and recorded what it recorded) first.
            waitUntil("the plugin's process to end with its broker (\(context))", timeoutSeconds: 20) { hasEnded(pid) }

            let second = try BrokerProcess(configuration: fixtureConfiguration, arguments: ["--journal", work.file("second.jsonl")], runtimeDirectory: runtime)
            defer { second.stop() }
            waitUntil("the handling to end after the restart (\(context); log: \(second.log(tail: 10)))", timeoutSeconds: 20) {
                journal(work.file("second.jsonl")).contains { $0.topic == "app.sup.calls-done" }
            }
            waitUntil("the plugin to acknowledge it (\(context))") { slow(second)?["kept"]?.intValue == 0 }
            let both = journal(work.file("first.jsonl")) + journal(work.file("second.jsonl"))
            let shields = both.filter { $0.topic == "managedsettings.changed" && $0.bodyValue["writer"]?.stringValue == "slow" }
            XCTAssertEqual(shields.count, 1, "\(context): the shield was written, once")
            XCTAssertEqual(shields.first?.bodyValue["shield"]?["applicationCategories"]?["policy"]?.stringValue, "all", context)
            XCTAssertEqual(both.filter { $0.topic == "app.sup.step" }.compactMap { $0.bodyValue["step"]?.intValue }, [0, 1, 2], "\(context): each step on the bus once")
            XCTAssertEqual(both.filter { $0.topic == "app.sup.calls-done" }.count, 1, context)
            XCTAssertEqual(both.filter { $0.topic == "app.sup.call-failed" }.map(\.bodyValue.jsonText), [], "\(context): nothing of the cut-off handling reached a broker")
            XCTAssertEqual(try second.status()["counters"]?["repeatsDropped"]?.intValue, Int64(cutAt + 1), "\(context): the steps the first broker had came again and were dropped")
        }
    }

    // MARK: A broker stopped for a while

    /// The broker is stopped (SIGSTOP) for several session timeouts while a plugin's call waits for its reply, then
    /// goes on (SIGCONT). The call, which the silent broker never answered, leaves its event to be handled again — not
    /// recorded as handled with its write undone —; on waking the broker ends no session and kills no plugin for its
    /// own silence, and takes the plugin's hello again on its connection as the same process, not a crash. The
    /// handling ends once, with the write applied once.
    func testABrokerStoppedForAWhileLosesNoHandlingAndKillsNoPlugin() throws {
        let work = TemporaryDirectory(prefix: "sbstall")
        let configuration = """
            name: stall
            bus: {heartbeatMs: 200, sessionTimeoutMs: 1000}
            plugins:
              - {name: slow, executable: \(BuildProducts.path("fixture-supervised")), arguments: [--call-timeout-ms, "1500"], role: generic}
              - {name: bystander, executable: \(BuildProducts.path("bus-test-plugin")), arguments: [bystander, /dev/null, app.idle, "0", "1000000"], role: generic}
            """
        // The fixture watches its broker's process to call it while stopped: only unsandboxed can it see it.
        let broker = try BrokerProcess(configuration: configuration, arguments: ["--journal", work.file("journal.jsonl"), "--no-sandbox"],
                                       runtimeDirectory: work.file("run"))
        defer { broker.stop() }
        func plugin(_ name: String, in broker: BrokerProcess) -> JSONValue? {
            (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == name }
        }
        waitUntil("both plugins to connect") { ["slow", "bystander"].allSatisfy { name in plugin(name, in: broker)?["connected"]?.boolValue == true } }
        let pids = ["slow", "bystander"].map { plugin($0, in: broker)?["pid"]?.intValue }
        let tool = try broker.connect(name: "caller", role: .tool, subscriptions: [])
        try tool.publish(Publish(topic: "app.sup.calls", body: ["n": 1, "cutAt": 1]))
        waitUntil("step 1 to be journaled") { journal(work.file("journal.jsonl")).contains { $0.topic == "app.sup.step" && $0.bodyValue["step"]?.intValue == 1 } }
        tool.close()
        kill(broker.process.processIdentifier, SIGSTOP)
        // The stall is the fault: several session timeouts and the call's timeout pass while the broker is stopped.
        let stalled = monotonicMilliseconds() + 4_000
        while monotonicMilliseconds() < stalled { usleep(100_000) }
        kill(broker.process.processIdentifier, SIGCONT)

        waitUntil("the handling to end (log: \(broker.log(tail: 10)))", timeoutSeconds: 20) {
            journal(work.file("journal.jsonl")).contains { $0.topic == "app.sup.calls-done" }
        }
        waitUntil("the plugin to acknowledge it") { plugin("slow", in: broker)?["kept"]?.intValue == 0 }
        let events = journal(work.file("journal.jsonl"))
        XCTAssertEqual(events.filter { $0.topic == "managedsettings.changed" && $0.bodyValue["writer"]?.stringValue == "slow" }.count, 1, "the write, once")
        XCTAssertEqual(events.filter { $0.topic == "app.sup.calls-done" }.count, 1)
        XCTAssertEqual(events.filter { $0.topic == "app.sup.call-failed" }.map(\.bodyValue.jsonText), [], "no call of the handling failed for good")
        XCTAssertEqual(["slow", "bystander"].map { plugin($0, in: broker)?["pid"]?.intValue }, pids, "no plugin was killed for the broker's stall")
        let counters = try broker.status()["counters"]?["errorsByCode"]
        XCTAssertNil(counters?["heartbeat-timeout"], "no session ended for the broker's own silence")
        XCTAssertNil(counters?["delivery-abandoned"], "a hello again from the same process is not a crash")
        XCTAssertFalse(events.contains { $0.topic == "plugin.exited" || $0.topic == "bus.error" && $0.bodyValue["code"]?.stringValue == "delivery-abandoned" },
                       "\(events.filter { $0.topic.hasPrefix("plugin.") || $0.topic == "bus.error" }.map { "\($0.topic) \($0.bodyValue.jsonText)" })")
        // The hellos the plugin said again while the broker was stopped wait queued behind each other: one new
        // session comes of them, not one each.
        let returns = events.filter { $0.topic == "plugin.up" && $0.bodyValue["name"]?.stringValue == "slow" }.count
        XCTAssertLessThanOrEqual(returns, 2, "slow came up \(returns) times: \(events.filter { $0.topic == "plugin.up" }.count) plugin.up in all")
    }

    /// Idle plugins hear nothing from a stopped broker (SIGSTOP) for many of their silence limits (three heartbeat
    /// intervals) and say hello again, asking to resume; once the broker goes on (SIGCONT) each session goes on as
    /// it was: no `plugin.up` again, nothing ended, the same processes — so in virtual time a broker starved of CPU
    /// on a busy machine leaves no trace in the journal (a new session would put a `plugin.up` and a `bus.ready` there).
    func testIdlePluginsThatHeardNothingFromAStoppedBrokerResumeTheirSessions() throws {
        let work = TemporaryDirectory(prefix: "sbresume")
        let plugins = ["first", "second"]
        let configuration = """
            name: resume
            bus: {heartbeatMs: 100, sessionTimeoutMs: 1000}
            plugins:
            \(plugins.map { "  - {name: \($0), executable: \(BuildProducts.path("bus-test-plugin")), arguments: [\($0), /dev/null, app.idle, \"0\", \"1000000\"], role: generic}" }.joined(separator: "\n"))
            """
        // Unsandboxed, as the bystanders of the test above: the fixture writes nothing, but opens its output file.
        let broker = try BrokerProcess(configuration: configuration, arguments: ["--journal", work.file("journal.jsonl"), "--no-sandbox"],
                                       runtimeDirectory: work.file("run"))
        defer { broker.stop() }
        func sessions() -> [String: JSONValue] {
            let entries = (try? broker.status())?["plugins"]?.arrayValue ?? []
            return Dictionary(entries.compactMap { entry in entry["name"]?.stringValue.map { ($0, entry) } }) { first, _ in first }
        }
        waitUntil("both plugins to connect") { plugins.allSatisfy { sessions()[$0]?["connected"]?.boolValue == true } }
        let before = sessions()
        kill(broker.process.processIdentifier, SIGSTOP)
        // The stall is the fault: twenty heartbeat intervals, each plugin's silence limit several times over.
        let stalled = monotonicMilliseconds() + 2_000
        while monotonicMilliseconds() < stalled { usleep(100_000) }
        kill(broker.process.processIdentifier, SIGCONT)
        // A tool's hello is answered after the hellos queued during the stall were taken in (one pass reads them all).
        let tool = try broker.connect(name: "after-stall", role: .tool, subscriptions: [])
        try tool.publish(Publish(topic: "app.after-stall", body: [:]))
        waitUntil("the tool's event to be journaled") { journal(work.file("journal.jsonl")).contains { $0.topic == "app.after-stall" } }
        tool.close()

        let after = sessions()
        for name in plugins {
            XCTAssertEqual(after[name]?["pid"]?.intValue, before[name]?["pid"]?.intValue, "\(name): the same process")
            XCTAssertEqual(after[name]?["connected"]?.boolValue, true, name)
            // Its session opened before the stall: a new one would be younger than the stall.
            XCTAssertGreaterThanOrEqual(after[name]?["uptimeMs"]?.intValue ?? 0, 2_000, "\(name): the session it had before the stall goes on: \(after[name] ?? nil)")
        }
        let events = journal(work.file("journal.jsonl"))
        let lifecycle = events.filter { $0.topic.hasPrefix("plugin.") || $0.topic == "bus.ready" }.map { "\($0.topic) \($0.bodyValue["name"]?.stringValue ?? $0.bodyValue.jsonText)" }
        XCTAssertEqual(lifecycle, ["plugin.started first", "plugin.started second", "plugin.up first", "plugin.up second",
                                   #"bus.ready {"plugins":["first","second"],"startup":true}"#], "the stall left a trace: \(lifecycle)")
        XCTAssertNil(try broker.status()["counters"]?["errorsByCode"]?["heartbeat-timeout"], "no session ended for the broker's own silence")
    }

    // MARK: A broker killed around the save of a batch

    /// Three minutes in which the fixture plugin makes its OS calls once (`app.sup.calls`).
    static let oneCallsStep = """
        name: calls-once
        start: 2026-03-07T07:00
        timeZone: UTC
        end: day 1 07:03
        steps:
          - {at: "07:00:30", publish: {topic: app.sup.calls, body: {n: 1, cutAt: -1}}}
        """

    /// `shieldbus run`'s arguments for `scenario` on `configuration`, both written in `work`, with its runtime and state
    /// folders and journal there.
    func runArguments(_ configuration: String, _ scenario: String, work: TemporaryDirectory) throws -> [String] {
        try configuration.write(toFile: work.file("config.yml"), atomically: true, encoding: .utf8)
        try scenario.write(toFile: work.file("scenario.yml"), atomically: true, encoding: .utf8)
        return ["run", "--config", work.file("config.yml"), "--scenario", work.file("scenario.yml"), "--runtime-dir", work.file("run"),
                "--state-dir", work.file("state"), "--journal", work.file("journal.jsonl"), "--quiet"]
    }

    /// Plays `scenario` with `shieldbus run` until the broker kills itself at `crash` (`--crash-before-saving TOPIC`
    /// or `--crash-after-saving TOPIC`), then resumes it on the same state folder and journal; returns the journal.
    func playKilledThenResumed(_ configuration: String, _ scenario: String, crash: [String], clock: [String] = [], work: TemporaryDirectory,
                               file: StaticString = #filePath, line: UInt = #line) throws -> [Envelope] {
        let arguments = try runArguments(configuration, scenario, work: work) + clock
        let killed = try CommandRun.shieldbus(arguments + crash, timeoutSeconds: 60)
        XCTAssertEqual(killed.status, SIGKILL, "\(crash): the broker killed itself at the save: \(killed.errors)", file: file, line: line)
        let resumed = try CommandRun.shieldbus(arguments + ["--resume"], timeoutSeconds: 60)
        XCTAssertEqual(resumed.status, 0, "\(crash): \(resumed.errors)", file: file, line: line)
        return journal(work.file("journal.jsonl"))
    }

    /// A resumed run's check reads the journal the broker kept: a line damaged before the end refuses the resume with
    /// a one-line error naming the journal and the line (status 2, as any problem with the run's options), and no
    /// plugin is left behind.
    func testAResumeOnAJournalDamagedBeforeItsEndIsRefusedSayingWhere() throws {
        let work = TemporaryDirectory(prefix: "sbdamaged")
        let arguments = try runArguments(fixtureConfiguration, Self.oneCallsStep, work: work)
        let played = try CommandRun.shieldbus(arguments, timeoutSeconds: 60)
        XCTAssertEqual(played.status, 0, played.errors)
        var lines = try String(contentsOfFile: work.file("journal.jsonl"), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertGreaterThan(lines.count, 3)
        lines[1] = "{not a journal line"
        try lines.joined(separator: "\n").write(toFile: work.file("journal.jsonl"), atomically: true, encoding: .utf8)

        let resumed = try CommandRun.shieldbus(arguments + ["--resume"], timeoutSeconds: 60)
        XCTAssertEqual(resumed.status, 2, resumed.errors)
        XCTAssertTrue(resumed.errors.contains("error: cannot resume: the journal \(work.file("journal.jsonl")) is damaged at line 2"), resumed.errors)
        XCTAssertTrue(resumed.errors.contains("stopping plugin: the run could not start"), resumed.errors)
    }

    /// The broker kills itself (a real SIGKILL) just after saving the batch that holds the plugin's ManagedSettings
    /// write — the OS has applied it and answered, and the reply was never sent — and is resumed on the same state
    /// folder and journal. Before the fix the call timed out and the event was recorded as handled: the handling
    /// never ended (no `app.sup.calls-done`). Now it is handled again: the write, made again, changes nothing and is
    /// announced once; each step and the end are journaled once.
    func testABrokerKilledBeforeSendingTheReplyToAWriteHasTheHandlingDoneOnce() throws {
        let work = TemporaryDirectory(prefix: "sbreply")
        let journal = try playKilledThenResumed(fixtureConfiguration, Self.oneCallsStep, crash: ["--crash-after-saving", "managedsettings.write.request"],
                                                clock: ["--clock", "scaled", "--speed", "60"], work: work)
        XCTAssertEqual(journal.filter { $0.topic == "managedsettings.changed" && $0.bodyValue["writer"]?.stringValue == "slow" }.count, 1, "the write, announced once")
        XCTAssertEqual(journal.filter { $0.topic == "app.sup.step" }.compactMap { $0.bodyValue["step"]?.intValue }, [0, 1, 2], "each step journaled once")
        XCTAssertEqual(journal.filter { $0.topic == "app.sup.calls-done" }.count, 1, "the handling ended, once")
        XCTAssertEqual(journal.filter { $0.topic == "app.sup.call-failed" }.map(\.bodyValue.jsonText), [])
    }


    /// The broker journals a batch, saves it to bus.sqlite, then sends it. Killed (by itself, at that exact point)
    /// just before or just after the save of the batch holding a plugin's publication (the echo: the plugin hangs
    /// the first time before recording its cause as handled, so its next process publishes it again), and resumed
    /// on the same state folder and journal (scaled clock: deliveries go out as they are sequenced): the echo is
    /// in the journal once, and the plugin that subscribes to it is given it once, with that sequence number.
    /// Before the fix the echo went out before the save and the journal kept it: made again, it was sequenced twice.
    func testABrokerKilledAroundTheSaveOfAPublicationJournalsAndDeliversItOnce() throws {
        try killAroundTheSaveOfAnEcho(configuration: fixtureConfiguration, clock: ["--clock", "scaled", "--speed", "60"])
    }

    /// The echo scenario with a listener, played killed just before and just after the save of the first echo's batch
    /// and resumed: each echo is journaled once, and the listener is given each journaled echo once.
    func killAroundTheSaveOfAnEcho(configuration base: String, clock: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let configuration = base + """

              - {name: listener, executable: \(BuildProducts.path("fixture-supervised")), arguments: [--listener], role: generic}
            """
        let scenario = """
            name: echo-once
            start: 2026-03-07T07:00
            timeZone: UTC
            end: day 1 07:03
            steps:
              - {at: "07:00:30", publish: {topic: app.sup.echo-then-hang, body: {n: 1}}}
              - {at: "07:02:00", publish: {topic: app.sup.echo-then-hang, body: {n: 2}}}
            """
        for crash in ["--crash-before-saving", "--crash-after-saving"] {
            let work = TemporaryDirectory(prefix: "sbsave")
            let journal = try playKilledThenResumed(configuration, scenario, crash: [crash, "app.sup.echo"], clock: clock, work: work, file: file, line: line)
            let echoes = journal.filter { $0.topic == "app.sup.echo" }
            XCTAssertEqual(echoes.prefix(5).map { $0.bodyValue["n"]?.intValue }, [1, 2], "\(crash): each echo journaled once", file: file, line: line)
            XCTAssertTrue(zip(journal, journal.dropFirst()).allSatisfy { $0.seq < $1.seq }, "\(crash): numbers go on", file: file, line: line)
            let heard = try String(contentsOfFile: work.file("state/containers/listener/listener-heard"), encoding: .utf8).split(separator: "\n").map(String.init)
            XCTAssertEqual(heard, echoes.map { "\($0.seq) \($0.bodyValue["n"]?.intValue ?? -1)" },
                           "\(crash): the listener was given each journaled echo once, and nothing else", file: file, line: line)
        }
    }

    /// An observer's publications are held until the bus settles (virtual time). The broker killed just before or
    /// just after saving the batch that holds one, and resumed: it is journaled once. Before the fix the held
    /// publication was in memory only, and the copy the observer's next process sent again was dropped as a
    /// repeat (its fingerprint was saved): lost.
    func testAnObserversHeldPublicationSurvivesABrokerKill() throws {
        let configuration = """
            name: held
            bus: {heartbeatMs: 200, sessionTimeoutMs: 1000}
            plugins:
              - {name: observer, executable: \(BuildProducts.path("fixture-supervised")), arguments: [--observer], role: generic}
            """
        let scenario = """
            name: held
            start: 2026-03-07T07:00
            timeZone: UTC
            end: day 1 08:00
            steps:
              - {at: "07:10", publish: {topic: app.sup.tell, body: {n: 1}}}
              - {at: "07:20", publish: {topic: app.sup.tell, body: {n: 2}}}
            """
        for crash in ["--crash-before-saving", "--crash-after-saving"] {
            let work = TemporaryDirectory(prefix: "sbheld")
            let told = try playKilledThenResumed(configuration, scenario, crash: [crash, "app.sup.told"], work: work).filter { $0.topic == "app.sup.told" }
            XCTAssertEqual(told.prefix(5).map { $0.bodyValue["n"]?.intValue }, [1, 2], "\(crash): each held publication journaled once")
            XCTAssertEqual(Set(told.map(\.source)), ["observer"])
        }
    }
}
