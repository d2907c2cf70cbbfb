import BusProtocol
import Foundation
import InMemoryRun
import ShieldBusTestSupport
import XCTest

/// Same scenario, same seed, same journal, byte for byte: every shipped configuration's day (`ShippedDays`), under
/// both profiles, played twice each over libzmq as `shieldbus run` plays it — a broker process, its plugins as
/// sandboxed processes —, the four runs at once so that they load the machine and each other; and once more in this
/// process, the broker on its in-memory transport and the same plugins' programs hosted on threads
/// (`InMemoryScenarioRun`). The journal may depend on nothing but the scenario — not on which process ran first, how
/// fast, or whether the bus was libzmq or memory. Under ios-realistic each extension is launched anew for each
/// callback (a thread per launch in memory), and a device restart or a force-quit kills plugins (their connections cut
/// at once in memory). One test per configuration, so that the process lane spreads them over its workers; `make test`
/// compares a fixed slice of them in memory, the slow lane (`make test-slow`) every one.
final class SameJournalTests: XCTestCase {
    /// The slice `make test` also plays in memory: a supervised restart and a device restart (habit-lock's day),
    /// short-lived extensions under a threshold and a force-quit (the speed bump), two products on one device, and a
    /// product of its own extensions (profiles).
    private static let inMemoryInMakeTest: Set<String> = ["habit-lock", "speed-bump", "two-products", "profiles"]
    private static let tested = ["default", "habit-lock", "focus-window", "speed-bump", "bedtime", "profiles", "two-products", "naive-habit-lock", "naive-bedtime", "naive-profiles", "report-demo"]

    func testEveryShippedConfigurationHasItsTestHere() throws {
        XCTAssertEqual(try ShippedDays.shipped(), Set(Self.tested), "every shipped configuration (Config/*.yml) has its test here")
        XCTAssertEqual(Set(ShippedDays.days.map(\.0)), Set(Self.tested))
    }

    func testTheDefaultDayIsTheSameJournalEveryTime() throws { try compare("default") }
    func testHabitLockRestartsIsTheSameJournalEveryTime() throws { try compare("habit-lock") }
    func testFocusWindowIsTheSameJournalEveryTime() throws { try compare("focus-window") }
    func testSpeedBumpIsTheSameJournalEveryTime() throws { try compare("speed-bump") }
    func testBedtimeIsTheSameJournalEveryTime() throws { try compare("bedtime") }
    func testProfilesIsTheSameJournalEveryTime() throws { try compare("profiles") }
    func testTwoProductsIsTheSameJournalEveryTime() throws { try compare("two-products") }
    func testNaiveHabitLockIsTheSameJournalEveryTime() throws { try compare("naive-habit-lock") }
    func testNaiveBedtimeIsTheSameJournalEveryTime() throws { try compare("naive-bedtime") }
    func testNaiveProfilesIsTheSameJournalEveryTime() throws { try compare("naive-profiles") }
    func testReportDemoIsTheSameJournalEveryTime() throws { try compare("report-demo") }

    /// Every shipped plugin's launch template serves: under `ios-realistic` each launch of a plugin after its first
    /// is forked from its template (docs/architecture.md § 8). A template whose warm-up started a thread, or made
    /// libdispatch multithreaded in any other way, refuses to fork and says so only in its plugin's log; the broker
    /// then launches that plugin plainly — the same journal, at several times the cost — which this names.
    private func assertLaunchesAgainAreForked(_ run: ScenarioRun, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(run.errors.contains("launched plainly from now on: its template ended before serving"),
                       "\(name): a template refused to serve: \(run.errors.suffix(2000))", file: file, line: line)
        XCTAssertFalse(run.errors.contains("template process died"), "\(name): \(run.errors.suffix(2000))", file: file, line: line)
        let (judged, plain) = ShippedDays.pluginsLaunchedPlainlyAgain(inLog: run.errors)
        XCTAssertFalse(ShippedDays.launches(inLog: run.errors).isEmpty, "\(name): the debug log names each launch", file: file, line: line)
        XCTAssertEqual(plain.count, 0, "\(name): launches after the first not forked: \(plain)", file: file, line: line)
        // Every product's extensions are launched again on its day: the assertion above judged some.
        if !name.hasPrefix("report-demo") {
            XCTAssertFalse(judged.isEmpty, "\(name): no plugin was launched twice", file: file, line: line)
        }
    }

    /// Plays `configurationName`'s day under both profiles twice over libzmq (the four side by side), then in memory
    /// when this lane compares it there, and compares every journal with the first.
    private func compare(_ configurationName: String) throws {
        let day = try XCTUnwrap(ShippedDays.days.first { $0.0 == configurationName }).1
        let configuration = try ShippedDays.configuration(configurationName)
        let plays = try ["faithful", "ios-realistic"].map { profile in
            (name: "\(configurationName) with \(day), \(profile)", scenario: try ShippedDays.scenario(day, profile: profile))
        }
        // The processes first: a hosted plugin sets the test process's TZ, which a child would inherit. The replays log
        // at `debug`, which must not change a journal and names each launch's kind (below).
        let overLibzmq = try ScenarioRun.runAll(plays.flatMap { [(configuration, $0.scenario, []), (configuration, $0.scenario, ["--log-level", "debug"])] },
                                                jobs: 4, timeoutSeconds: 240)
        assertLaunchesAgainAreForked(overLibzmq[3], "\(plays[1].name)")
        for (index, play) in plays.enumerated() {
            let (first, replay) = (overLibzmq[2 * index], overLibzmq[2 * index + 1])
            // A naive product's day ends with its expectations unmet (a non-zero exit); every replay ends the same way.
            if !configurationName.hasPrefix("naive-") {
                XCTAssertEqual(first.exitStatus, 0, "\(play.name): \(first.errors.suffix(2000))")
            }
            XCTAssertEqual(first.events("scenario.ended").count, 1, "\(play.name): the day was played to its end over libzmq: \(first.errors.suffix(2000))")
            XCTAssertEqual(replay.exitStatus, first.exitStatus, "\(play.name): \(replay.errors.suffix(2000))")
            if let difference = ShippedDays.firstDifference(first.journalBytes, replay.journalBytes) {
                XCTFail("\(play.name): a replay's journal differs at \(difference)")
            }
            guard SlowLane.isOn || Self.inMemoryInMakeTest.contains(configurationName) else { continue }
            let inMemory = try InMemoryScenarioRun.run(configuration: configuration, scenario: play.scenario)
            XCTAssertFalse(inMemory.launches.isEmpty, "\(play.name): its plugins were hosted")
            let journal = try inMemory.journalBytes.split(separator: 0x0A).map { try WireCodec.decodeEnvelope(Array($0)) }
            XCTAssertEqual(journal.filter { $0.topic == "scenario.ended" }.count, 1, "\(play.name): the day was played to its end in memory")
            if configuration.contains("icon: leaf.svg") {
                // The hosted renderer found its resources (the library's bundle), as its process does.
                XCTAssertTrue(journal.contains { $0.topic == "shield.configuration.reply" && $0.bodyValue["configuration"]?["icon"] != nil },
                              "\(play.name): the hosted renderer drew its icon")
            }
            if let difference = ShippedDays.firstDifference(first.journalBytes, inMemory.journalBytes) {
                XCTFail("\(play.name): the journal in memory differs from libzmq's at \(difference)")
            }
        }
    }
}
