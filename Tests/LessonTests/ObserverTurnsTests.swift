import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The report builder observes what it records (docs/protocol.md § 9.2): through `shieldbus run` with every
/// reference plugin a process, a generated heavy day costs far fewer turns, and stays deterministic.
final class ObserverTurnsTests: XCTestCase {
    /// The broker's count of turns, from its last log line (`stopped … turns=N`).
    private func turns(_ run: ScenarioRun) throws -> Int {
        let line = try XCTUnwrap(run.errors.split(separator: "\n").last { $0.contains("stopped") && $0.contains("turns=") }, run.errors)
        let value = line.split(separator: " ").first { $0.hasPrefix("turns=") }?.dropFirst("turns=".count)
        return try XCTUnwrap(value.flatMap { Int($0) }, String(line))
    }

    func testHeavyDaysAreTheSameJournalEveryTimeAndTheReportBuildersAnnouncementsWaitUntilTheBusSettles() throws {
        let configuration = try ScenarioRun.shippedConfiguration("default")
        for seed: UInt64 in [3, 12] {
            let scenario = HeavyUserDays(seed: seed, days: 1, profile: "faithful", pace: .heavy).scenario
            // Played side by side: each run keeps about one core busy, and the journal must not depend on timing.
            let runs = try ScenarioRun.runAll(Array(repeating: (configuration, scenario, ["--log-level", "info"]), count: 2), timeoutSeconds: 180)
            for run in runs { XCTAssertEqual(run.exitStatus, 0, "seed \(seed): \(run.errors.suffix(2000))") }
            XCTAssertEqual(runs[0].journalBytes, runs[1].journalBytes, "seed \(seed): the same journal, byte for byte")
            let counted = try runs.map(turns)
            XCTAssertEqual(counted[0], counted[1], "seed \(seed): the same turns")
            let journal = runs[0].journal
            // Before observing, a heavy day took about 0.8 turns per journal event; now under a third.
            XCTAssertLessThan(counted[0] * 3, journal.count, "seed \(seed): \(counted[0]) turns for \(journal.count) events")

            // The report builder's App-Group announcements come in runs sequenced once everything delivered was
            // handled: what follows a run is the OS moving time on (a step, a callback, the end), never another
            // plugin's reaction in the middle of a turn.
            var announcementRuns = 0
            for (index, event) in journal.enumerated() where event.topic == "state.changed" && event.source == "reports" {
                guard index + 1 < journal.count else { continue }
                let next = journal[index + 1]
                if next.topic == "state.changed" && next.source == "reports" { continue }
                announcementRuns += 1
                XCTAssertEqual(next.source, "broker", "seed \(seed): after the report builder's seq \(event.seq) comes \(next.topic) from \(next.source)")
            }
            XCTAssertGreaterThan(announcementRuns, 20, "seed \(seed): the report builder recorded the day's use")
        }
    }
}
