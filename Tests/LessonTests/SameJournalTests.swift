import Foundation
import ShieldBusTestSupport
import XCTest

/// Same scenario, same seed, same journal, byte for byte: every shipped configuration's day, under both profiles,
/// played several times at once so the runs load the machine and each other. The journal may depend on nothing but
/// the scenario — not on which process ran first or how fast.
final class SameJournalTests: XCTestCase {
    /// Each shipped configuration and the day it ships with (`default` and `habit-lock` ship the same; the second
    /// plays the restarts day instead).
    private static let days = [("default", "habit-lock-day"), ("habit-lock", "habit-lock-restarts"), ("focus-window", "focus-window-day"),
                               ("speed-bump", "speed-bump-day"), ("bedtime", "bedtime-night"), ("profiles", "profiles-day"),
                               ("two-products", "two-products-day"), ("naive-habit-lock", "habit-lock-day"),
                               ("naive-bedtime", "bedtime-night"), ("naive-profiles", "profiles-day"), ("report-demo", "report-week")]
    private static let runsPerDay = 3

    func testEveryShippedDayIsTheSameJournalEveryTimeUnderBothProfiles() throws {
        let shipped = try FileManager.default.contentsOfDirectory(atPath: BuildProducts.repositoryRoot.appendingPathComponent("Config").path)
            .filter { $0.hasSuffix(".yml") && $0 != "catalog.yml" }.map { String($0.dropLast(".yml".count)) }
        XCTAssertEqual(Set(shipped), Set(Self.days.map(\.0)), "every shipped configuration (Config/*.yml) has its day here")
        // A loaded machine must not change the journal by a timeout: what is tested is the order, not the speed.
        let patience = "bus: {ackTimeoutMs: 60000, startupTimeoutMs: 60000, sessionTimeoutMs: 60000}\n"
        var plays: [(name: String, configuration: String, scenario: String)] = []
        for (configurationName, dayName) in Self.days {
            let configuration = try ScenarioRun.shippedConfiguration(configurationName) + patience
            let day = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Config/scenarios/\(dayName).yml"), encoding: .utf8)
            for profile in ["faithful", "ios-realistic"] {
                let lines = day.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("profile:") }
                let scenario = "profile: \(profile)\n" + lines.joined(separator: "\n")
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
            }
            for index in first + 1..<first + Self.runsPerDay where runs[index].journalBytes != runs[first].journalBytes {
                let lines = (String(decoding: runs[first].journalBytes, as: UTF8.self).split(separator: "\n"),
                             String(decoding: runs[index].journalBytes, as: UTF8.self).split(separator: "\n"))
                let at = zip(lines.0, lines.1).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(lines.0.count, lines.1.count)
                XCTFail("\(plays[index].name): a replay's journal differs at line \(at + 1):\n  \(lines.0.dropFirst(at).first ?? "(end)")\n  \(lines.1.dropFirst(at).first ?? "(end)")")
            }
        }
    }
}
