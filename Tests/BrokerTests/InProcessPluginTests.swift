@testable import Broker
import BusClient
import BusProtocol
import DeviceAPI
@testable import DeviceOS
import Foundation
import InProcessPlugins
import ScreenTime
import ShieldBusSDK
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
        let launcher = ThreadLauncher()
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

/// Hosts the broker's configured plugins on threads of the test's process, each the fixture's component its
/// configuration entry names (`SHIELDBUS_PRINCIPAL_CLASS`).
private final class ThreadLauncher: InProcessLauncher {
    private(set) var started: [String] = []
    /// Each plugin's `TZ` at its last launch.
    private(set) var zones: [String: String] = [:]

    func start(_ spec: PluginSpec, environment: [String: String]) throws -> InProcessRun {
        guard let make = InProcessPlugins.component(named: environment["SHIELDBUS_PRINCIPAL_CLASS"] ?? "") else {
            throw SeamTestFailure("the fixture has no component for plugin \(spec.name)")
        }
        started.append(spec.name)
        zones[spec.name] = environment["TZ"]
        return HostedRun(InProcessPlugin.start(name: spec.name, environment: environment, make))
    }

    /// A hosted plugin as the supervisor sees a run.
    private final class HostedRun: InProcessRun {
        let plugin: InProcessPlugin
        init(_ plugin: InProcessPlugin) { self.plugin = plugin }
        var waitStatus: Int32? { plugin.exitStatus.map { $0 << 8 } }
        func requestStop() { plugin.requestStop() }

        func awaitEnd() -> Int32 {
            guard plugin.stop() else { return SIGKILL }  // a thread that never ends is reported as a process killed
            return waitStatus ?? SIGKILL
        }
    }
}
