import Foundation
import ShieldBusTestSupport
import XCTest

/// Same scenario, same seed, same journal, byte for byte: every shipped configuration's day, under both profiles,
/// played several times at once so the runs load the machine and each other. The journal may depend on nothing but
/// the scenario — not on which process ran first or how fast.
final class SameJournalTests: XCTestCase {
    private static let runsPerDay = 3

    func testEveryShippedDayIsTheSameJournalEveryTimeUnderBothProfiles() throws {
        XCTAssertEqual(try ShippedDays.shipped(), Set(ShippedDays.days.map(\.0)), "every shipped configuration (Config/*.yml) has its day here")
        var plays: [(name: String, configuration: String, scenario: String)] = []
        for (configurationName, dayName) in ShippedDays.days {
            let configuration = try ShippedDays.configuration(configurationName)
            for profile in ["faithful", "ios-realistic"] {
                let scenario = try ShippedDays.scenario(dayName, profile: profile)
                for _ in 0..<Self.runsPerDay { plays.append(("\(configurationName) with \(dayName), \(profile)", configuration, scenario)) }
            }
        }
        let runs = try ScenarioRun.runAll(plays.map { ($0.configuration, $0.scenario, []) }, jobs: 4, timeoutSeconds: 240)
        for first in stride(from: 0, to: runs.count, by: Self.runsPerDay) {
            // A naive product's day ends with its expectations unmet (a non-zero exit); every replay ends the same way.
            if !plays[first].name.hasPrefix("naive-") {
                XCTAssertEqual(runs[first].exitStatus, 0, "\(plays[first].name): \(runs[first].errors.suffix(2000))")
            }
            XCTAssertTrue(runs[first].events("scenario.ended").count == 1, "\(plays[first].name): the day was played to its end")
            for index in first + 1..<first + Self.runsPerDay {
                XCTAssertEqual(runs[index].exitStatus, runs[first].exitStatus, "\(plays[index].name): \(runs[index].errors.suffix(2000))")
                if let difference = ShippedDays.firstDifference(runs[first].journalBytes, runs[index].journalBytes) {
                    XCTFail("\(plays[index].name): a replay's journal differs at \(difference)")
                }
            }
        }
    }
}
