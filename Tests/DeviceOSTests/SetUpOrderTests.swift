import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Two products set up on one device under `ios-realistic`, where each product's monitor ends after every callback and
/// comes back for the next: a monitor process that handled a callback held for its `bus.ready` ends without
/// acknowledging that bus.ready, and its next process was handed it among what it missed — which started its work
/// at once, outside its turn, while the other product's monitor had its own. One product's `plugin.down … bye` then
/// fell before or after the other's requests, `plugin.up` and `bus.ready`, by which process ran faster.
final class SetUpOrderTests: XCTestCase {
    /// The shipped two-products configuration's set-up and first minutes, played many times at once (the machine
    /// loaded by the runs themselves): every journal is the same, byte for byte.
    func testTwoProductsSetUpIsTheSameJournalEveryTime() throws {
        // A loaded machine must not change the journal by a timeout: what is tested is the order, not the speed.
        let configuration = try ScenarioRun.shippedConfiguration("two-products")
            + "bus: {ackTimeoutMs: 60000, startupTimeoutMs: 60000, sessionTimeoutMs: 60000}\n"
        let scenario = """
        name: two-products-set-up
        start: 2026-11-24T07:00
        timeZone: Europe/Berlin
        profile: ios-realistic
        seed: 7
        end: after 1m
        steps:
          - {at: "07:01", open: Facebook}
          - {at: "07:02", open: Instagram}

        """
        let count = 24
        let runs = try ScenarioRun.runAll(Array(repeating: (configuration, scenario, []), count: count), jobs: 4, timeoutSeconds: 120)
        for (index, run) in runs.enumerated() { XCTAssertEqual(run.exitStatus, 0, "run \(index): \(run.errors.suffix(2000))") }
        let first = runs[0]
        // The set-up this is about happened: extensions ended after their callbacks and came back.
        let goodbyes = first.events("plugin.down").filter { $0.bodyValue["reason"]?.stringValue == "bye" }
        XCTAssertGreaterThan(goodbyes.count, 1, "short-lived extensions ended")
        XCTAssertGreaterThan(first.events("bus.ready").count, 1, "returning extensions were announced")
        for (index, run) in runs.enumerated().dropFirst() where run.journalBytes != first.journalBytes {
            let lines = (String(decoding: first.journalBytes, as: UTF8.self).split(separator: "\n"), String(decoding: run.journalBytes, as: UTF8.self).split(separator: "\n"))
            let at = zip(lines.0, lines.1).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(lines.0.count, lines.1.count)
            XCTFail("run \(index)'s journal differs from run 0's at line \(at + 1):\n  \(lines.0.dropFirst(at).first ?? "(end)")\n  \(lines.1.dropFirst(at).first ?? "(end)")")
        }
    }
}
