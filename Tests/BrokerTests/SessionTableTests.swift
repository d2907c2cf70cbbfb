@testable import Broker
import BusProtocol
import XCTest

/// Whether any plugin may want a topic, as the session table answers it from what it last found: found again as
/// sessions, and the subscriptions of plugins away between two processes, come and go.
final class SessionTableTests: XCTestCase {
    private func session(_ name: String, role: Role, subscriptions: [String], identity: UInt8) -> Session {
        Session(identity: [identity], hello: Hello(name: name, role: role, subscriptions: subscriptions), now: 0)
    }

    func testWhetherAnyPluginMayWantATopicFollowsTheSessionsAndThePluginsAway() {
        let table = SessionTable()
        XCTAssertFalse(table.mayHaveSubscribers("clock.tick"))
        table.add(session("tap", role: .tap, subscriptions: [""], identity: 1))
        XCTAssertFalse(table.mayHaveSubscribers("clock.tick"), "a tap only watches")
        let monitor = session("monitor", role: "monitor", subscriptions: ["app.", "clock."], identity: 2)
        table.add(monitor)
        XCTAssertTrue(table.mayHaveSubscribers("clock.tick"), "found again once a session came")
        XCTAssertFalse(table.mayHaveSubscribers("shield.shown"))
        table.remove(monitor)
        XCTAssertFalse(table.mayHaveSubscribers("clock.tick"), "its session ended")
        table.noteSubscriptions(of: Hello(name: "monitor", role: "monitor", subscriptions: ["clock.tick"]))
        XCTAssertTrue(table.mayHaveSubscribers("clock.tick"), "a supervised plugin's mailbox fills while it is away")
        table.add(session("monitor", role: "monitor", subscriptions: ["app."], identity: 3))
        table.noteSubscriptions(of: Hello(name: "monitor", role: "monitor", subscriptions: ["app."]))
        XCTAssertFalse(table.mayHaveSubscribers("clock.tick"), "its next process no longer subscribes")
    }

    /// The subscribers of a topic as routing asks for them: what a scan of every session finds, in the same orders,
    /// whatever came and went since the topic was last asked about.
    func testTheSubscribersOfATopicAreEverySessionWantingItInEitherOrder() {
        let table = SessionTable()
        var generator = SystemRandomNumberGenerator()
        let prefixes = ["", "app.", "app.url", "clock.", "clock.tick", "shield.", "shield.shown", "device.", "bus."]
        let topics = ["clock.tick", "app.url.opened", "shield.shown", "shield.action.request", "device.restarted", "bus.ready", "x"]
        var names = ["zeta", "alpha", "monitor", "renderer", "tap", "beta", "many"]
        var identity: UInt8 = 0
        func check(_ what: String) {
            for topic in topics {
                XCTAssertEqual(table.subscribers(of: topic, inNameOrder: false).map(\.name), table.all.filter { $0.wants(topic) }.map(\.name), "\(what): \(topic)")
                XCTAssertEqual(table.subscribers(of: topic, inNameOrder: true).map(\.name), table.inNameOrder.filter { $0.wants(topic) }.map(\.name), "\(what): \(topic), in name order")
            }
        }
        for step in 0..<200 {
            if !names.isEmpty, table.all.isEmpty || Bool.random(using: &generator) {
                let name = names.removeLast()
                identity &+= 1
                // "many" holds more subscriptions than are compared one by one (its answers come from its index).
                let subscriptions = name == "many" ? prefixes + (0..<10).map { "topic\($0)." }
                    : (0..<Int.random(in: 1...3, using: &generator)).map { _ in prefixes.randomElement(using: &generator)! }
                table.add(session(name, role: name == "tap" ? .tap : "plugin", subscriptions: subscriptions, identity: identity))
                check("step \(step), \(name) came")
            } else if let leaving = table.all.randomElement(using: &generator) {
                table.remove(leaving)
                names.insert(leaving.name, at: 0)
                check("step \(step), \(leaving.name) left")
            }
        }
    }
}
