import BedtimeExtensions
@testable import Broker
import BusClient
import BusProtocol
import Foundation
import ProfilesExtensions
import ShieldBusSDK
import ShieldBusTestSupport
import XCTest

/// A session's `watch` narrows its `state.changed` subscription to the App-Group keys it names: the broker hands it
/// the changes of those keys and no other, while a session without one still gets every change, and other topics
/// are untouched — in memory, through a broker process, and in the mailbox of a plugin between two processes.
final class StateWatchRoutingTests: XCTestCase {
    private static func change(_ group: String, _ key: String) -> Publish {
        Publish(topic: StateWatch.topic, body: ["group": .string(group), "key": .string(key), "writer": "app", "version": 1, "removed": false])
    }

    private static func changedKeys(_ events: [Envelope]) -> [String] {
        events.filter { $0.topic == StateWatch.topic }.map { "\($0.bodyValue["group"]?.stringValue ?? "?")/\($0.bodyValue["key"]?.stringValue ?? "?")" }
    }

    func testAWatchingSessionGetsOnlyTheChangesOfItsKeysAndTheOthersEveryChange() throws {
        let exchange = try SteppedExchange(.inMemory)
        defer { exchange.finish() }
        let monitor = try exchange.join("monitor", role: .generic, subscriptions: [StateWatch.topic, "app."], acknowledges: false,
                                        watch: StateWatch(["group.a": ["passUntil", "habits.*"]]))
        let everything = try exchange.join("everything", role: .generic, subscriptions: [StateWatch.topic], acknowledges: false)
        let writer = try exchange.join("writer", role: .generic, subscriptions: [], acknowledges: false)
        for change in [Self.change("group.a", "reports.day.2026-10-03"), Self.change("group.a", "passUntil"), Self.change("group.b", "passUntil"),
                       Self.change("group.a", "habits.read"), Self.change("group.a", "habits"), Self.change("group.a", "passUntilX")] {
            try exchange.step(writer, .publish(change))
        }
        try exchange.step(writer, .publish(Publish(topic: StateWatch.topic, body: ["group": "group.a"])))
        try exchange.step(writer, .publish(Publish(topic: "app.note", body: [:])))
        _ = try exchange.turnUntil(everything) { $0.events.count == 7 }
        _ = try exchange.turnUntil(monitor) { $0.topics.contains("app.note") }

        XCTAssertEqual(Self.changedKeys(monitor.events), ["group.a/passUntil", "group.a/habits.read"],
                       "only its keys of its group; no other group's, no longer key, no change that names no key")
        XCTAssertEqual(monitor.topics.last, "app.note", "its other subscriptions are untouched")
        let deliveries = monitor.arrived.compactMap { if case .event(_, let delivery) = $0 { return delivery } else { return nil } }
        XCTAssertEqual(deliveries, [1, 2, 3], "what it does not watch is no delivery of its: its delivery numbers have no gap")
        XCTAssertEqual(Self.changedKeys(everything.events), ["group.a/reports.day.2026-10-03", "group.a/passUntil", "group.b/passUntil",
                                                             "group.a/habits.read", "group.a/habits", "group.a/passUntilX", "group.a/?"],
                       "a session without a watch gets every change")
        XCTAssertEqual(exchange.broker.sessions.named("monitor")?.watch, StateWatch(["group.a": ["passUntil", "habits.*"]]))
    }

    /// A supervised plugin between two processes (a short-lived extension's relaunch) has in its mailbox only what
    /// its last session would have got: the changes of its keys.
    func testThePluginsAwayKeepTheWatchOfTheirLastSession() {
        let table = SessionTable()
        table.noteSubscriptions(of: Hello(name: "monitor", role: "monitor", subscriptions: ["deviceactivity.", StateWatch.topic],
                                          watch: StateWatch(["group.a": ["passUntil"]])))
        table.noteSubscriptions(of: Hello(name: "app", role: .app, subscriptions: [StateWatch.topic]))
        let last = { (name: String, event: PendingEvent) -> Bool in
            var changed = ChangedKeyReading()
            return table.lastSubscriptions(of: name)?.wants(event, changed: &changed) ?? false
        }
        let event = { (publish: Publish) in PendingEvent(topic: publish.topic, body: publish.body, source: "app", corr: nil, deadline: nil, requester: nil) }
        XCTAssertTrue(last("monitor", event(Self.change("group.a", "passUntil"))))
        XCTAssertFalse(last("monitor", event(Self.change("group.a", "reports.day.2026-10-03"))))
        XCTAssertTrue(last("monitor", event(Publish(topic: "deviceactivity.interval-did-start", body: [:]))), "other topics as before")
        XCTAssertTrue(last("app", event(Self.change("group.a", "reports.day.2026-10-03"))), "no watch: every change")
        XCTAssertTrue(table.mayHaveSubscribers(StateWatch.topic), "by topic alone, a watching plugin may want a change")
    }

    /// Through a broker process over libzmq: a change the watcher does not watch, then one it does; it gets the
    /// second alone (events arrive in sequence order), a tap both, and `status` shows the watch.
    func testABrokerProcessHandsAWatcherOnlyTheChangesOfItsKeys() throws {
        let broker = try BrokerProcess(configuration: "name: watching\n")
        let watch = StateWatch(["group.a": ["isCurrentlyUnlocked"]])
        let watcher = try broker.connect(name: "watcher", subscriptions: [StateWatch.topic], watch: watch)
        let tap = try broker.connect(name: "test-tap", role: .tap, subscriptions: [StateWatch.topic])
        let writer = try broker.connect(name: "writer", subscriptions: [])
        try writer.publish(Self.change("group.a", "reports.day.2026-10-03"))
        try writer.publish(Self.change("group.a", "isCurrentlyUnlocked"))
        let watched = try collectEvents(from: watcher) { !$0.isEmpty }
        XCTAssertEqual(Self.changedKeys(watched), ["group.a/isCurrentlyUnlocked"], "the change it does not watch, sequenced first, never came")
        XCTAssertEqual(Self.changedKeys(try collectEvents(from: tap) { $0.count >= 2 }), ["group.a/reports.day.2026-10-03", "group.a/isCurrentlyUnlocked"])
        let sessions = try broker.status()["plugins"]?.arrayValue ?? []
        XCTAssertEqual(sessions.first { $0["name"]?.stringValue == "watcher" }?["watch"], watch.jsonValue)
        XCTAssertEqual(broker.stop(), 0)
    }
}

/// The SDK says a plugin's `watchedStateKeys` in its hello: the shipped products' monitors (`ChainedMonitor`
/// subclasses overriding `watchedKeys`), hosted on threads as their processes run, watch their product's keys.
final class WatchedStateKeysHelloTests: XCTestCase {
    func testTheChainedMonitorsSayTheirSubclassesWatchedKeys() throws {
        let expected: [(program: PluginProgram, principal: String, watch: StateWatch)] = [
            (BedtimePlugin.program, "BedtimeMonitor", StateWatch(["group.dev.shieldbus.bedtime": ["selection", "pass.until", "skip.at"]])),
            (ProfilesPlugin.program, "ProfilesMonitor",
             StateWatch(["group.dev.shieldbus.profiles": ["selection", "session.active", "evening.endedAt", "break.at"]])),
        ]
        for (program, principal, watch) in expected {
            let exchange = try SteppedExchange(.inMemoryThreaded, grants: [ClientGrant(roles: [.monitor])])
            defer { exchange.finish() }
            let monitor = InProcessPlugin.start(name: "monitor", environment: exchange.pluginEnvironment.merging(["SHIELDBUS_PRINCIPAL_CLASS": principal]) { $1 },
                                                program)
            defer { monitor.stop() }
            try exchange.turnUntilQuiet("\(principal) connected") { exchange.broker.sessions.named("monitor") != nil }
            XCTAssertEqual(exchange.broker.sessions.named("monitor")?.watch, watch, principal)
            XCTAssertTrue(exchange.broker.sessions.named("monitor")?.subscriptions.contains(StateWatch.topic) == true, principal)
        }
    }
}
