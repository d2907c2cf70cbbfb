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
        // Virtual time gives up on the hung publisher after a second, not five.
        let configuration = fixtureConfiguration.replacingOccurrences(of: "sessionTimeoutMs: 1000}", with: "sessionTimeoutMs: 1000, ackTimeoutMs: 1000}")
        XCTAssertTrue(configuration.contains("ackTimeoutMs: 1000"))
        try killAroundTheSaveOfAnEcho(configuration: configuration, clock: [])
    }
}
