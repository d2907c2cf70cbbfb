import Foundation
import ShieldBusTestSupport
import XCTest

/// Every shipped plugin's launch template serves: under `ios-realistic` each launch of a plugin after its first is
/// forked from its template (docs/architecture.md § 8). A template whose warm-up started a thread, or made libdispatch
/// multithreaded in any other way, refuses to fork and says so only in its plugin's log; the broker then launches
/// that plugin plainly — the same journal, at several times the cost. This test reads what kind each launch was from
/// the broker's debug log, for every shipped configuration's day.
final class ShippedLaunchTemplatesTests: XCTestCase {
    /// One `started plugin` line: the plugin's name and its launch's kind (`forked`, `plain`).
    private struct Start: Equatable {
        let plugin: String
        let kind: String
    }

    func testEveryShippedPluginLaunchedAgainIsForkedFromItsTemplate() throws {
        let plays = try ShippedDays.days.map { name, day in
            (try ShippedDays.configuration(name), try ShippedDays.scenario(day, profile: "ios-realistic"), ["--log-level", "debug"])
        }
        let runs = try ScenarioRun.runAll(plays, timeoutSeconds: 240)
        var pluginsLaunchedAgain = Set<String>()
        for ((name, _), run) in zip(ShippedDays.days, runs) {
            XCTAssertEqual(run.events("scenario.ended").count, 1, "\(name): the day was played to its end: \(run.errors.suffix(2000))")
            XCTAssertFalse(run.errors.contains("launched plainly from now on"), "\(name): a template gave up: \(Self.warnings(run.errors))")
            XCTAssertFalse(run.errors.contains("this launch is a plain one"), "\(name): \(Self.warnings(run.errors))")
            let starts = Self.starts(in: run.errors)
            XCTAssertFalse(starts.isEmpty, "\(name): the debug log names each launch")
            for plugin in Set(starts.map(\.plugin)) {
                let kinds = starts.filter { $0.plugin == plugin }.map(\.kind)
                guard kinds.count > 1 else { continue }
                pluginsLaunchedAgain.insert("\(name)/\(plugin)")
                XCTAssertEqual(Set(kinds.dropFirst()), ["forked"], "\(name): \(plugin)'s launches after its first: \(kinds)")
            }
        }
        // The extensions of every product are launched again on their days: the assertion above judged each of them.
        for product in ["default", "focus-window", "speed-bump", "bedtime", "profiles"] {
            XCTAssertTrue(pluginsLaunchedAgain.contains { $0.hasPrefix("\(product)/") }, "\(product): no plugin was launched twice: \(pluginsLaunchedAgain.sorted())")
        }
    }

    /// The log line this test reads tells a plain launch apart: asked for plain launches, every launch is one.
    func testAPlainLaunchIsNamedSoInTheLog() throws {
        let run = try ScenarioRun.run(configuration: try ShippedDays.configuration("speed-bump"),
                                      scenario: try ShippedDays.scenario("speed-bump-day", profile: "ios-realistic"),
                                      arguments: ["--log-level", "debug", "--plain-launches"], timeoutSeconds: 240)
        XCTAssertEqual(run.exitStatus, 0, run.errors.suffix(2000).description)
        let starts = Self.starts(in: run.errors)
        XCTAssertGreaterThan(starts.filter { $0.plugin == "monitor" }.count, 1, "the monitor is launched at each callback")
        XCTAssertEqual(Set(starts.map(\.kind)), ["plain"])
    }

    /// The broker's `started plugin` lines, in order.
    private static func starts(in log: String) -> [Start] {
        log.split(separator: "\n").filter { $0.hasSuffix("started plugin") }.compactMap { line in
            let fields = Dictionary(line.split(separator: " ").compactMap { field -> (Substring, Substring)? in
                guard let equals = field.firstIndex(of: "=") else { return nil }
                return (field[..<equals], field[field.index(after: equals)...])
            }, uniquingKeysWith: { first, _ in first })
            guard let plugin = fields["plugin"], let kind = fields["launch"] else { return nil }
            return Start(plugin: String(plugin), kind: String(kind))
        }
    }

    private static func warnings(_ log: String) -> String {
        log.split(separator: "\n").filter { $0.contains(" warning ") }.prefix(10).joined(separator: "\n")
    }
}
