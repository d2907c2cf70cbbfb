@testable import Broker
import BusClient
import BusProtocol
import DeviceAPI
@testable import DeviceOS
import Foundation
import InMemoryRun
import InProcessPlugins
import ScreenTime
import ShieldBusSDK
import SQLite
import ShieldBusTestSupport
import XCTest

/// SDK plugins hosted on threads of the test's process (`InProcessPlugin`), each with its own runtime, launch
/// environment and device clock, reach the broker through their `BusConnection`'s transport: libzmq's socket, or the
/// broker's in-memory transport. A device day played with them journals the same byte for byte over both; and a
/// scenario day with them as the broker's configured plugins journals in memory what their processes journal.
final class InProcessPluginTests: XCTestCase {
    /// The broker supervises the plugins: processes over libzmq, threads over the in-memory transport. The scenario
    /// sets up, opens a shielded app and presses its button; the two journals are the same byte for byte.
    func testAScenarioDayWithSupervisedPluginsJournalsInMemoryWhatTheirProcessesJournal() throws {
        let processes = try SupervisedDay.journal(hostingPluginsWith: nil)
        let launcher = HostedLauncher(programs: ["fixture-in-process": InProcessPlugins.program])
        let inMemory = try SupervisedDay.journal(hostingPluginsWith: launcher)
        XCTAssertEqual(launcher.started, ["app", "shield", "action"], "every plugin was hosted, none started as a process")
        let zone = try FocusDevice.settings(catalog: FocusDevice.catalog()).timeZone.identifier
        XCTAssertEqual(launcher.zones, ["app": zone, "shield": zone, "action": zone], "each launch starts in the device's zone (TZ)")
        let journal = try inMemory.split(separator: 0x0A).map { try WireCodec.decodeEnvelope(Array($0)) }
        XCTAssertEqual(journal.first { $0.topic == "app.setup.done" }?.bodyValue, ["runtime": "app", "authorized": true, "shielded": true])
        let drawn = try XCTUnwrap(journal.last { $0.topic == DeviceTopic.configurationRequest })
        XCTAssertEqual(journal.first { $0.topic == DeviceTopic.configurationReply }?.bodyValue["configuration"]?["title"]?["text"]?.stringValue,
                       "shield at \(drawn.time)")
        XCTAssertEqual(journal.first { $0.topic == DeviceTopic.actionReply }?.bodyValue["response"]?.stringValue, "close")
        XCTAssertEqual(journal.last?.topic, "bus.stopping")
        XCTAssertEqual(processes, inMemory, "the journals differ:\n--- processes over libzmq\n\(String(decoding: processes, as: UTF8.self))--- in memory\n\(String(decoding: inMemory, as: UTF8.self))")
    }

    /// The app sets up in its turn (authorization, then a shield), the person opens the shielded app and presses its
    /// button; the shield and the action delegate answer from their own threads, each naming the runtime it found
    /// (`PluginRuntime.current`) and the time its `Date()` read.
    func testADeviceDayWithPluginsOnThreadsJournalsTheSameOverLibzmqAndInMemory() throws {
        let overZeroMQ = try deviceDay(over: .zeroMQ)
        let inMemory = try deviceDay(over: .inMemoryThreaded)
        let journal = try inMemory.split(separator: 0x0A).map { try WireCodec.decodeEnvelope(Array($0)) }
        XCTAssertEqual(journal.first { $0.topic == "app.setup.done" }?.bodyValue, ["runtime": "app", "authorized": true, "shielded": true])
        // Each plugin found its own runtime, and its Date() read the bus time of the request it handled.
        let drawn = try XCTUnwrap(journal.last { $0.topic == DeviceTopic.configurationRequest })
        let shown = try XCTUnwrap(journal.first { $0.topic == DeviceTopic.configurationReply })
        XCTAssertEqual(shown.bodyValue["configuration"]?["title"]?["text"]?.stringValue, "shield at \(drawn.time)")
        let handled = try XCTUnwrap(journal.first { $0.topic == DeviceTopic.actionReply })
        XCTAssertEqual(handled.bodyValue["response"]?.stringValue, "close", "the action delegate found its own runtime")
        XCTAssertEqual(journal.filter { $0.topic == "plugin.down" }.count, 3, "each plugin said goodbye")
        XCTAssertEqual(overZeroMQ, inMemory, "the journals differ:\n--- libzmq\n\(String(decoding: overZeroMQ, as: UTF8.self))--- in memory\n\(String(decoding: inMemory, as: UTF8.self))")
    }

    /// A kill cuts a hosted plugin's in-memory connection at once, as SIGKILL cuts a process's socket: its thread ends,
    /// it says no goodbye (the broker keeps its session until it ends it itself), and what
    /// its end sends afterwards never reaches the broker; a stop, by contrast, says goodbye.
    func testAKilledHostedPluginIsCutOffAtOnceAndSaysNoGoodbye() throws {
        let exchange = try SteppedExchange(.inMemoryThreaded, grants: [ClientGrant(roles: [.app, .shield])])
        defer { exchange.finish() }
        let killed = InProcessPlugin.start(name: "app", environment: exchange.pluginEnvironment.merging(["SHIELDBUS_PRINCIPAL_CLASS": "SettingUpApp"]) { $1 },
                                           InProcessPlugins.program)
        defer { killed.stop() }
        let stopped = InProcessPlugin.start(name: "shield", environment: exchange.pluginEnvironment, try XCTUnwrap(InProcessPlugins.component(named: "NamingShield")))
        defer { stopped.stop() }
        try exchange.turnUntilQuiet("both connected") { exchange.broker.sessions.named("app") != nil && exchange.broker.sessions.named("shield") != nil }
        XCTAssertNil(killed.error.map { "\($0)" } ?? stopped.error.map { "\($0)" })

        let started = monotonicMilliseconds()
        killed.kill()
        XCTAssertTrue(killed.awaitEnd(timeoutSeconds: 10) && killed.wasKilled, "the killed plugin's thread ended")
        XCTAssertLessThan(monotonicMilliseconds() - started, 2_500, "it ended at once, not when a wait's time was up")
        XCTAssertTrue(stopped.stop(), "the stopped plugin ended")
        try exchange.turnUntilQuiet("the stopped plugin's goodbye taken in") { exchange.broker.sessions.named("shield") == nil }
        XCTAssertNotNil(exchange.broker.sessions.named("app"), "the killed plugin said no goodbye: its session is still the broker's to end")

        // An end cut from another thread: what it sends is lost, and a wait on it ends at once.
        let end = exchange.transport.connect()
        end.cut()
        try end.send(WireCodec.encode(ClientMessage.bye))
        XCTAssertFalse(try exchange.transport.wait(timeoutMilliseconds: 0, wakeDescriptor: nil).messagesWaiting, "nothing a cut end sent arrived")
        let waited = monotonicMilliseconds()
        XCTAssertFalse(try end.waitReadable(timeoutMilliseconds: 10_000).ready)
        XCTAssertLessThan(monotonicMilliseconds() - waited, 2_500, "a wait on a cut end ends at once, not when its 10 s are up")
    }

    /// "Connected" above means the broker took the plugin's hello; the plugin may still be waiting for its welcome,
    /// which the cut throws away. Killed then — here always: the broker is not turned before the kill — its connect
    /// ends at once, as a killed process's does, instead of when its 10 s for a welcome are up.
    func testAHostedPluginKilledWhileWaitingForItsWelcomeEndsAtOnce() throws {
        let exchange = try SteppedExchange(.inMemoryThreaded, grants: [ClientGrant(roles: [.app])])
        defer { exchange.finish() }
        let killed = InProcessPlugin.start(name: "app", environment: exchange.pluginEnvironment.merging(["SHIELDBUS_PRINCIPAL_CLASS": "SettingUpApp"]) { $1 },
                                           InProcessPlugins.program)
        defer { killed.stop() }
        // Its hello is at the broker, which has not read it: the plugin is waiting for a welcome, or about to.
        XCTAssertTrue(try exchange.transport.wait(timeoutMilliseconds: 10_000, wakeDescriptor: nil).messagesWaiting, "the plugin said hello")

        let started = monotonicMilliseconds()
        killed.kill()
        XCTAssertTrue(killed.awaitEnd(timeoutSeconds: 10) && killed.wasKilled, "the killed plugin's thread ended")
        XCTAssertLessThan(monotonicMilliseconds() - started, 2_500, "its wait for a welcome ended at once, not when its 10 s were up")
        guard case .cut? = killed.error as? BusClientError else {
            return XCTFail("its connect ended because it was cut, not because no welcome came: \(killed.error.map { "\($0)" } ?? "no error")")
        }
        try exchange.turnUntilQuiet("its hello taken in") { exchange.broker.sessions.named("app") != nil }
    }

    /// A killed hosted plugin ends as a killed process does: its handling of the event in hand, which goes on in its
    /// thread after the cut, is not recorded, so that its next process handles that event again instead of skipping it
    /// as done (docs/protocol.md § 9.1). An event handled before the kill is recorded.
    func testAnEventInHandAtAHostedKillIsNotRecordedAsHandled() throws {
        let exchange = try SteppedExchange(.inMemoryThreaded, grants: [ClientGrant(roles: [.app, .tool, .tap])])
        defer { exchange.finish() }
        let state = TemporaryDirectory(prefix: "sbinhand")
        let supervised = ["SHIELDBUS_PRINCIPAL_CLASS": "HoldingApp", "SHIELDBUS_SUPERVISED": "1", "SHIELDBUS_STATE_DIR": state.path]
        let killed = InProcessPlugin.start(name: "app", environment: exchange.pluginEnvironment.merging(supervised) { $1 }, InProcessPlugins.program)
        defer { killed.stop() }
        try exchange.turnUntilQuiet("the app connected") { exchange.broker.sessions.named("app") != nil || killed.hasEnded }
        XCTAssertNil(killed.error.map { "\($0)" })
        let person = try exchange.join("person", role: .tool, subscriptions: [])
        let tap = try exchange.join("tap", role: .tap, subscriptions: ["app.hold."])

        try exchange.step(person, .publish(Publish(topic: "app.hold.later", body: [:])), until: "the first event handled") { true }
        try exchange.step(person, .publish(Publish(topic: "app.hold.begin", body: [:])))
        XCTAssertEqual(HoldingGate.entered.wait(timeout: .now() + 10), .success, "the app has the event in hand")
        let handledFirst = try XCTUnwrap(tap.events.first { $0.topic == "app.hold.later" }).seq
        let inHand = try XCTUnwrap(tap.events.first { $0.topic == "app.hold.begin" }).seq

        killed.kill()
        HoldingGate.release.signal()
        XCTAssertTrue(killed.awaitEnd(timeoutSeconds: 10) && killed.wasKilled, "the killed plugin's thread ended")
        let record = try SQLiteConnection(path: state.path + "/" + StateFolder.handledEventsRecord(plugin: "app"), flags: .readOnly)
        func recorded(_ seq: UInt64) throws -> Bool {
            try record.prepare("SELECT 1 FROM handled WHERE seq = ?", bindings: [.integer(Int64(seq))]).step()
        }
        XCTAssertTrue(try recorded(handledFirst), "the event handled before the kill is recorded")
        XCTAssertFalse(try recorded(inHand), "the event in hand at the kill is not recorded: its next process handles it")
    }

    private func deviceDay(over kind: SteppedExchange.Kind) throws -> [UInt8] {
        let catalog = try FocusDevice.catalog()
        var settings = FocusDevice.settings(catalog: catalog)
        settings.replyTimeoutMilliseconds = 600_000
        let exchange = try SteppedExchange(kind, grants: [ClientGrant(roles: [.tap, .app, .shield, .action])]) { work in
            [try DeviceOS(settings: settings, catalog: catalog, statePath: work.path + "/device.sqlite")]
        }
        defer { exchange.finish() }
        let tap = try exchange.join("seam-tap", role: .tap, subscriptions: [""])
        let person = try exchange.join("person", role: .tool, subscriptions: [])
        // One at a time, so that their hellos come in the same order in both runs.
        var plugins: [InProcessPlugin] = []
        defer { for plugin in plugins { plugin.stop() } }
        for configured in SupervisedDay.plugins {
            let name = configured.name
            let make = try XCTUnwrap(InProcessPlugins.component(named: configured.principalClass))
            let plugin = InProcessPlugin.start(name: name, environment: exchange.pluginEnvironment, make)
            plugins.append(plugin)
            try exchange.turnUntilQuiet("\(name) connected") { exchange.broker.sessions.named(name) != nil || plugin.hasEnded }
            XCTAssertNil(plugin.error, "\(name) stopped: \(plugin.error.map { "\($0)" } ?? "")")
        }
        let setUp = Publish(topic: "app.setup.begin", body: [:])
        try exchange.step(person, .publish(setUp), until: "the app set up") { tap.topics.contains("app.setup.done") }
        try exchange.step(person, .publish(Publish(topic: "input.open.request", body: ["app": "Instagram"], corr: "do-1")), until: "the shield drawn") {
            tap.topics.contains(DeviceTopic.shieldShown)
        }
        try exchange.step(person, .publish(Publish(topic: "input.press.request", body: ["button": "primary"], corr: "do-2")), until: "the button handled") {
            tap.topics.contains(DeviceTopic.actionHandled)
        }
        // Goodbyes one at a time, each taken in before the next.
        for plugin in plugins {
            XCTAssertTrue(plugin.stop(), "\(plugin.name) stopped")
            try exchange.turnUntilQuiet("\(plugin.name) gone") { exchange.broker.sessions.named(plugin.name) == nil }
        }
        XCTAssertEqual(person.events.filter(\.isReply).map { $0.bodyValue["ok"] }, [true, true], "the person's open and press were handled")
        exchange.finish()
        return try Array(Data(contentsOf: URL(fileURLWithPath: exchange.journalPath)))
    }
}
