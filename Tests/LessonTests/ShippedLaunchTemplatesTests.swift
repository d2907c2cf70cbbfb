import Foundation
import ShieldBusTestSupport
import XCTest

/// The broker's debug log names each launch's kind, which `SameJournalTests` reads to require every shipped plugin's
/// launches after its first to be forked from its template under `ios-realistic` (`ShippedDays.pluginsLaunchedPlainlyAgain`).
final class ShippedLaunchTemplatesTests: XCTestCase {
    /// Asked for plain launches, every launch is named one, and each plugin launched again is judged so.
    func testAPlainLaunchIsNamedSoInTheLog() throws {
        let run = try ScenarioRun.run(configuration: try ShippedDays.configuration("speed-bump"),
                                      scenario: try ShippedDays.scenario("speed-bump-day", profile: "ios-realistic"),
                                      arguments: ["--log-level", "debug", "--plain-launches"], timeoutSeconds: 240)
        XCTAssertEqual(run.exitStatus, 0, String(run.errors.suffix(2000)))
        let starts = ShippedDays.launches(inLog: run.errors)
        XCTAssertGreaterThan(starts.filter { $0.plugin == "monitor" }.count, 1, "the monitor is launched at each callback")
        XCTAssertEqual(Set(starts.map(\.kind)), ["plain"])
        let (judged, plain) = ShippedDays.pluginsLaunchedPlainlyAgain(inLog: run.errors)
        XCTAssertTrue(judged.contains("monitor"))
        XCTAssertNotNil(plain["monitor"], "a plugin launched plainly again is named")
    }
}
