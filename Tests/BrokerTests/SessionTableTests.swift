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
}
