import BusProtocol
import Configuration
import DeviceOS
import Foundation
import LockInvariant
import ShieldBusTestSupport
import XCTest

/// A seeded, randomized soak: many random days of a heavy user under the ios-realistic profile, the lock
/// invariant checked over the whole run. A failure prints its seed, so it replays exactly.
/// More days or seeds: SHIELDBUS_SOAK_DAYS, SHIELDBUS_SOAK_SEEDS (comma-separated).
final class SoakTests: XCTestCase {
    static let distracting = ["Instagram", "TikTok", "YouTube", "Reddit", "Candy Crush", "Clash Royale"]
    static let other = ["Duolingo", "Kindle", "Spotify", "WhatsApp", "Maps", "Notion"]
    static let sites = ["https://www.instagram.com/explore/", "https://www.reddit.com/r/swift", "https://www.nytimes.com/", "https://github.com/"]

    /// A heavy user's days: pickups every few minutes, habits done (or not), the app backgrounded, force-quit,
    /// the phone restarted, iOS updated, shields dismissed.
    static func scenario(seed: UInt64, days: Int) -> String {
        var random = SeededRandom(seed: seed)
        var lines = ["name: soak-\(seed)", "start: 2026-11-23T06:00", "profile: ios-realistic", "seed: \(seed)", "steps:"]
        func step(_ at: String, _ action: String) { lines.append("  - at: \"\(at)\"\n    \(action)") }
        for day in 1...days {
            var minute = 6 * 60 + 30
            var habitsDone = 0
            while minute < 23 * 60 {
                minute += Int.random(in: 3...25, using: &random)
                let second = Int.random(in: 0...59, using: &random)
                let at = String(format: "day %d %02d:%02d:%02d", day, minute / 60 % 24, minute % 60, second)
                guard minute < 23 * 60 else { break }
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<35: step(at, "open: \(distracting.randomElement(using: &random)!)")
                case 35..<50: step(at, "open: \(other.randomElement(using: &random)!)")
                case 50..<58: step(at, "press: \(Bool.random(using: &random) ? "primary" : "secondary")")
                case 58..<66: step(at, "visit: {url: \"\(sites.randomElement(using: &random)!)\", tab: \(Int.random(in: 1...3, using: &random)), private: \(Int.random(in: 0..<4, using: &random) == 0)}")
                case 66..<76:
                    step(at, "open: Habit Lock")
                    if habitsDone < 3 && Int.random(in: 0..<3, using: &random) > 0 {
                        habitsDone += 1
                        lines.append("  - after: 20s\n    habit: Habit \(habitsDone)")
                    }
                case 76..<88: step(at, "home: true")
                case 88..<92: step(at, "forceQuit: Habit Lock")
                case 92..<94: step(at, "restart: true")
                case 94..<95: step(at, "osUpdate: true")
                default: step(at, "close:")
                }
            }
        }
        lines.append("end: day \(days) 23:30")
        return lines.joined(separator: "\n") + "\n"
    }

    func testRandomDaysOfAHeavyUserKeepTheLockInvariant() throws {
        let environment = ProcessInfo.processInfo.environment
        let days = Int(environment["SHIELDBUS_SOAK_DAYS"] ?? "") ?? 2
        let seeds = (environment["SHIELDBUS_SOAK_SEEDS"] ?? "11,29,47").split(separator: ",").compactMap { UInt64($0) }
        let root = BuildProducts.repositoryRoot
        let configuration = try ScenarioRun.shippedConfiguration("habit-lock")
        let parsed = try ShieldBusConfiguration.parse(YAMLValue.parse(configuration, file: "habit-lock.yml"))
        let catalog = try AppCatalog.load(path: root.appendingPathComponent("Config/catalog.yml").path)
        let checker = try LockInvariantChecker(configuration: parsed, catalog: catalog)
        for seed in seeds {
            let scenario = Self.scenario(seed: seed, days: days)
            let run = try ScenarioRun.run(configuration: configuration, scenario: scenario, timeoutSeconds: 120)
            XCTAssertTrue(run.exitStatus == 0 || run.exitStatus == 3, "seed \(seed): the run failed: \(run.errors)")
            XCTAssertGreaterThan(run.events("scenario.step").count, 40 * days, "seed \(seed): the soak played too few steps")
            let degraded = run.events("bus.error").compactMap { $0.bodyValue["code"]?.stringValue }
                .filter { ["ack-timeout", "startup-timeout", "gap", "delivery-dropped"].contains($0) }
            XCTAssertEqual(degraded, [], "seed \(seed): the run was degraded")
            let violations = checker.verdicts(for: run.journal).flatMap(\.violations)
            XCTAssertEqual(violations.map(\.description), [], "seed \(seed) (replay: SHIELDBUS_SOAK_SEEDS=\(seed) SHIELDBUS_SOAK_DAYS=\(days)) broke the lock invariant")
        }
    }
}
