import BusProtocol
import Foundation
import InMemoryRun
import ShieldBusTestSupport
import XCTest

/// The lesson days in one process: every shipped configuration's day (`ShippedDays`, as `SameJournalTests` plays
/// them), under both profiles, played once as `shieldbus run` plays it — a broker process, its plugins as sandboxed
/// processes over libzmq — and once in this process, the broker on its in-memory transport and the same plugins'
/// programs hosted on threads (`InMemoryScenarioRun`). Each pair journals the same, byte for byte: the in-memory
/// transport and hosting change nothing of what the day says. Under ios-realistic each extension is launched anew for
/// each callback (a thread per launch in memory), and a device restart or a force-quit kills plugins (their
/// connections cut at once in memory). In the process lane: the libzmq half starts real processes. One test per
/// configuration, so that the lane spreads them over its workers; `make test` plays a fixed slice of them, the slow
/// lane (`make test-slow`) every one.
final class InMemoryLessonDayTests: XCTestCase {
    /// The slice `make test` plays: a supervised restart and a device restart (habit-lock's day), short-lived
    /// extensions under a threshold and a force-quit (the speed bump), two products on one device, and a product of
    /// its own extensions (profiles).
    private static let inMakeTest: Set<String> = ["habit-lock", "speed-bump", "two-products", "profiles"]
    private static let tested = ["default", "habit-lock", "focus-window", "speed-bump", "bedtime", "profiles", "two-products", "naive-habit-lock", "naive-bedtime", "naive-profiles", "report-demo"]

    func testEveryShippedConfigurationHasItsTestHere() throws {
        XCTAssertEqual(try ShippedDays.shipped(), Set(Self.tested), "every shipped configuration (Config/*.yml) has its test here")
        XCTAssertEqual(Set(ShippedDays.days.map(\.0)), Set(Self.tested))
    }

    func testTheDefaultDayJournalsTheSameInMemory() throws { try compare("default") }
    func testHabitLockRestartsJournalsTheSameInMemory() throws { try compare("habit-lock") }
    func testFocusWindowJournalsTheSameInMemory() throws { try compare("focus-window") }
    func testSpeedBumpJournalsTheSameInMemory() throws { try compare("speed-bump") }
    func testBedtimeJournalsTheSameInMemory() throws { try compare("bedtime") }
    func testProfilesJournalsTheSameInMemory() throws { try compare("profiles") }
    func testTwoProductsJournalsTheSameInMemory() throws { try compare("two-products") }
    func testNaiveHabitLockJournalsTheSameInMemory() throws { try compare("naive-habit-lock") }
    func testNaiveBedtimeJournalsTheSameInMemory() throws { try compare("naive-bedtime") }
    func testNaiveProfilesJournalsTheSameInMemory() throws { try compare("naive-profiles") }
    func testReportDemoJournalsTheSameInMemory() throws { try compare("report-demo") }

    /// Plays `configurationName`'s day under both profiles over libzmq (side by side), then in memory, and compares.
    private func compare(_ configurationName: String) throws {
        try XCTSkipUnless(SlowLane.isOn || Self.inMakeTest.contains(configurationName), "in the slow lane (make test-slow)")
        let day = try XCTUnwrap(ShippedDays.days.first { $0.0 == configurationName }).1
        let configuration = try ShippedDays.configuration(configurationName)
        let plays = try ["faithful", "ios-realistic"].map { profile in
            (name: "\(configurationName) with \(day), \(profile)", scenario: try ShippedDays.scenario(day, profile: profile))
        }
        // The processes first: a hosted plugin sets the test process's TZ, which a child would inherit.
        let overLibzmq = try ScenarioRun.runAll(plays.map { (configuration, $0.scenario, []) }, timeoutSeconds: 240)
        for (play, processes) in zip(plays, overLibzmq) {
            XCTAssertEqual(processes.events("scenario.ended").count, 1, "\(play.name): the day was played to its end over libzmq: \(processes.errors.suffix(2000))")
            let inMemory = try InMemoryScenarioRun.run(configuration: configuration, scenario: play.scenario)
            XCTAssertFalse(inMemory.launches.isEmpty, "\(play.name): its plugins were hosted")
            let journal = try inMemory.journalBytes.split(separator: 0x0A).map { try WireCodec.decodeEnvelope(Array($0)) }
            XCTAssertEqual(journal.filter { $0.topic == "scenario.ended" }.count, 1, "\(play.name): the day was played to its end in memory")
            if configuration.contains("icon: leaf.svg") {
                // The hosted renderer found its resources (the library's bundle), as its process does.
                XCTAssertTrue(journal.contains { $0.topic == "shield.configuration.reply" && $0.bodyValue["configuration"]?["icon"] != nil },
                              "\(play.name): the hosted renderer drew its icon")
            }
            if let difference = ShippedDays.firstDifference(processes.journalBytes, inMemory.journalBytes) {
                XCTFail("\(play.name): the journal in memory differs from libzmq's at \(difference)")
            }
        }
    }
}
