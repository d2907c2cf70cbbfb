import Configuration
import Foundation
import XCTest

/// The generated heavy-user days (the soak's and the benchmark's input) are valid scenarios with what they promise.
final class HeavyUserDaysTests: XCTestCase {
    func parse(_ text: String) throws -> Scenario {
        try Scenario.parse(YAMLValue.parse(text, file: "generated.yml"), catalog: ScenarioTests.catalog, defaultTimeZone: ScenarioTests.berlin)
    }

    /// Over many seeds: every heavy day has at least 50 app opens and 8 web visits, counted in the parsed
    /// scenario itself (not only in the generator's own tally), and the same seed gives the same text.
    func testEveryHeavyDayHasFiftyOpensAndEightVisits() throws {
        let calendar = { var calendar = Calendar(identifier: .gregorian); calendar.timeZone = ScenarioTests.berlin; return calendar }()
        for seed in UInt64(1)...40 {
            let generated = HeavyUserDays(seed: seed, days: 3, profile: "faithful", pace: .heavy).generate()
            XCTAssertEqual(generated.text, HeavyUserDays(seed: seed, days: 3, profile: "faithful", pace: .heavy).scenario)
            let scenario = try parse(generated.text)
            XCTAssertEqual(scenario.steps.count, generated.counts.steps + scenario.steps.filter { if case .habit = $0.action { true } else { false } }.count)
            var opens: [Int: Int] = [:], visits: [Int: Int] = [:]
            for step in scenario.steps {
                let day = calendar.ordinality(of: .day, in: .era, for: step.time) ?? 0
                switch step.action {
                case .open: opens[day, default: 0] += 1
                case .visit: visits[day, default: 0] += 1
                default: break
                }
            }
            XCTAssertEqual(opens.count, 3, "seed \(seed): every day has opens")
            XCTAssertGreaterThanOrEqual(opens.values.min() ?? 0, 50, "seed \(seed)")
            XCTAssertGreaterThanOrEqual(visits.values.min() ?? 0, 8, "seed \(seed)")
            XCTAssertEqual(opens.values.min(), generated.counts.fewestOpensInADay, "seed \(seed)")
            XCTAssertEqual(visits.values.min(), generated.counts.fewestVisitsInADay, "seed \(seed)")
        }
    }

    /// The soak's pace is still valid, and its seeds differ.
    func testSoakDaysParse() throws {
        let first = try parse(HeavyUserDays(seed: 11, days: 2).scenario)
        let second = try parse(HeavyUserDays(seed: 29, days: 2).scenario)
        XCTAssertGreaterThan(first.steps.count, 40)
        XCTAssertNotEqual(first.steps, second.steps)
    }
}
