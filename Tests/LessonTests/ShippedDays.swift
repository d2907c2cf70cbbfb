import Foundation
import ShieldBusTestSupport

/// Every shipped configuration (`Config/*.yml`) and the day it ships with, as the journal tests play them: under a
/// given profile, with wall-time limits out of a loaded machine's reach (what is tested is the order, not the speed).
enum ShippedDays {
    /// Each configuration and its day (`default` and `habit-lock` ship the same; the second plays the restarts day).
    static let days = [("default", "habit-lock-day"), ("habit-lock", "habit-lock-restarts"), ("focus-window", "focus-window-day"),
                       ("speed-bump", "speed-bump-day"), ("bedtime", "bedtime-night"), ("profiles", "profiles-day"),
                       ("two-products", "two-products-day"), ("naive-habit-lock", "habit-lock-day"),
                       ("naive-bedtime", "bedtime-night"), ("naive-profiles", "profiles-day"), ("report-demo", "report-week")]

    /// The shipped configurations' names (`Config/*.yml` but the catalog).
    static func shipped() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: BuildProducts.repositoryRoot.appendingPathComponent("Config").path)
            .filter { $0.hasSuffix(".yml") && $0 != "catalog.yml" }.map { String($0.dropLast(".yml".count)) })
    }

    /// The configuration `name`, its plugins the built executables, patient: a plugin takes a broker silent for three
    /// heartbeats for gone and says hello again (`plugin.up` in the journal), so the heartbeat is slow too — a broker
    /// in a test's process, starved of CPU for a few seconds on a loaded machine, must not change the day.
    static func configuration(_ name: String) throws -> String {
        try ScenarioRun.shippedConfiguration(name) + "bus: {ackTimeoutMs: 60000, startupTimeoutMs: 60000, sessionTimeoutMs: 60000, heartbeatMs: 10000}\n"
    }

    /// The day `name` (`Config/scenarios/<name>.yml`) under `profile`.
    static func scenario(_ name: String, profile: String) throws -> String {
        let day = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Config/scenarios/\(name).yml"), encoding: .utf8)
        let lines = day.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("profile:") }
        return "profile: \(profile)\n" + lines.joined(separator: "\n")
    }

    /// Where two journals first differ, both lines shown; nil when they are the same.
    static func firstDifference(_ a: Data, _ b: Data) -> String? {
        guard a != b else { return nil }
        let lines = (String(decoding: a, as: UTF8.self).split(separator: "\n"), String(decoding: b, as: UTF8.self).split(separator: "\n"))
        let at = zip(lines.0, lines.1).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(lines.0.count, lines.1.count)
        return "line \(at + 1):\n  \(lines.0.dropFirst(at).first ?? "(end)")\n  \(lines.1.dropFirst(at).first ?? "(end)")"
    }
}
