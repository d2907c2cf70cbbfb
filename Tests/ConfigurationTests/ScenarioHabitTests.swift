import Configuration
import Foundation
import XCTest

/// A scenario's `habit:` steps against the habits the products' apps offer (`habits:`): refused when they read it,
/// with the file, line and key and the closest habit, as `shieldbus do habit` refuses them.
extension ScenarioTests {
    static let habitLock = OfferedHabits(listings: [.init(app: "Habit Lock", habits: ["Read", "Walk", "Stretch", "Meditate", "Push-ups"])])

    func parse(_ text: String, habits: OfferedHabits) throws -> Scenario {
        try Scenario.parse(YAMLValue.parse(text, file: "day.yml"), catalog: Self.catalog, habits: habits, defaultTimeZone: Self.berlin)
    }

    func testAHabitTheAppDoesNotOfferIsRefusedWithTheClosest() {
        let text = day("  - {at: \"07:00\", habit: Read}\n  - {after: 1m, habit: Raed}\n")
        XCTAssertThrowsError(try parse(text, habits: Self.habitLock)) { error in
            XCTAssertEqual("\(error)", "day.yml:5:24: steps[1].habit: no habit 'Raed' in Habit Lock; its habits: Read, Walk, Stretch, Meditate, "
                + "Push-ups — did you mean 'Read'?")
        }
        XCTAssertThrowsError(try parse(day("  - {at: \"07:00\", habit: Juggle}\n"), habits: Self.habitLock)) { error in
            XCTAssertEqual("\(error)", "day.yml:4:26: steps[0].habit: no habit 'Juggle' in Habit Lock; its habits: Read, Walk, Stretch, Meditate, Push-ups")
        }
        let none = OfferedHabits(listings: [.init(app: "Bedtime", habits: [])])
        XCTAssertThrowsError(try parse(day("  - {at: \"07:00\", habit: Read}\n"), habits: none)) { error in
            XCTAssertEqual("\(error)", "day.yml:4:26: steps[0].habit: habit 'Read': Bedtime has no habits")
        }
    }

    func testAnOfferedHabitIsTakenInAnyCaseAndSpelledAsTheAppListsIt() throws {
        let scenario = try parse(day("  - {at: \"07:00\", habit: push-UPS}\n"), habits: Self.habitLock)
        XCTAssertEqual(scenario.steps.map(\.action), [.habit("Push-ups")])
        // No app lists its habits: any text is a habit, as written.
        XCTAssertEqual(try parse(day("  - {at: \"07:00\", habit: Read 10 pages}\n"), habits: .anyName).steps.map(\.action), [.habit("Read 10 pages")])
    }

    /// Each shipped configuration lists the habits its apps offer — `[]` when none does, so that `do habit` is refused
    /// there rather than "done" with nothing on the device to complete it — and its own scenario does only those.
    func testEveryShippedConfigurationListsItsHabitsAndItsScenarioKeepsToThem() throws {
        let folder = AppCatalogTests.repositoryRoot.appendingPathComponent("Config")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".yml") && $0 != "catalog.yml" }
        var played = 0
        for name in names.sorted() {
            let configuration = try ShieldBusConfiguration.load(path: folder.appendingPathComponent(name).path)
            let habits = OfferedHabits(configuration: configuration, catalog: Self.catalog)
            XCTAssertNotNil(habits.names, "\(name) lists the habits its apps offer (`habits: []` when they offer none)")
            if !configuration.resolvedProducts.contains(where: { $0.companionApp != nil }) {
                XCTAssertEqual(habits.names, [], "\(name) has no companion app to offer a habit")
            }
            guard let scenario = configuration.scenario.map(configuration.resolve) else { continue }
            XCTAssertNoThrow(try Scenario.load(path: scenario, catalog: Self.catalog, habits: habits, defaultTimeZone: Self.berlin), name)
            played += 1
        }
        XCTAssertGreaterThanOrEqual(played, 6)
    }
}
