import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// The bus clock's scaled mode, and DeviceActivity schedules surviving a broker (device) restart — through the
/// real broker and real plugin processes.
final class ClockAndPersistenceTests: XCTestCase {
    let root = BuildProducts.repositoryRoot.path

    func habitLockConfiguration() throws -> String {
        try ScenarioRun.shippedConfiguration("habit-lock")
    }

    /// A plugin that takes minute ticks: the Python example plugin (a real process) subscribed to `clock.tick`.
    static let tickTaker = """
        plugins:
          - {name: ticks, \(PluginPython.entryFields), role: generic, restart: never, environment: {PYTHONUNBUFFERED: "1"},
             arguments: ["\(BuildProducts.repositoryRoot.appendingPathComponent("Plugins/examples/python/echo_plugin.py").path)", --subscribe, clock.tick]}

        """

    /// Bus time at 3,600× (the run's 40 minutes last two thirds of a second): each timer runs at its own instant
    /// even when the broker gets to it late (a stall on a loaded machine once merged the open, midnight and the
    /// step after it into the instant the broker woke at).
    func testAScaledClockRunsBusTimeFasterThanWallTimeInOrder() throws {
        // No plugin, and 25 minutes of bus time before the first step: a process starting up uses bus time up.
        let scenario = "name: scaled\nstart: 2026-11-23T23:30\nsteps:\n  - at: \"23:55\"\n    open: Duolingo\n  - at: \"day 2 00:05\"\n    home: true\nend: day 2 00:10\n"
        let run = try ScenarioRun.run(configuration: "name: scaled\ntimeZone: Europe/Berlin\nclock: {mode: scaled, speed: 3600}\n", scenario: scenario,
                                      arguments: ["--clock", "scaled", "--speed", "3600"])
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertEqual(run.events("bus.started").first?.bodyValue["clock"]?.stringValue, "scaled")
        XCTAssertEqual(run.events("clock.day-changed").compactMap { $0.bodyValue["local"]?.stringValue }, ["2026-11-24T00:00:00"],
                       "bus time ran through midnight, and its day change came at midnight")
        XCTAssertEqual(run.journal.map(\.time), run.journal.map(\.time).sorted(), "bus time never goes back")
        let opened = try XCTUnwrap(run.events("activity.app.opened").first)
        let step = try XCTUnwrap(run.events("scenario.step").first)
        XCTAssertEqual(opened.time, step.time, "the device acts at the step's instant")
        let midnight = try XCTUnwrap(run.events("clock.day-changed").first)
        XCTAssertEqual(midnight.time, 1_795_474_800_000, "2026-11-24T00:00 in Berlin, exactly")
        XCTAssertEqual(opened.time, midnight.time - 5 * 60_000, "the open at 23:55, whenever the broker got to it")
        XCTAssertEqual(try XCTUnwrap(run.events("activity.home").last).time, midnight.time + 5 * 60_000, "home at 00:05")
    }

    /// Minute ticks go out only while a plugin takes them; the day boundary goes out at every local midnight
    /// (the zone in force) whoever listens — through the real broker, with and without a plugin taking ticks.
    func testMinuteTicksOnlyForASubscriberAndTheDayChangeAtEveryLocalMidnight() throws {
        let night = "name: night\nstart: 2026-11-23T23:50\nsteps: []\nend: day 3 00:10\n"
        let configuration = "name: ticks\ntimeZone: Europe/Berlin\ndevice: {companionApp: Habit Lock}\n"
        let unheard = try ScenarioRun.run(configuration: configuration, scenario: night)
        XCTAssertEqual(unheard.exitStatus, 0, unheard.errors)
        XCTAssertEqual(unheard.events("clock.tick").count, 0, "no plugin takes minute ticks: none is made")
        let days = unheard.events("clock.day-changed").compactMap { $0.bodyValue["local"]?.stringValue }
        XCTAssertEqual(days, ["2026-11-24T00:00:00", "2026-11-25T00:00:00"])
        let heard = try ScenarioRun.run(configuration: configuration + Self.tickTaker, scenario: night)
        XCTAssertEqual(heard.exitStatus, 0, heard.errors)
        let ticks = heard.events("clock.tick").compactMap { $0.bodyValue["local"]?.stringValue }
        XCTAssertEqual(ticks.count, 24 * 60 + 19, "every whole minute from 23:51 to day 3 00:09 (the run ends at 00:10, before its tick): \(ticks.prefix(3))…")
        XCTAssertEqual(ticks, ticks.sorted())
        XCTAssertEqual(heard.events("clock.day-changed").compactMap { $0.bodyValue["local"]?.stringValue }, days)
        // At midnight the tick comes first, then the day change, at the same instant.
        let midnight = try XCTUnwrap(heard.journal.firstIndex { $0.topic == "clock.day-changed" })
        XCTAssertEqual(heard.journal[midnight - 1].topic, "clock.tick")
        XCTAssertEqual(heard.journal[midnight - 1].time, heard.journal[midnight].time)
    }

    /// A minute tick's `local` is the wall clock in the zone in force: through Berlin's fall-back night (02:00–03:00
    /// shown twice) and, after a `time-zone` change, in the new zone — not in the configuration's.
    func testMinuteTicksShowTheZoneInForceThroughAFallBackAndAfterAZoneChange() throws {
        let night = "name: fall-back\nstart: 2026-10-25T01:50\nsteps:\n  - {after: 7830s, timeZone: America/New_York}\nend: after 20m\n"
        let configuration = "name: ticks\ntimeZone: Europe/Berlin\ndevice: {companionApp: Habit Lock}\n"
        let run = try ScenarioRun.run(configuration: configuration + Self.tickTaker, scenario: night)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let change = try XCTUnwrap(run.events("device.time-zone-changed").first).time
        let ticks = run.events("clock.tick")
        XCTAssertGreaterThan(ticks.count, 140, "every minute from 01:51 CEST to 22:20 in New York")
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        /// The wall clock of `time` in `zone` from the zone's offset alone, read on a calendar without transitions.
        func wall(_ time: BusTime, in zone: String) -> String {
            let instant = Date(timeIntervalSince1970: Double(time) / 1000)
            let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                       from: instant.addingTimeInterval(Double(TimeZone(identifier: zone)!.secondsFromGMT(for: instant))))
            return String(format: "%04d-%02d-%02dT%02d:%02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
        }
        for tick in ticks {
            XCTAssertEqual(tick.bodyValue["local"]?.stringValue, wall(tick.time, in: tick.time < change ? "Europe/Berlin" : "America/New_York"))
        }
        let shown = ticks.compactMap { $0.bodyValue["local"]?.stringValue }
        XCTAssertTrue(zip(shown, shown.dropFirst()).contains { $0 == ("2026-10-25T02:59:00", "2026-10-25T02:00:00") },
                      "the hour from 02:00 is shown twice")
        XCTAssertEqual(shown.last?.hasPrefix("2026-10-24T22:"), true, "the last ticks in New York: \(shown.suffix(2))")
    }

    func testSchedulesPersistAcrossABrokerRestart() throws {
        let state = TemporaryDirectory(prefix: "sbpersist")
        let day = "name: day\nstart: 2026-11-23T22:00\nsteps: []\nend: day 1 22:10\n"
        let first = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, stateDirectory: state.path)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        XCTAssertTrue(first.events("deviceactivity.start-monitoring.request").contains { $0.bodyValue["activity"]?.stringValue == "habit-lock.daily" })
        // The device boots again with no plugin that registers anything: the daily schedule still runs at midnight.
        let quiet = "name: restarted\ntimeZone: Europe/Berlin\ndevice: {companionApp: Habit Lock}\n"
        let night = "name: night\nstart: 2026-11-23T23:50\nsteps: []\nend: day 2 00:05\n"
        let second = try ScenarioRun.run(configuration: quiet, scenario: night, arguments: ["--keep-state"], stateDirectory: state.path)
        XCTAssertEqual(second.exitStatus, 0, second.errors)
        let starts = second.events("deviceactivity.interval-did-start").compactMap { $0.bodyValue["activity"]?.stringValue }
        XCTAssertTrue(starts.contains("habit-lock.daily"), "the persisted daily schedule started its new interval: \(starts)")
        XCTAssertTrue(second.events("deviceactivity.interval-did-end").contains { $0.bodyValue["activity"]?.stringValue == "habit-lock.daily" },
                      "and ended the old one at 23:59")
    }

    /// A phone switched off in Berlin and on in Tokyo (the state kept, the configuration's zone another): the zone
    /// changes at start, announced as any change is, and the daily schedule registered in Berlin starts at Tokyo's
    /// midnight. Switched on again where it was, nothing is announced.
    func testAPhoneSwitchedOnInAnotherZoneChangesZoneAtStart() throws {
        let state = TemporaryDirectory(prefix: "sbzone")
        let day = "name: day\nstart: 2026-11-23T22:00\nsteps: []\nend: day 1 22:10\n"
        let first = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: day, stateDirectory: state.path)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        XCTAssertTrue(first.events("device.time-zone-changed").isEmpty, "a fresh device starts in its zone: nothing changed")

        let inTokyo = "name: tokyo\ntimeZone: Asia/Tokyo\ndevice: {companionApp: Habit Lock}\n"
        let night = "name: night\nstart: 2026-11-24T23:50\nsteps: []\nend: day 2 00:05\n"
        let second = try ScenarioRun.run(configuration: inTokyo, scenario: night, arguments: ["--keep-state"], stateDirectory: state.path)
        XCTAssertEqual(second.exitStatus, 0, second.errors)
        let changes = second.events("device.time-zone-changed")
        XCTAssertEqual(changes.compactMap { $0.bodyValue["timeZone"]?.stringValue }, ["Asia/Tokyo"], "announced once, at start")
        XCTAssertEqual(changes.first?.time, second.journal.first?.time, "at the start, before the night goes on")
        let daily = second.events("deviceactivity.interval-did-start").filter { $0.bodyValue["activity"]?.stringValue == "habit-lock.daily" }
        XCTAssertEqual(daily.last?.time, 1_795_532_400_000, "the daily interval starts at 2026-11-25T00:00 in Tokyo: \(daily.map(\.time))")

        let again = try ScenarioRun.run(configuration: inTokyo, scenario: night.replacingOccurrences(of: "2026-11-24", with: "2026-11-26"),
                                        arguments: ["--keep-state"], stateDirectory: state.path)
        XCTAssertEqual(again.exitStatus, 0, again.errors)
        XCTAssertTrue(again.events("device.time-zone-changed").isEmpty, "switched on where it was switched off: no change")
    }
}

/// Short-lived extensions (ios-realistic): an extension's process ends after each callback, so what it keeps
/// only in memory is gone by the next one — and a run stays deterministic all the same.
final class ShortLivedExtensionTests: XCTestCase {
    func testAnExtensionLosesItsMemoryBetweenCallbacksOnlyUnderIOSRealistic() throws {
        let configuration = Self.configuration("memory", monitor: "fixture-memory-monitor")
        let day = "name: memory\nstart: 2026-11-23T06:30\nsteps: []\nend: day 1 09:30\n"
        let faithful = try ScenarioRun.run(configuration: configuration, scenario: day, arguments: ["--profile", "faithful"])
        XCTAssertEqual(faithful.exitStatus, 0, faithful.errors)
        XCTAssertEqual(faithful.events("app.test.memory").compactMap { $0.bodyValue["seen"]?.intValue }, [1, 2, 3])
        let realistic = try ScenarioRun.run(configuration: configuration, scenario: day,
                                            arguments: ["--profile", "ios-realistic", "--seed", "5"])
        XCTAssertEqual(realistic.exitStatus, 0, realistic.errors)
        let seen = realistic.events("app.test.memory").compactMap { $0.bodyValue["seen"]?.intValue }
        XCTAssertFalse(seen.isEmpty)
        XCTAssertEqual(Set(seen), [1], "a new process for every callback: \(seen)")
        let callbacks = realistic.journal.filter { $0.topic.hasPrefix("deviceactivity.interval-did-") }.count
        XCTAssertEqual(realistic.events("plugin.down").filter { $0.bodyValue["name"]?.stringValue == "monitor" }.count, callbacks,
                       "the extension's process ends after each callback (starts and ends)")
    }

    func testRestartsForceQuitsAndUpdatesUnderIOSRealisticGiveTheSameJournalTwice() throws {
        let root = BuildProducts.repositoryRoot.path
        var configuration = try String(contentsOfFile: root + "/Config/habit-lock.yml", encoding: .utf8)
        configuration = configuration.replacingOccurrences(of: "scenario: scenarios/habit-lock-day.yml\n", with: "")
        for name in ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "report-builder", "notifier"] {
            configuration = configuration.replacingOccurrences(of: "executable: \(name)", with: "executable: \(BuildProducts.path(name))")
        }
        let scenario = try String(contentsOfFile: root + "/Config/scenarios/habit-lock-restarts.yml", encoding: .utf8)
        let first = try ScenarioRun.run(configuration: configuration, scenario: scenario, arguments: ["--profile", "ios-realistic"])
        let second = try ScenarioRun.run(configuration: configuration, scenario: scenario, arguments: ["--profile", "ios-realistic"])
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        XCTAssertGreaterThan(first.events("plugin.down").count, 5, "extension processes came and went")
        XCTAssertEqual(first.events("device.restarted").count, 2)
        XCTAssertEqual(first.journalBytes, second.journalBytes, "the journals differ")
    }
}

/// Every DeviceActivity callback through the real broker, at its instant; and Apple's validation.
final class DeviceActivityCallbackTests: XCTestCase {
    func testWarningsThresholdsAndTheIntervalArriveAtTheirInstants() throws {
        let configuration = """
        name: callbacks
        timeZone: Europe/Berlin
        device: {companionApp: Habit Lock}
        plugins:
          - {name: monitor, executable: \(BuildProducts.path("fixture-callback-monitor")), role: monitor}
        """
        // Instagram in use from 10:05: the 10-minute threshold (over all activity) is reached at 10:15,
        // its 5-minute warning at 10:10.
        let scenario = """
        name: callbacks
        start: 2026-11-23T09:00
        steps:
          - at: "10:05"
            open: Instagram
          - at: "10:25"
            home: true
        end: day 1 10:45
        """
        let run = try ScenarioRun.run(configuration: configuration, scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        func local(_ envelope: Envelope) -> String {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
            let c = calendar.dateComponents([.hour, .minute], from: Date(timeIntervalSince1970: Double(envelope.time) / 1000))
            return String(format: "%02d:%02d", c.hour!, c.minute!)
        }
        let callbacks = run.journal.filter { $0.topic.hasPrefix("deviceactivity.") && !$0.topic.hasSuffix("request") && !$0.topic.hasSuffix("reply") }
            .map { "\(local($0)) \($0.topic.dropFirst("deviceactivity.".count))" }
        XCTAssertEqual(callbacks, [
            "09:55 interval-will-start-warning",
            "10:00 interval-did-start",
            "10:10 event-will-reach-threshold-warning",
            "10:15 event-did-reach-threshold",
            "10:25 interval-will-end-warning",
            "10:30 interval-did-end",
        ])
        let refused = try XCTUnwrap(run.events("app.test.refused").first?.bodyValue["error"]?.stringValue)
        XCTAssertTrue(refused.contains("interval-too-short"), refused)
    }
}
