// What every regression day shares: playing days through the real broker and judging them (`assertDaysHold`,
// `DayChecks`), and the date arithmetic their scenarios need. The days themselves are grouped by behaviour.
import BusProtocol
import Configuration
import Foundation
import LockInvariant
import ShieldBusTestSupport
import XCTest

/// The base of the regression days: failures `shieldbus explore` found in the reference products, each kept as its
/// shrunk scenario and run on variations of it (other instants, other quirk seeds) under both profiles, through the
/// real broker and plugins. It holds no test of its own (a subclass would run it again).
class RegressionDayCase: XCTestCase {
    /// The instant showing `hour:minute` in `zone` on the local date `dayOffset` days from the one of `reference`.
    static func localDate(_ dayOffset: Int, hour: Int, minute: Int, around reference: Date, in zone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let day = calendar.date(byAdding: .day, value: dayOffset, to: reference) else { return nil }
        return calendar.date(bySettingHour: hour, minute: minute, second: 0, of: day)
    }

    /// The true instant at which the device clock, `clockShift` seconds ahead of true time, next shows midnight after
    /// `date`: the end of the device's day, and of a speed bump raised in it.
    static func deviceMidnight(after date: Date, clockShift: TimeInterval, in zone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.nextDate(after: date.addingTimeInterval(clockShift), matching: DateComponents(hour: 0, minute: 0, second: 0), matchingPolicy: .nextTime)?
            .addingTimeInterval(-clockShift)
    }

    /// A scenario's `at:` for `date`: "day N HH:mm:ss", N counted from the local date of `start`; in the second pass of a
    /// repeated DST hour an hour later, so that the time names one instant.
    static func scenarioTime(_ date: Date, from start: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var instant = date
        let wall = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: instant)
        if let first = calendar.date(from: wall), first != instant { instant.addTimeInterval(3600) }
        let day = (calendar.dateComponents([.day], from: calendar.startOfDay(for: start), to: calendar.startOfDay(for: instant)).day ?? 0) + 1
        return "day \(day) \(local(instant, in: zone, clockOnly: true))"
    }

    /// `2026-10-25T09:40` (or `09:40:30` with `clockOnly`) in `zone`.
    static func local(_ date: Date, in zone: TimeZone, clockOnly: Bool = false) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = clockOnly ? "HH:mm:ss" : "yyyy-MM-dd'T'HH:mm"
        return formatter.string(from: date)
    }

    /// Plays `scenario` through the real broker and plugins: it must end cleanly with the lock invariant held and,
    /// when it has `expect:` entries, all `expectations` of them held.
    @discardableResult
    func assertDayHolds(_ configuration: String, _ scenario: String, expectations: Int?, _ context: String,
                                file: StaticString = #filePath, line: UInt = #line) throws -> ScenarioRun {
        let run = try ScenarioRun.run(configuration: configuration, scenario: scenario)
        assertHeld(run, expectations: expectations, context, file: file, line: line)
        return run
    }

    /// `assertDayHolds` for many days, played side by side (`ScenarioRun.runAll`) and judged in the order they were
    /// added, each day then checked by its own `then` — every day in the slow lane, a slice of them otherwise
    /// (`SlowLane`), unless `everyDay`: a test that counts what its days exercised needs them all.
    func assertDaysHold(_ checks: DayChecks, everyDay: Bool = false) throws {
        let days = everyDay ? checks.days : SlowLane.slice(checks.days)
        let runs = try ScenarioRun.runAll(days.map { ($0.configuration, $0.scenario, []) })
        for (day, run) in zip(days, runs) {
            assertHeld(run, expectations: day.expectations, day.context, file: day.file, line: day.line)
            try day.then(run)
        }
    }

    func assertHeld(_ run: ScenarioRun, expectations: Int?, _ context: String, file: StaticString, line: UInt) {
        XCTAssertEqual(run.exitStatus, 0, "\(context): \(run.errors)", file: file, line: line)
        XCTAssertTrue(run.errors.contains("lock invariant    held"), "\(context): \(run.errors)", file: file, line: line)
        // A degraded bus (a plugin that loops until `ack-timeout`) fails a day as explore fails it.
        let degraded = run.events("bus.error").compactMap { $0.bodyValue["code"]?.stringValue }.filter { ["ack-timeout", "startup-timeout", "gap", "delivery-dropped"].contains($0) }
        XCTAssertEqual(degraded, [], "\(context): the bus was degraded", file: file, line: line)
        if let expectations {
            XCTAssertTrue(run.errors.contains("expectations      \(expectations) held"), "\(context): \(run.errors)", file: file, line: line)
        }
    }
}

/// The days of one test for `assertDaysHold`: each with what `assertDayHolds` takes, and what else to check of its run.
final class DayChecks {
    struct Day {
        let configuration: String, scenario: String, expectations: Int?, context: String
        let file: StaticString, line: UInt
        let then: (ScenarioRun) throws -> Void
    }

    private(set) var days: [Day] = []

    func add(_ configuration: String, _ scenario: String, expectations: Int?, _ context: String,
             file: StaticString = #filePath, line: UInt = #line, then: @escaping (ScenarioRun) throws -> Void = { _ in }) {
        days.append(Day(configuration: configuration, scenario: scenario, expectations: expectations, context: context, file: file, line: line, then: then))
    }
}

/// What regression days of several behaviours judge with.
extension RegressionDayCase {
    /// The lock invariant's checker for a configuration's text.
    static func checker(_ configuration: String) throws -> LockInvariantChecker {
        let parsed = try ShieldBusConfiguration.parse(YAMLValue.parse(configuration, file: "speed-bump.yml"))
        let catalog = try AppCatalog.load(path: BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        return try LockInvariantChecker(configuration: parsed, catalog: catalog)
    }

    /// The journal with `bus.started` naming no quirks: as a broker before the ruling journaled it.
    static func withoutQuirks(_ journal: [Envelope]) -> [Envelope] {
        journal.map { envelope in
            guard envelope.topic == "bus.started" else { return envelope }
            var plain = envelope
            plain.body = JSONValue.object(["clock": "virtual"]).jsonBytes
            return plain
        }
    }
}
