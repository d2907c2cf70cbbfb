import BusProtocol
import Configuration
import Foundation
import LockInvariant
import ShieldBusTestSupport
import XCTest

/// A seeded, randomized soak: many random days of a heavy user under the ios-realistic profile, the lock
/// invariant checked over the whole run. A failure prints its seed, so it replays exactly.
/// More days or seeds: SHIELDBUS_SOAK_DAYS, SHIELDBUS_SOAK_SEEDS (comma-separated).
final class SoakTests: XCTestCase {
    func testRandomDaysOfAHeavyUserKeepTheLockInvariant() throws {
        let environment = ProcessInfo.processInfo.environment
        let days = Int(environment["SHIELDBUS_SOAK_DAYS"] ?? "") ?? 2
        let seeds = (environment["SHIELDBUS_SOAK_SEEDS"] ?? "11,29,47").split(separator: ",").compactMap { UInt64($0) }
        let root = BuildProducts.repositoryRoot
        let configuration = try ScenarioRun.shippedConfiguration("habit-lock")
        let parsed = try ShieldBusConfiguration.parse(YAMLValue.parse(configuration, file: "habit-lock.yml"))
        let catalog = try AppCatalog.load(path: root.appendingPathComponent("Config/catalog.yml").path)
        let checker = try LockInvariantChecker(configuration: parsed, catalog: catalog)
        // The seeds' days are played side by side (a virtual run keeps about one core busy), then judged in order.
        let runs = try ScenarioRun.runAll(seeds.map { (configuration, HeavyUserDays(seed: $0, days: days).scenario, []) }, timeoutSeconds: 120)
        for (seed, run) in zip(seeds, runs) {
            XCTAssertTrue(run.exitStatus == 0 || run.exitStatus == 3, "seed \(seed): the run failed: \(run.errors)")
            XCTAssertGreaterThan(run.events("scenario.step").count, 40 * days, "seed \(seed): the soak played too few steps")
            let degraded = run.events("bus.error").compactMap { $0.bodyValue["code"]?.stringValue }
                .filter { ["ack-timeout", "startup-timeout", "gap", "delivery-dropped", "delivery-abandoned", "delivery-log-full", "storage-failed"].contains($0) }
            XCTAssertEqual(degraded, [], "seed \(seed): the run was degraded")
            let violations = checker.verdicts(for: run.journal).flatMap(\.violations)
            XCTAssertEqual(violations.map(\.description), [], "seed \(seed) (replay: SHIELDBUS_SOAK_SEEDS=\(seed) SHIELDBUS_SOAK_DAYS=\(days)) broke the lock invariant")
        }
    }
}
