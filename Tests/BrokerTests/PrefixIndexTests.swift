@testable import Broker
import BusProtocol
import XCTest

/// A session's many subscriptions are looked up by the topic's prefixes: the same answers as comparing each prefix.
final class PrefixIndexTests: XCTestCase {
    func testTheIndexAnswersAsComparingEveryPrefixOnGeneratedSets() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["app", "x", "clock", "tick", "a", "ab", "é", "", ".", "shield", "s"]
        func topic() -> String { (0..<Int.random(in: 1...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined(separator: ".") }
        for _ in 0..<300 {
            let prefixes = (0..<Int.random(in: 0...40, using: &generator)).map { _ -> String in
                let whole = topic()
                return String(whole.prefix(Int.random(in: 0...whole.count, using: &generator)))
            }
            let index = PrefixIndex(prefixes)
            for _ in 0..<50 {
                let candidate = topic()
                XCTAssertEqual(index.matches(candidate), prefixes.contains { Topic.matches(candidate, prefix: $0) }, "\(candidate) against \(prefixes)")
            }
        }
        XCTAssertTrue(PrefixIndex([""]).matches("anything"), "the empty prefix matches every topic")
        XCTAssertFalse(PrefixIndex([]).matches("anything"))
    }

    /// A session with an index keeps its answers by topic: asked again, and after more topics than it keeps, it
    /// answers as comparing each prefix does.
    func testASessionsKeptAnswersAreTheIndexsAnswers() {
        let prefixes = ["shield.", "activity.app.", "deviceactivity.", "managedsettings.read", "clock.", "state.changed", "habit.",
                        "notification.", "app.unlock."]
        XCTAssertGreaterThan(prefixes.count, Session.subscriptionsScannedInTurn, "the session must hold an index")
        let session = Session(identity: [1], hello: Hello(name: "watcher", role: .generic, subscriptions: prefixes, acknowledges: false), now: 0)
        let topics = (0..<150).map { ["shield.shown", "shield.x\($0)", "activity.app.opened", "activity.web.\($0)", "clock.tick",
                                      "state.changed", "state.changedx", "habit", "habit.\($0)", "app.unlock", "zzz.\($0)"][$0 % 11] }
        for _ in 0..<3 {
            for topic in topics {
                XCTAssertEqual(session.wants(topic), prefixes.contains { Topic.matches(topic, prefix: $0) }, topic)
            }
        }
    }
}
