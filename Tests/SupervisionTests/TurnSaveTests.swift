// TurnSaveTests: a broker killed around the save of a publication waiting for its turn loses nothing, sends nothing twice.

import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

extension DurableDeliveryTests {
    /// In virtual time a plugin's publication waits in the turn queue until its turn ends: its batch sends nothing,
    /// and is saved at the end of the loop's pass that sequenced it (`Broker.saveSequenced`), not before its own
    /// send. The publisher hangs the first time (its turn ends when virtual time gives up on it); the broker is
    /// killed (by itself) just before or just after the save that covers the publication, and resumed: the echo is
    /// journaled once, and the listener is given it once.
    func testABrokerKilledAroundTheSaveOfAPublicationWaitingForItsTurnJournalsAndDeliversItOnce() throws {
        let configuration = fixtureConfiguration.replacingOccurrences(of: "sessionTimeoutMs: 1000}", with: "sessionTimeoutMs: 1000, ackTimeoutMs: 1000}") + """

              - {name: listener, executable: \(BuildProducts.path("fixture-supervised")), arguments: [--listener], role: generic}
            """
        XCTAssertTrue(configuration.contains("ackTimeoutMs: 1000"))
        let scenario = """
            name: echo-once-in-turn
            start: 2026-03-07T07:00
            timeZone: UTC
            end: day 1 07:03
            steps:
              - {at: "07:00:30", publish: {topic: app.sup.echo-then-hang, body: {n: 1}}}
              - {at: "07:02:00", publish: {topic: app.sup.echo-then-hang, body: {n: 2}}}
            """
        for crash in ["--crash-before-saving", "--crash-after-saving"] {
            let work = TemporaryDirectory(prefix: "sbturn")
            let journal = try playKilledThenResumed(configuration, scenario, crash: [crash, "app.sup.echo"], work: work)
            let echoes = journal.filter { $0.topic == "app.sup.echo" }
            XCTAssertEqual(echoes.prefix(5).map { $0.bodyValue["n"]?.intValue }, [1, 2], "\(crash): each echo journaled once")
            XCTAssertTrue(zip(journal, journal.dropFirst()).allSatisfy { $0.seq < $1.seq }, "\(crash): numbers go on")
            let heard = try String(contentsOfFile: work.file("state/containers/listener/listener-heard"), encoding: .utf8).split(separator: "\n").map(String.init)
            XCTAssertEqual(heard, echoes.map { "\($0.seq) \($0.bodyValue["n"]?.intValue ?? -1)" },
                           "\(crash): the listener was given each journaled echo once, and nothing else")
        }
    }
}
