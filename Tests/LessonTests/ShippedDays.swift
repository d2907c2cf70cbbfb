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

    /// The broker's `started plugin` lines of a run with `--log-level debug`, in order: each launch's plugin and kind
    /// (`forked` from its template, `plain`, `in-process`).
    static func launches(inLog log: String) -> [(plugin: String, kind: String)] {
        log.split(separator: "\n").filter { $0.hasSuffix("started plugin") }.compactMap { line in
            let fields = Dictionary(line.split(separator: " ").compactMap { field -> (Substring, Substring)? in
                guard let equals = field.firstIndex(of: "=") else { return nil }
                return (field[..<equals], field[field.index(after: equals)...])
            }, uniquingKeysWith: { first, _ in first })
            guard let plugin = fields["plugin"], let kind = fields["launch"] else { return nil }
            return (String(plugin), String(kind))
        }
    }

    /// The plugins of an `ios-realistic` run (its log at `debug`) launched more than once whose launches after the first
    /// were not all forked from their template. A template that refused to fork (a warm-up that started a thread or
    /// made libdispatch multithreaded) is named; one that only did not answer within the broker's wall-clock bounds on
    /// a loaded machine (`did not serve within`, `did not launch it`) is load, not a refusal, and is left out.
    static func pluginsLaunchedPlainlyAgain(inLog log: String) -> (judged: Set<String>, plain: [String: [String]]) {
        let starts = launches(inLog: log)
        let slow = Set(log.split(separator: "\n").filter { $0.contains("did not serve within") || $0.contains("did not launch it") }
            .compactMap { line in line.split(separator: " ").first { $0.hasPrefix("plugin=") }.map { String($0.dropFirst("plugin=".count)) } })
        var judged = Set<String>(), plain: [String: [String]] = [:]
        for plugin in Set(starts.map(\.plugin)) where !slow.contains(plugin) {
            let kinds = starts.filter { $0.plugin == plugin }.map(\.kind)
            guard kinds.count > 1 else { continue }
            judged.insert(plugin)
            if Set(kinds.dropFirst()) != ["forked"] { plain[plugin] = kinds }
        }
        return (judged, plain)
    }

    /// Where two journals first differ, both lines shown; nil when they are the same.
    static func firstDifference(_ a: Data, _ b: Data) -> String? {
        guard a != b else { return nil }
        let lines = (String(decoding: a, as: UTF8.self).split(separator: "\n"), String(decoding: b, as: UTF8.self).split(separator: "\n"))
        let at = zip(lines.0, lines.1).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(lines.0.count, lines.1.count)
        return "line \(at + 1):\n  \(lines.0.dropFirst(at).first ?? "(end)")\n  \(lines.1.dropFirst(at).first ?? "(end)")"
    }
}
