import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// `shieldbus do habit` takes only a habit the product's app offers (its configuration's `habits:`), in any case,
/// recorded as the app spells it; any other exits 1 naming the habits there are and the closest one, and nothing is
/// completed; a product whose app has no habits says so. Through the real broker and the habit lock's plugins.
/// (In CrashSafetyTests for its habit-lock configuration.)
extension CrashSafetyTests {
    /// A broker on `configuration` (no scenario, journaled at `journal`) once its plugins are ready.
    func readyBroker(_ configuration: String, journal: String) throws -> BrokerProcess {
        let broker = try BrokerProcess(configuration: configuration, arguments: ["--no-scenario", "--journal", journal])
        waitUntil("the plugins to be ready (log: \(broker.log(tail: 10)))") { self.journal(journal).contains { $0.topic == "bus.ready" } }
        return broker
    }

    /// `shieldbus do ARGUMENTS` on `broker`: its exit status and what it said.
    func person(_ broker: BrokerProcess, _ arguments: String...) throws -> (status: Int32, output: String) {
        try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path])
    }

    func testDoHabitTakesOnlyAHabitTheProductOffers() throws {
        let work = TemporaryDirectory(prefix: "sbhabit")
        let journal = work.file("journal.jsonl")
        let broker = try readyBroker(try habitLockConfiguration(), journal: journal)
        defer { broker.stop() }
        func habit(_ name: String) throws -> (status: Int32, output: String) { try person(broker, "habit", name) }

        let typo = try habit("Raed")
        XCTAssertEqual(typo.status, 1, typo.output)
        XCTAssertTrue(typo.output.contains("no habit 'Raed' in Habit Lock; its habits: Read, Walk, Stretch, Meditate, Push-ups — did you mean 'Read'?"), typo.output)
        XCTAssertFalse(typo.output.contains("done"), typo.output)
        let unknown = try habit("Juggle")
        XCTAssertEqual(unknown.status, 1, unknown.output)
        XCTAssertTrue(unknown.output.contains("no habit 'Juggle' in Habit Lock; its habits: "), unknown.output)
        XCTAssertFalse(unknown.output.contains("did you mean"), "nothing is close to Juggle: \(unknown.output)")

        let done = try habit("read")
        XCTAssertEqual(done.status, 0, done.output)
        XCTAssertTrue(done.output.hasPrefix("done: habit read"), done.output)
        waitUntil("the habit in the journal") { self.journal(journal).contains { $0.topic == "activity.habit.completed" } }
        XCTAssertEqual(self.journal(journal).filter { $0.topic == "activity.habit.completed" }.compactMap { $0.bodyValue["habit"]?.stringValue },
                       ["Read"], "only the offered habit is completed, spelled as the app lists it")
        broker.stop()

        // The same product, its app offering no habits.
        let none = try readyBroker(try habitLockConfiguration().replacingOccurrences(of: "habits: [Read, Walk, Stretch, Meditate, Push-ups]", with: "habits: []"),
                                   journal: work.file("none.jsonl"))
        defer { none.stop() }
        let refused = try person(none, "habit", "Read")
        XCTAssertEqual(refused.status, 1, refused.output)
        XCTAssertTrue(refused.output.contains("habit 'Read': Habit Lock has no habits"), refused.output)
        XCTAssertFalse(self.journal(work.file("none.jsonl")).contains { $0.topic == "activity.habit.completed" }, "nothing was completed")
    }
}

/// `shieldbus run` refuses a scenario that completes a habit the product's app does not offer, before anything is played:
/// the scenario's file, line and key, the habits there are and the closest one. (In CrashSafetyTests for its root.)
extension CrashSafetyTests {
    func testRunRefusesAScenarioWithAHabitTheAppDoesNotOffer() throws {
        let work = TemporaryDirectory(prefix: "sbhabitrun")
        let scenario = work.file("day.yml"), journal = work.file("journal.jsonl")
        try "name: day\nstart: 2026-11-23T09:00\nsteps:\n  - {at: \"09:05\", habit: Read}\n  - {after: 1m, habit: Raed}\n"
            .write(toFile: scenario, atomically: true, encoding: .utf8)
        let refused = try runToEnd(BuildProducts.path("shieldbus"), ["run", "--config", root + "/Config/habit-lock.yml", "--scenario", scenario,
                                                                    "--journal", journal, "--runtime-dir", work.file("run"), "--state-dir", work.file("state")])
        XCTAssertEqual(refused.status, 2, "a mistake in a file the person wrote: \(refused.output)")
        XCTAssertTrue(refused.output.contains("\(scenario):5:24: steps[1].habit: no habit 'Raed' in Habit Lock; its habits: Read, Walk, Stretch, "
            + "Meditate, Push-ups — did you mean 'Read'?"), refused.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: journal), "nothing was played")
    }
}

/// `shieldbus do authorize deny` on an approved app: the app hears `denied`, and a second deny — which changes
/// nothing — exits 1 saying so, as does an approve that changes nothing. (In CrashSafetyTests for its configuration.)
extension CrashSafetyTests {
    func testDoAuthorizeDenyAndWhatChangesNothing() throws {
        let work = TemporaryDirectory(prefix: "sbdeny")
        let journal = work.file("journal.jsonl")
        let broker = try readyBroker(try habitLockConfiguration(), journal: journal)
        defer { broker.stop() }
        func authorize(_ answer: String) throws -> (status: Int32, output: String) { try person(broker, "authorize", answer) }
        func statuses() -> [String] {
            self.journal(journal).filter { $0.topic == "familycontrols.authorization.changed" }.compactMap { $0.bodyValue["status"]?.stringValue }
        }
        waitUntil("the app approved") { statuses().last == "approved" }

        let denied = try authorize("deny")
        XCTAssertEqual(denied.status, 0, denied.output)
        XCTAssertTrue(denied.output.hasPrefix("done: authorize deny"), denied.output)
        waitUntil("the app to hear the denial") { statuses().last == "denied" }
        let again = try authorize("deny")
        XCTAssertEqual(again.status, 1, again.output)
        XCTAssertTrue(again.output.contains("Screen Time access is denied already: the answer changed nothing"), again.output)
        XCTAssertFalse(again.output.contains("done"), again.output)

        XCTAssertEqual(try authorize("approve").status, 0)
        waitUntil("the app approved again") { statuses().last == "approved" }
        let unchanged = try authorize("approve")
        XCTAssertEqual(unchanged.status, 1, unchanged.output)
        XCTAssertTrue(unchanged.output.contains("approved already"), unchanged.output)
        XCTAssertEqual(statuses().suffix(2), ["denied", "approved"], "each answer that changed something announced once")
    }
}
