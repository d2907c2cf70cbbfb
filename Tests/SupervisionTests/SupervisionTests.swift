import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Plugin supervision through the real broker and real plugin processes (the fixture-supervised plugin):
/// restarts with the subscriptions back, hung plugins killed, crash loops given up on, and plugins refused at
/// start with a message that says what is wrong and how to fix it.
final class SupervisionTests: XCTestCase {
    /// A configuration running the fixture as `name`, with a short heartbeat so a hung plugin is found within a second.
    func configuration(_ plugins: [(name: String, extra: String)], top: String = "") -> String {
        var text = "name: supervision\nbus: {heartbeatMs: 200, sessionTimeoutMs: 1000}\n\(top)plugins:\n"
        for plugin in plugins {
            text += "  - {name: \(plugin.name), executable: \(BuildProducts.path("fixture-supervised")), role: generic\(plugin.extra)}\n"
        }
        return text
    }

    func plugin(_ name: String, in broker: BrokerProcess) -> JSONValue? {
        (try? broker.status())?["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == name }
    }

    /// Waits until `name` is connected with a pid other than `previous`; returns its pid.
    @discardableResult
    func waitConnected(_ name: String, in broker: BrokerProcess, notPid previous: Int64? = nil, restarts: Int64 = 0,
                       file: StaticString = #filePath, line: UInt = #line) -> Int64 {
        var pid: Int64 = 0
        waitUntil("\(name) to be connected after \(restarts) restart(s) (broker log: \(broker.log(tail: 10)))", file: file, line: line) {
            let entry = plugin(name, in: broker)
            pid = entry?["pid"]?.intValue ?? 0
            return entry?["connected"]?.boolValue == true && entry?["restarts"]?.intValue == restarts && pid != previous
        }
        return pid
    }

    /// Publishes a ping and returns the pid that answered it.
    func ping(_ n: Int64, through tap: BusConnection, file: StaticString = #filePath, line: UInt = #line) throws -> Int64? {
        try tap.publish(Publish(topic: "app.sup.ping", body: ["n": .int(n)]))
        let events = try collectEvents(from: tap) { $0.contains { $0.topic == "app.sup.pong" && $0.bodyValue["n"]?.intValue == n } }
        let pong = events.first { $0.topic == "app.sup.pong" && $0.bodyValue["n"]?.intValue == n }
        XCTAssertNotNil(pong, "no pong for ping \(n)", file: file, line: line)
        return pong?.bodyValue["pid"]?.intValue
    }

    /// The fixture answers pings with its own pid, which it shares with `status` only unsandboxed (a sandboxed plugin
    /// is pid 1 of its namespace): the tests that match the two run the plugins so.
    static let pidsShared = ["--no-sandbox"]

    func testACrashedPluginIsRestartedAndGetsItsSubscriptionsBack() throws {
        let broker = try BrokerProcess(configuration: configuration([("crashy", "")]), arguments: Self.pidsShared)
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup.", "plugin.", "bus.error"])
        let first = waitConnected("crashy", in: broker)
        XCTAssertEqual(try ping(1, through: tap), first)
        // Its own pong came back to it (it subscribes to `app.sup.`): acknowledged before the crash is asked for.
        // An ack still queued when the process exits is lost with it, and the broker then blames the crash on the
        // pong (its oldest unacknowledged event): the pong would be given up and the crash delivered twice more.
        waitUntil("crashy to acknowledge everything it was given") { plugin("crashy", in: broker)?["lag"]?.intValue == 0 }

        // The event it crashed on is delivered once more (at least once); the second crash on it gives it up.
        try tap.publish(Publish(topic: "app.sup.crash", body: [:]))
        let events = try collectEvents(from: tap) { $0.contains { $0.bodyValue["code"]?.stringValue == "delivery-abandoned" } }
        let crash = events.first { $0.topic == "app.sup.crash" }
        let abandoned = events.first { $0.bodyValue["code"]?.stringValue == "delivery-abandoned" }
        XCTAssertEqual(abandoned?.bodyValue["receiver"]?.stringValue, "crashy", "\(String(describing: abandoned?.bodyValue))")
        XCTAssertEqual(abandoned?.bodyValue["seq"]?.intValue, crash.map { Int64($0.seq) }, "the crash is what is given up")
        let third = waitConnected("crashy", in: broker, notPid: first, restarts: 2)
        XCTAssertFalse(processExists(Int32(first)))
        // The new process receives the events it subscribed to, without anyone subscribing it again.
        XCTAssertEqual(try ping(2, through: tap), third, "the restarted plugin answers")
        let entry = try XCTUnwrap(plugin("crashy", in: broker))
        XCTAssertEqual(entry["subscriptions"]?.arrayValue?.first, "app.sup.")
        XCTAssertEqual(entry["lastExit"]?.stringValue, "exited with status 3")
        XCTAssertEqual(entry["lastError"]?.stringValue, "exited with status 3: crashy: crashing, as asked", "the run's last words")
        XCTAssertEqual(entry["state"]?.stringValue, "running")
    }

    /// What each of a process's descriptors from 3 up points at, where that names one object (a file, a socket, a pipe;
    /// not an anonymous inode such as an eventfd, whose name is the same for all).
    func namedDescriptors(of pid: Int32) throws -> Set<String> {
        let folder = "/proc/\(pid)/fd"
        return Set(try FileManager.default.contentsOfDirectory(atPath: folder).compactMap { fd -> String? in
            guard let number = Int(fd), number >= 3, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(fd)"),
                  !target.hasPrefix("anon_inode:") else { return nil }
            return target
        })
    }

    func testAPluginInheritsNoDescriptorOfTheBroker() throws {
        let broker = try BrokerProcess(configuration: configuration([("crashy", "")]))
        let pid = Int32(waitConnected("crashy", in: broker))
        let brokers = try namedDescriptors(of: broker.process.processIdentifier)
        // The broker holds its journal, its store, its sockets and the socket Foundation's `Process` gave it (how the
        // test process learns it ended): a plugin holding that one keeps the broker "running" for the test until it ends.
        XCTAssertTrue(brokers.contains { $0.hasPrefix("socket:") }, "\(brokers)")
        XCTAssertTrue(brokers.contains { $0.hasSuffix(".sqlite") }, "\(brokers)")
        let plugins = try namedDescriptors(of: pid)
        XCTAssertEqual(plugins.intersection(brokers), [], "the plugin holds the broker's descriptors")
    }

    func testAHungPluginIsKilledAndRestarted() throws {
        let broker = try BrokerProcess(configuration: configuration([("hangs", "")]), arguments: Self.pidsShared)
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup.", "plugin.down"])
        let first = waitConnected("hangs", in: broker)

        try tap.publish(Publish(topic: "app.sup.hang", body: [:]))
        // Pings queued behind the hang are not lost with the killed process: its next process answers them.
        for n in 1...5 { try tap.publish(Publish(topic: "app.sup.ping", body: ["n": .int(Int64(n))])) }
        let events = try collectEvents(from: tap, timeoutSeconds: 20) { events in
            Set(events.filter { $0.topic == "app.sup.pong" }.compactMap { $0.bodyValue["n"]?.intValue }).count == 5
        }
        let down = events.first { $0.topic == "plugin.down" }
        XCTAssertTrue(down?.bodyValue["reason"]?.stringValue?.hasPrefix("heartbeat-timeout: no message for") == true, "\(String(describing: down?.bodyValue))")
        let pongs = events.filter { $0.topic == "app.sup.pong" }
        XCTAssertEqual(pongs.compactMap { $0.bodyValue["n"]?.intValue }, [1, 2, 3, 4, 5], "every ping answered once, in order")
        // The hang itself was redelivered once (the second process hung on it too), then given up.
        XCTAssertEqual(try broker.status()["counters"]?["errorsByCode"]?["heartbeat-timeout"]?.intValue, 2)
        XCTAssertEqual(try broker.status()["counters"]?["errorsByCode"]?["delivery-abandoned"]?.intValue, 1)
        let third = waitConnected("hangs", in: broker, notPid: first, restarts: 2)
        XCTAssertFalse(processExists(Int32(first)), "the hung process was killed")
        XCTAssertEqual(Set(pongs.compactMap { $0.bodyValue["pid"]?.intValue }), [third], "the pings reached the third process")
        let entry = try XCTUnwrap(plugin("hangs", in: broker))
        XCTAssertTrue(entry["lastExit"]?.stringValue?.hasPrefix("killed by SIGKILL (stopped heartbeating: no message for") == true, entry.jsonText)
    }

    func testACrashLoopIsMarkedFailedWithItsLastExitWhileTheRestGoesOn() throws {
        let broker = try BrokerProcess(configuration: configuration([("loops", ", arguments: [--crash-at-start]"), ("steady", "")]), arguments: Self.pidsShared)
        waitUntil("the crash loop to be given up on (log: \(broker.log(tail: 10)))") {
            plugin("loops", in: broker)?["state"]?.stringValue == "failed"
        }
        let entry = try XCTUnwrap(plugin("loops", in: broker))
        XCTAssertEqual(entry["restarts"]?.intValue, 4, "five runs: the first and four restarts")
        XCTAssertEqual(entry["lastExit"]?.stringValue, "exited with status 3")
        XCTAssertEqual(entry["lastError"]?.stringValue,
                       "crash loop: 5 failures within 30 s; last: exited with status 3: loops: crashing at start, as asked")
        XCTAssertNil(entry["pid"])
        XCTAssertTrue(broker.log().contains("plugin failed; not restarting it"), broker.log())

        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup."])
        XCTAssertEqual(try ping(1, through: tap), waitConnected("steady", in: broker), "the other plugin goes on")

        // `shieldbus status`, for people and for programs.
        let table = try CommandRun.shieldbus(["status", "--runtime-dir", broker.runtime.path])
        XCTAssertEqual(table.status, 0, table.errors)
        let lines = table.output.split(separator: "\n").map(String.init)
        let header = try XCTUnwrap(lines.first { $0.hasPrefix("PLUGIN") })
        for column in ["PID", "UP", "RESTARTS", "LAG", "STATE"] { XCTAssertTrue(header.contains(column), header) }
        let row = try XCTUnwrap(lines.first { $0.hasPrefix("loops ") }, table.output)
        XCTAssertEqual(row.split(separator: " ").prefix(6).map(String.init), ["loops", "generic", "failed", "-", "-", "4"], row)
        XCTAssertTrue(table.output.contains("last error: crash loop: 5 failures within 30 s; last: exited with status 3: loops: crashing at start, as asked"), table.output)
        XCTAssertTrue(table.output.contains("last exit: exited with status 3"), table.output)
        let steady = try XCTUnwrap(lines.first { $0.hasPrefix("steady ") }, table.output)
        XCTAssertEqual(steady.split(separator: " ")[2], "running", steady)

        let json = try CommandRun.shieldbus(["status", "--json", "--runtime-dir", broker.runtime.path])
        let report = try JSONValue(parsing: json.output)
        let loops = try XCTUnwrap(report["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == "loops" })
        XCTAssertEqual(loops["state"]?.stringValue, "failed")
        XCTAssertEqual(loops["restarts"]?.intValue, 4)
        XCTAssertEqual(loops["lastExit"]?.stringValue, "exited with status 3")
        XCTAssertEqual(loops["log"]?.stringValue, broker.runtime.logsPath + "/loops.log")
        let running = try XCTUnwrap(report["plugins"]?.arrayValue?.first { $0["name"]?.stringValue == "steady" })
        for key in ["pid", "uptimeMs", "processUptimeMs", "lag", "restarts"] { XCTAssertNotNil(running[key], "\(key) in \(running.jsonText)") }
    }

    /// A day whose plugin crashed and was given up on fails, even with nothing else wrong: iOS would say nothing (it
    /// shows its default shield when a shield extension crashes), so the run does — `run health DEGRADED` and exit 3,
    /// as explore judges its days. The same day with a plugin that keeps running is healthy.
    func testARunWhosePluginCrashedIsDegradedThoughNothingElseWentWrong() throws {
        let work = TemporaryDirectory(prefix: "sbcrashday")
        let scenario = work.file("day.yml")
        try "name: one-step\nstart: 2026-11-23T08:00\nsteps:\n  - {at: \"08:00\", setClock: \"+1h\"}\n".write(toFile: scenario, atomically: true, encoding: .utf8)
        func play(_ plugins: [(name: String, extra: String)]) throws -> CommandRun {
            let config = work.file("supervision-\(plugins.count).yml")
            try configuration(plugins).write(toFile: config, atomically: true, encoding: .utf8)
            return try CommandRun.shieldbus(["run", "--config", config, "--scenario", scenario, "--quiet", "--runtime-dir", work.file("run-\(plugins.count)")],
                                            timeoutSeconds: 60)
        }
        let crashing = try play([("loops", ", arguments: [--crash-at-start]"), ("steady", "")])
        XCTAssertEqual(crashing.status, 3, crashing.output + crashing.errors)
        let said = crashing.output + crashing.errors
        XCTAssertTrue(said.contains("run health        DEGRADED: "), said)
        XCTAssertTrue(said.contains("plugin-crashed ×5 (first: loops: exited with status 3)"), said)
        XCTAssertTrue(said.contains("plugin-failed ×1 (first: loops: crash loop: 5 failures within 30 s"), said)

        let steady = try play([("steady", "")])
        XCTAssertEqual(steady.status, 0, steady.output + steady.errors)
        XCTAssertFalse((steady.output + steady.errors).contains("DEGRADED"), steady.output + steady.errors)
    }

    /// In virtual time a crash loop is five failures within 30 s of bus time: a plugin that crashes once a minute of
    /// the day is restarted each time, however fast the machine plays those minutes (in wall time they fall within
    /// far less than 30 s, and how far apart depends on the machine's load, which must not decide a journal).
    func testInVirtualTimeCrashesMinutesApartAreNoCrashLoopHoweverFastTheyArePlayed() throws {
        let work = TemporaryDirectory(prefix: "sbcrashminutes")
        let scenario = work.file("day.yml")
        var text = "name: crash-each-minute\nstart: 2026-11-23T08:00\nsteps:\n"
        for n in 1...6 { text += "  - {at: \"08:0\(n)\", publish: {topic: app.sup.crash-once, body: {n: \(n)}}}\n" }
        text += "  - {at: \"08:10\", setClock: \"+1h\"}\n"
        try text.write(toFile: scenario, atomically: true, encoding: .utf8)
        let config = work.file("supervision.yml")
        try configuration([("loops", "")]).write(toFile: config, atomically: true, encoding: .utf8)
        let run = try CommandRun.shieldbus(["run", "--config", config, "--scenario", scenario, "--quiet", "--runtime-dir", work.file("run")],
                                           timeoutSeconds: 60)
        let said = run.output + run.errors
        XCTAssertTrue(said.contains("plugin-crashed ×6 (first: loops: exited with status 3)"), said)
        XCTAssertFalse(said.contains("plugin-failed"), "six crashes a minute apart are no crash loop:\n\(said)")
    }

    /// A plugin given up on comes back with the device's restart once its executable is fixed, as every process does
    /// when a phone restarts; `status` then shows it running.
    func testAPluginGivenUpOnStartsAgainWithADeviceRestart() throws {
        let work = TemporaryDirectory(prefix: "sbrevive")
        let broken = work.file("broken")
        XCTAssertTrue(FileManager.default.createFile(atPath: broken, contents: Data()))
        let broker = try BrokerProcess(configuration: configuration([("loops", ", arguments: [--crash-at-start-while, \(broken)]"), ("steady", "")]))
        waitUntil("the crash loop to be given up on (log: \(broker.log(tail: 10)))") { plugin("loops", in: broker)?["state"]?.stringValue == "failed" }
        try FileManager.default.removeItem(atPath: broken)  // the build is fixed
        let restart = try CommandRun.shieldbus(["do", "restart", "--runtime-dir", broker.runtime.path])
        XCTAssertEqual(restart.status, 0, restart.errors)
        waitConnected("loops", in: broker, restarts: 5)
        XCTAssertEqual(plugin("loops", in: broker)?["state"]?.stringValue, "running")
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup."])
        XCTAssertNotNil(try ping(1, through: tap), "the plugins answer after the restart")
    }

    /// A plugin given up on, fixed, started again by `shieldbus plugin restart` without restarting the device; the
    /// command says what happened and fails when the plugin fails again or is not there.
    func testShieldbusPluginRestartRevivesAPluginGivenUpOnAndSaysWhenItFailsAgain() throws {
        let work = TemporaryDirectory(prefix: "sbplugrestart")
        let broken = work.file("broken")
        XCTAssertTrue(FileManager.default.createFile(atPath: broken, contents: Data()))
        let broker = try BrokerProcess(configuration: configuration([("loops", ", arguments: [--crash-at-start-while, \(broken)]"), ("steady", "")]))
        waitUntil("the crash loop to be given up on (log: \(broker.log(tail: 10)))") { plugin("loops", in: broker)?["state"]?.stringValue == "failed" }
        let steadyPid = plugin("steady", in: broker)?["pid"]?.intValue

        let still = try CommandRun.shieldbus(["plugin", "restart", "loops", "--runtime-dir", broker.runtime.path, "--wait-seconds", "20"])
        XCTAssertEqual(still.status, 1, "still broken: \(still.output) \(still.errors)")
        XCTAssertTrue(still.errors.contains("restarted loops (it was failed), but it failed again"), still.errors)

        try FileManager.default.removeItem(atPath: broken)  // the build is fixed
        let fixed = try CommandRun.shieldbus(["plugin", "restart", "loops", "--runtime-dir", broker.runtime.path, "--json"])
        XCTAssertEqual(fixed.status, 0, fixed.errors)
        let outcome = try JSONValue(parsing: fixed.output.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertEqual(outcome["outcome"]?.stringValue, "connected", fixed.output)
        XCTAssertEqual(outcome["was"]?.stringValue, "failed", fixed.output)
        XCTAssertEqual(plugin("loops", in: broker)?["state"]?.stringValue, "running")
        XCTAssertEqual(plugin("steady", in: broker)?["pid"]?.intValue, steadyPid, "the other plugin was left alone")

        let unknown = try CommandRun.shieldbus(["plugin", "restart", "lops", "--runtime-dir", broker.runtime.path])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.errors.contains("no plugin named 'lops'; the configuration's plugins: loops, steady"), unknown.errors)
    }

    /// `shieldbus do` never says "done" when a plugin the action was for has been given up on: it names the plugin,
    /// says nothing acted, exits with status 4 and `--json` carries the same; once the plugin is fixed and started
    /// again, the same action is done. A plugin given up on before it ever connected counts for every action (what
    /// it would have wanted is unknown).
    func testDoSaysWhenThePluginThatShouldActWasGivenUpOn() throws {
        let work = TemporaryDirectory(prefix: "sbdofail")
        let broken = work.file("broken")
        // The sandbox shows the plugin the folder its "build" breaks in.
        let folder = (broken as NSString).deletingLastPathComponent
        let broker = try BrokerProcess(configuration: configuration([("loops", ", arguments: [--crash-at-start-while, \(broken)], readable: [\"\(folder)\"]"), ("steady", "")]))
        waitConnected("loops", in: broker)
        func person(_ arguments: String...) throws -> (status: Int32, output: String, errors: String) {
            let run = try CommandRun.shieldbus(["do"] + arguments + ["--runtime-dir", broker.runtime.path])
            return (run.status, run.output, run.errors)
        }
        XCTAssertEqual(try person("habit", "read").status, 0, "with every plugin running, the habit is done")

        // The build breaks and the plugin crashes: it crash-loops until the supervisor gives up on it.
        XCTAssertTrue(FileManager.default.createFile(atPath: broken, contents: Data()))
        let tap = try broker.connect(name: "sup-tap", subscriptions: ["app.sup."])
        try tap.publish(Publish(topic: "app.sup.crash", body: [:]))
        waitUntil("the crash loop to be given up on (log: \(broker.log(tail: 10)))") { plugin("loops", in: broker)?["state"]?.stringValue == "failed" }

        let refused = try person("habit", "walk")
        XCTAssertEqual(refused.status, 4, "never done while the plugin the habit was for is given up on: \(refused.output) \(refused.errors)")
        XCTAssertFalse(refused.output.contains("done:"), refused.output)
        XCTAssertTrue(refused.errors.hasPrefix("not done: habit walk — nothing acted for loops: loops failed for good: crash loop"), refused.errors)
        XCTAssertTrue(refused.errors.contains("shieldbus plugin restart"), "says how to bring it back: \(refused.errors)")
        let json = try person("habit", "stretch", "--json")
        XCTAssertEqual(json.status, 4, json.errors)
        let report = try JSONValue(parsing: json.output.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertEqual(report["done"]?.boolValue, false, json.output)
        XCTAssertEqual(report["error"]?["code"]?.stringValue, "plugins-could-not-act", json.output)
        XCTAssertEqual(report["error"]?["plugins"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["loops"], json.output)
        XCTAssertTrue(report["error"]?["plugins"]?.arrayValue?.first?["why"]?.stringValue?.hasPrefix("failed for good: crash loop") == true, json.output)

        // Fixed and started again: the same action is done, and says so in JSON too.
        try FileManager.default.removeItem(atPath: broken)
        XCTAssertEqual(try CommandRun.shieldbus(["plugin", "restart", "loops", "--runtime-dir", broker.runtime.path]).status, 0)
        let done = try person("habit", "walk", "--json")
        XCTAssertEqual(done.status, 0, done.errors)
        XCTAssertEqual(try JSONValue(parsing: done.output.trimmingCharacters(in: .whitespacesAndNewlines))["done"]?.boolValue, true, done.output)
        broker.stop()

        // Given up on before it ever connected: no action can be vouched for.
        let never = try BrokerProcess(configuration: configuration([("loops", ", arguments: [--crash-at-start]"), ("steady", "")]))
        defer { never.stop() }
        waitUntil("the crash loop to be given up on (log: \(never.log(tail: 10)))") { plugin("loops", in: never)?["state"]?.stringValue == "failed" }
        let unknown = try CommandRun.shieldbus(["do", "habit", "read", "--runtime-dir", never.runtime.path])
        XCTAssertEqual(unknown.status, 4, "\(unknown.output) \(unknown.errors)")
        XCTAssertTrue(unknown.errors.contains("nothing acted for loops"), unknown.errors)
    }

    // MARK: Refused at start

    func testAnAppGroupThatIsNotDeclaredStopsTheConfigurationAtLoad() throws {
        let config = configuration([("grouped", ", appGroup: group.dev.shieldbus.focsu")],
                                   top: "appGroups:\n  - {name: group.dev.shieldbus.focus, slices: {grouped: [\"*\"]}}\n")
        let broker = try BrokerProcess(configuration: config, waitForReady: false)
        waitUntil("the broker to refuse the configuration") { !broker.process.isRunning }
        XCTAssertEqual(broker.process.terminationStatus, 2)
        let message = broker.log()
        XCTAssertTrue(message.contains("config.yml:6:"), message)
        XCTAssertTrue(message.contains("plugins[0].appGroup: plugin 'grouped' names the app group 'group.dev.shieldbus.focsu', which is not declared — did you mean 'group.dev.shieldbus.focus'?"), message)
        XCTAssertTrue(message.contains("declared app groups: group.dev.shieldbus.focus"), message)
    }

    /// A misspelt group in a reference plugin's options is caught when the configuration loads — with the file, line
    /// and the group meant — not when the plugin starts and fails while the broker runs on.
    func testAReportBuilderWhoseOptionsNameAMissingAppGroupStopsTheConfigurationAtLoad() throws {
        let config = """
            name: typo
            appGroups:
              - {name: group.dev.shieldbus.habitlock, slices: {reports: ["reports.*"]}}
            plugins:
              - {name: reports, executable: \(BuildProducts.path("report-builder")), role: report, options: {appGroup: group.dev.shieldbus.habitlok}}
            """
        let broker = try BrokerProcess(configuration: config, waitForReady: false)
        waitUntil("the broker to refuse its configuration") { !broker.process.isRunning }
        XCTAssertEqual(broker.process.terminationStatus, 2, broker.log())
        XCTAssertTrue(broker.log().contains("config.yml:5:"), broker.log())
        XCTAssertTrue(broker.log().contains("names the app group 'group.dev.shieldbus.habitlok', which is not declared — did you mean 'group.dev.shieldbus.habitlock'?"), broker.log())
        XCTAssertFalse(FileManager.default.fileExists(atPath: broker.runtime.logsPath + "/reports.log"), "no plugin was started")
    }

    func testAMonitorWhoseOptionIsOfTheWrongTypeStopsAtStartNamingThePluginTheKeyAndTheType() throws {
        let config = """
            name: mistyped
            appGroups:
              - {name: group.dev.shieldbus.habitlock, slices: {monitor: ["monitor.*"]}}
            plugins:
              - {name: monitor, executable: \(BuildProducts.path("activity-monitor")), role: monitor, options: {product: habit-lock, appGroup: group.dev.shieldbus.habitlock, store: 5}}
            """
        let broker = try BrokerProcess(configuration: config)
        waitUntil("the monitor to fail (log: \(broker.log(tail: 10)))") { plugin("monitor", in: broker)?["state"]?.stringValue == "failed" }
        let error = plugin("monitor", in: broker)?["lastError"]?.stringValue ?? ""
        XCTAssertTrue(error.contains("configuration error (exit status 78)"), error)
        XCTAssertTrue(error.contains("the options of plugin 'monitor' in the configuration do not fit ProductOptions: 'store': expected a string, found number"), error)
    }

    /// The notifier and the report builder read their options as the monitor does: a mistake names the plugin, the
    /// key and what was expected, and stops the plugin at start.
    func testANotifierAndAReportBuilderWhoseOptionIsOfTheWrongTypeStopAtStartNamingThePluginTheKeyAndTheType() throws {
        let config = """
            name: mistyped
            appGroups:
              - {name: group.dev.shieldbus.habitlock, slices: {reports: ["reports.*"], notifier: ["notifier.*"]}}
            plugins:
              - {name: reports, executable: \(BuildProducts.path("report-builder")), role: report, options: {appGroup: group.dev.shieldbus.habitlock, retentionDays: "35"}}
              - name: notifier
                executable: \(BuildProducts.path("notifier"))
                role: notifier
                options: {appGroup: group.dev.shieldbus.habitlock, rules: [{on: shield.shown, kind: k, title: t, body: b}], desktop: "no"}
            """
        let broker = try BrokerProcess(configuration: config)
        for name in ["reports", "notifier"] {
            waitUntil("\(name) to fail (log: \(broker.log(tail: 10)))") { plugin(name, in: broker)?["state"]?.stringValue == "failed" }
        }
        let reports = plugin("reports", in: broker)?["lastError"]?.stringValue ?? ""
        XCTAssertTrue(reports.contains("configuration error (exit status 78)"), reports)
        XCTAssertTrue(reports.contains("the options of plugin 'reports' in the configuration do not fit ReportBuilderOptions: 'retentionDays': expected a whole number, found string"), reports)
        let notifier = plugin("notifier", in: broker)?["lastError"]?.stringValue ?? ""
        XCTAssertTrue(notifier.contains("configuration error (exit status 78)"), notifier)
        XCTAssertTrue(notifier.contains("the options of plugin 'notifier' in the configuration do not fit NotifierOptions: 'desktop': expected true or false, found string"), notifier)
    }

    func testLargeOptionsReachThePluginThroughAFileNotTheEnvironment() throws {
        let blob = String(repeating: "x", count: 300_000)  // over Linux's 128 KiB limit for one environment string
        let broker = try BrokerProcess(configuration: configuration([("big", ", options: {blob: \(blob)}")]))
        let pid = waitConnected("big", in: broker)
        let environment = (FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        let file = try XCTUnwrap(environment.first { $0.hasPrefix("SHIELDBUS_PLUGIN_OPTIONS_FILE=") }?.split(separator: "=", maxSplits: 1).last.map(String.init))
        XCTAssertFalse(environment.contains { $0.hasPrefix("SHIELDBUS_PLUGIN_OPTIONS=") })
        let options = try JSONValue(parsing: Array(try XCTUnwrap(FileManager.default.contents(atPath: file))))
        XCTAssertEqual(options["blob"]?.stringValue?.count, 300_000)
    }

    func testAPluginWhoseAppGroupDoesNotExistFailsAtOnceWithTheGroupsThatDo() throws {
        // Past the configuration's check (the group is named only in the environment): the SDK checks at start.
        let config = configuration([("lost", ", environment: {SHIELDBUS_APP_GROUP: group.dev.shieldbus.lost}")],
                                   top: "appGroups:\n  - {name: group.dev.shieldbus.focus, slices: {lost: [\"*\"]}}\n")
        let broker = try BrokerProcess(configuration: config)
        waitUntil("the plugin to fail (log: \(broker.log(tail: 10)))") { plugin("lost", in: broker)?["state"]?.stringValue == "failed" }
        let entry = try XCTUnwrap(plugin("lost", in: broker))
        XCTAssertEqual(entry["restarts"]?.intValue, 0, "a configuration error is not retried")
        let error = entry["lastError"]?.stringValue ?? ""
        XCTAssertTrue(error.hasPrefix("configuration error (exit status 78), not restarted: exited with status 78: lost: the app group of this plugin's configuration entry (appGroup: group.dev.shieldbus.lost) cannot be opened: no app group named 'group.dev.shieldbus.lost' exists"), error)
        XCTAssertTrue(error.contains("Existing app groups: group.dev.shieldbus.focus"), error)
        let pluginLog = try String(contentsOfFile: broker.runtime.logsPath + "/lost.log", encoding: .utf8)
        XCTAssertTrue(pluginLog.contains("no app group named 'group.dev.shieldbus.lost' exists"), pluginLog)
        XCTAssertTrue(broker.log().contains("no app group named 'group.dev.shieldbus.lost' exists"), broker.log())
    }

    func testAWrongProtocolVersionIsRefusedAtHelloAndNotRetried() throws {
        let broker = try BrokerProcess(configuration: configuration([("future", #", arguments: ["--raw-hello", "{\"v\":2,\"role\":\"generic\"}"]"#)]))
        waitUntil("the plugin to fail (log: \(broker.log(tail: 10)))") { plugin("future", in: broker)?["state"]?.stringValue == "failed" }
        let entry = try XCTUnwrap(plugin("future", in: broker))
        XCTAssertEqual(entry["restarts"]?.intValue, 0)
        XCTAssertEqual(entry["lastError"]?.stringValue,
                       "refused at start: protocol version 2 is not supported; this broker speaks version(s) 1 — fix: make the plugin send \"v\": 1 (docs/protocol.md § 12.3), or use a broker that speaks its version")
        XCTAssertEqual(entry["lastExit"]?.stringValue, "exited with status 1")
        XCTAssertTrue(broker.log().contains("plugin refused at start"), broker.log())
    }

    /// A hello refused for a key written twice is still the plugin's last error: its name and credential are read
    /// both ways (first value kept, last kept), and they agree.
    func testAHelloWithARepeatedKeyIsRefusedAsThePluginsLastError() throws {
        let broker = try BrokerProcess(configuration: configuration([("twice", #", arguments: ["--raw-hello", "{\"v\":1,\"role\":\"generic\",\"subscribe\":[],\"subscribe\":[\"app.x\"]}"]"#)]))
        waitUntil("the plugin to fail (log: \(broker.log(tail: 10)))") { plugin("twice", in: broker)?["state"]?.stringValue == "failed" }
        let entry = try XCTUnwrap(plugin("twice", in: broker))
        XCTAssertEqual(entry["restarts"]?.intValue, 0, "the same hello would be refused again")
        let error = entry["lastError"]?.stringValue ?? ""
        XCTAssertTrue(error.hasPrefix("refused at start: "), error)
        XCTAssertTrue(error.contains("the key 'subscribe' appears twice in one object"), error)
    }

    func testAnUnknownRoleIsRefusedAtHelloWithTheRoles() throws {
        let broker = try BrokerProcess(configuration: configuration([("wizard", #", arguments: ["--raw-hello", "{\"v\":1,\"role\":\"wizard\"}"]"#)]))
        waitUntil("the plugin to fail (log: \(broker.log(tail: 10)))") { plugin("wizard", in: broker)?["state"]?.stringValue == "failed" }
        let error = plugin("wizard", in: broker)?["lastError"]?.stringValue ?? ""
        XCTAssertTrue(error.hasPrefix("refused at start: hello refused: unknown role 'wizard'; roles: monitor, shield, action"), error)
        XCTAssertTrue(error.contains("fix: have the plugin say hello with the name and role its configuration entry gives it"), error)
    }

    func testARoleOtherThanTheConfiguredOneIsRefusedWithHowToFixIt() throws {
        let broker = try BrokerProcess(configuration: configuration([("misrole", "")]).replacingOccurrences(of: "role: generic", with: "role: monitor"))
        waitUntil("the plugin to fail (log: \(broker.log(tail: 10)))") { plugin("misrole", in: broker)?["state"]?.stringValue == "failed" }
        let entry = try XCTUnwrap(plugin("misrole", in: broker))
        XCTAssertEqual(entry["restarts"]?.intValue, 0)
        XCTAssertEqual(entry["lastExit"]?.stringValue, "exited with status 78", "the SDK exits with EX_CONFIG when its hello is refused")
        XCTAssertTrue(entry["lastError"]?.stringValue?.hasPrefix("refused at start: hello refused: plugin 'misrole' is configured with role 'monitor' but said hello as 'generic'; set `role: generic` in its configuration entry, or make the plugin play the role 'monitor'") == true,
                      entry.jsonText)
        XCTAssertTrue(broker.log().contains("plugin refused at start"), broker.log())
    }
}
