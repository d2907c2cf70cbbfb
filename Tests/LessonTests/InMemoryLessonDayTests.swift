import BusProtocol
import Foundation
import InMemoryRun
import ShieldBusTestSupport
import XCTest

/// The lesson days in one process: every shipped configuration's day (`ShippedDays`, as `SameJournalTests` plays
/// them) played once as `shieldbus run` plays it — a broker process, its plugins as sandboxed processes over libzmq —
/// and once in this process, the broker on its in-memory transport and the same plugins' programs hosted on threads
/// (`InMemoryScenarioRun`). Each pair journals the same, byte for byte: the in-memory transport and hosting change
/// nothing of what the day says. In the process lane: the libzmq half starts real processes.
final class InMemoryLessonDayTests: XCTestCase {
    func testEveryShippedDayJournalsInMemoryWhatItJournalsOverLibzmq() throws {
        try compareEveryDay(profile: "faithful")
    }

    /// Under ios-realistic each extension is launched anew for each callback (a thread per launch in memory), and a
    /// device restart or a force-quit kills the plugins (their connections cut at once in memory).
    func testEveryShippedDayJournalsTheSameInMemoryUnderIOSRealistic() throws {
        try compareEveryDay(profile: "ios-realistic")
    }

    private func compareEveryDay(profile: String) throws {
        XCTAssertEqual(try ShippedDays.shipped(), Set(ShippedDays.days.map(\.0)), "every shipped configuration (Config/*.yml) has its day here")
        let plays = try ShippedDays.days.map { configuration, day in
            (name: "\(configuration) with \(day), \(profile)", configuration: try ShippedDays.configuration(configuration),
             scenario: try ShippedDays.scenario(day, profile: profile))
        }
        // The processes first, side by side: a hosted plugin sets the test process's TZ, which a child would inherit.
        let overLibzmq = try ScenarioRun.runAll(plays.map { ($0.configuration, $0.scenario, []) }, timeoutSeconds: 240)
        for (play, processes) in zip(plays, overLibzmq) {
            XCTAssertEqual(processes.events("scenario.ended").count, 1, "\(play.name): the day was played to its end over libzmq: \(processes.errors.suffix(2000))")
            let inMemory = try InMemoryScenarioRun.run(configuration: play.configuration, scenario: play.scenario)
            XCTAssertFalse(inMemory.launches.isEmpty, "\(play.name): its plugins were hosted")
            let journal = try inMemory.journalBytes.split(separator: 0x0A).map { try WireCodec.decodeEnvelope(Array($0)) }
            XCTAssertEqual(journal.filter { $0.topic == "scenario.ended" }.count, 1, "\(play.name): the day was played to its end in memory")
            if let difference = ShippedDays.firstDifference(processes.journalBytes, inMemory.journalBytes) {
                XCTFail("\(play.name): the journal in memory differs from libzmq's at \(difference)")
            }
        }
    }
}
