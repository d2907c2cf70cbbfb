import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// The scenario steps explore needs — the device clock, the time zone, browser tabs, a broker crash — and
/// `expect:`, through the real broker and the habit lock's real plugin processes.
extension ClockAndPersistenceTests {
    /// An evening from 22:00 in Berlin: the app is set up at 22:05, then `rest` (more steps, then `end:` and `expect:`).
    static func evening(_ name: String, _ rest: String) -> String {
        """
        name: \(name)
        start: 2026-11-23T22:00
        timeZone: Europe/Berlin
        steps:
          - {at: "22:05", open: Habit Lock}
          - {after: 10s, authorize: approved}
          - {after: 1m, home: true}

        """ + rest
    }

    func testSettingTheDeviceClockMovesWallClockSchedulesAndTheClockPluginsSee() throws {
        let scenario = Self.evening("clock", """
          - {at: "22:30", setClock: "+2h"}
          - {at: "22:40", open: Instagram}
        end: after 5m
        expect:
          - {at: "22:41", shielded: Instagram}
          - {key: lastShieldDayCheck, value: 1795470000}

        """)
        let run = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertTrue(run.errors.contains("expectations      2 held"), run.errors)
        let change = try XCTUnwrap(run.events("device.clock-changed").first)
        XCTAssertEqual(change.bodyValue["offsetMs"]?.intValue, 7_200_000)
        // Set two hours forward at 22:30 the device reads 00:30 of the next day: the daily interval ends and the
        // next one starts at once, though true time is still 22:30.
        let daily = run.journal.filter { $0.topic.hasPrefix("deviceactivity.interval-did-") && $0.bodyValue["activity"]?.stringValue == "habit-lock.daily" && $0.time == change.time }
        XCTAssertEqual(daily.map(\.topic), ["deviceactivity.interval-did-end", "deviceactivity.interval-did-start"])
        // The shield is shown at 22:40 true time. The renderer's `Date()` reads 00:40, but it tracks the offset the OS
        // announced and notes true time, 22:40 (1795470000 s): setting the clock moves none of the product's times.
        XCTAssertEqual(run.events("shield.shown").first.map { $0.time }, 1_795_470_000_000)
    }

    func testATimeZoneChangeMovesWallClockSchedulesAndReachesPluginsStartedLater() throws {
        let scenario = Self.evening("zone", """
          - {at: "22:30", timeZone: Asia/Tokyo}
          - {at: "22:35", restart: true}
          - {at: "22:40", timeZone: Asia/Tokyo}
        end: after 5m

        """)
        let run = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let changes = run.events("device.time-zone-changed")
        XCTAssertEqual(changes.compactMap { $0.bodyValue["timeZone"]?.stringValue }, ["Asia/Tokyo", "Asia/Tokyo"])
        // 22:30 in Berlin is 06:30 tomorrow in Tokyo: the daily interval ends and the next day's starts.
        let atChange = run.journal.filter { $0.time == changes[0].time && $0.topic.hasPrefix("deviceactivity.interval-did-") && $0.bodyValue["activity"]?.stringValue == "habit-lock.daily" }
        XCTAssertEqual(atChange.map(\.topic), ["deviceactivity.interval-did-end", "deviceactivity.interval-did-start"])
        // The zone survives the restart (device.sqlite): choosing it again moves no interval.
        let again = run.journal.filter { $0.time == changes[1].time && $0.topic.hasPrefix("deviceactivity.interval-did-") }
        XCTAssertEqual(again.map(\.topic), [], "the restarted device already was on Tokyo time")
    }

    func testSwitchingTabsShowsThePageAgainUnderItsShield() throws {
        let scenario = Self.evening("tabs", """
          - {at: "22:45", visit: {url: "https://www.instagram.com/", tab: 1}}
          - {after: 1m, visit: {url: "https://github.com/", tab: 2}}
          - {after: 1m, switchTab: 1}
          - {after: 1m, switchTab: 2}
          - {after: 1m, switchTab: 5}
        end: after 5m
        expect:
          - {at: "22:45:30", shielded: instagram.com}
          - {at: "22:46:30", usable: github.com}
          - {at: "22:47:30", shielded: instagram.com}
          - {at: "22:48:30", usable: github.com}

        """)
        let run = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertTrue(run.errors.contains("expectations      4 held"), run.errors)
        let noTab = run.events("bus.error").filter { $0.bodyValue["code"]?.stringValue == "no-tab" }
        XCTAssertEqual(noTab.compactMap { $0.bodyValue["message"]?.stringValue }, ["switch to tab 5: no such tab is open (open tabs: 1, 2)"])
    }

    /// `fillActivityLimit`: the app's other activities take every free place of the 20, and survive a restart — a new
    /// activity is refused with `excessive-activities` (21 of 20), re-registering one the app already monitors is not.
    func testFillingTheActivityLimitRefusesANewActivityAndNotAKnownOne() throws {
        let scenario = Self.evening("fill", """
          - {at: "22:10", fillActivityLimit: true}
          - {after: 1m, restart: true}
          - {after: 1m, habit: Read}
          - {after: 10s, habit: Walk}
          - {after: 10s, habit: Stretch}
        end: after 5m

        """)
        let run = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let replies = run.events("deviceactivity.start-monitoring.reply")
        let refused = replies.filter { $0.bodyValue["error"]?["code"]?.stringValue == "excessive-activities" }
        XCTAssertFalse(refused.isEmpty, "the unlock's re-checks are new activities: \(replies.map(\.bodyValue))")
        XCTAssertTrue(refused.allSatisfy { $0.bodyValue["error"]?["message"]?.stringValue?.hasPrefix("Monitoring 21 activities") == true })
        let filled = try XCTUnwrap(run.events("scenario.step").first { $0.bodyValue["action"]?.stringValue?.contains("limit of 20") == true })
        // After the fill and the restart, the app registers its own activities again: known names, accepted.
        let reRegistered = replies.filter { $0.time > filled.time && $0.corr?.hasPrefix("app-") == true }
        XCTAssertFalse(reRegistered.isEmpty)
        XCTAssertTrue(reRegistered.allSatisfy { $0.bodyValue["ok"]?.boolValue == true }, "\(reRegistered.map(\.bodyValue))")
    }

    func testABrokerCrashRestartsEveryPluginOnTheSameStateAndRepeatsByteForByte() throws {
        let scenario = Self.evening("crash", """
          - {at: "22:30", open: Instagram}
          - {at: "22:31", crashBroker: true}
          - {at: "22:40", open: TikTok}
        end: day 2 00:05

        """)
        let configuration = try habitLockConfiguration()
        let first = try ScenarioRun.run(configuration: configuration, scenario: scenario, arguments: ["--profile", "ios-realistic"])
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        let started = first.events("bus.started")
        XCTAssertEqual(started.map { $0.bodyValue["after"]?.stringValue }, [nil, "crash"])
        let crashAt = started[1].seq
        let upAfter = first.events("plugin.up").filter { $0.seq > crashAt }.compactMap { $0.bodyValue["name"]?.stringValue }
        XCTAssertEqual(Set(upAfter), ["monitor", "shield", "action", "app", "reports", "notifier"], "every plugin started again")
        XCTAssertFalse(first.events("device.restarted").contains { $0.seq > crashAt }, "a crash is not a device restart")
        // What was on screen went with the broker; what it keeps on disk stayed: the lock is still in force
        // after the crash, and the daily schedule still ends at 23:59.
        XCTAssertTrue(first.events("shield.shown").contains { $0.seq > crashAt && $0.bodyValue["target"]?["application"]?["localizedDisplayName"]?.stringValue == "TikTok" })
        XCTAssertTrue(first.events("deviceactivity.interval-did-end").contains { $0.seq > crashAt && $0.bodyValue["activity"]?.stringValue == "habit-lock.daily" })
        let second = try ScenarioRun.run(configuration: configuration, scenario: scenario, arguments: ["--profile", "ios-realistic"])
        XCTAssertEqual(first.journalBytes, second.journalBytes, "a crash in virtual time is deterministic")
    }

    func testFailedExpectationsNameTheirLinesAndFailTheRun() throws {
        let scenario = Self.evening("wrong", """
          - {at: "22:30", open: Instagram}
        end: after 5m
        expect:
          - {at: "22:31", usable: Instagram}
          - {at: "22:31", shielded: Instagram}
          - {key: isCurrentlyUnlocked, value: true}
          - {notification: circle-nudge}

        """)
        let run = try ScenarioRun.run(configuration: try habitLockConfiguration(), scenario: scenario)
        XCTAssertEqual(run.exitStatus, 3, run.errors)
        XCTAssertTrue(run.errors.contains("expectations      3 of 4 FAILED"), run.errors)
        XCTAssertTrue(run.errors.contains("scenario.yml:11: Instagram should be usable at 2026-11-23 22:31 +01:00 but was shielded"), run.errors)
        XCTAssertTrue(run.errors.contains("scenario.yml:13: App-Group key isCurrentlyUnlocked should hold true at the end but holds"), run.errors)
        XCTAssertTrue(run.errors.contains("scenario.yml:14: no notification 'circle-nudge' was posted"), run.errors)
        XCTAssertFalse(run.errors.contains("scenario.yml:12:"), run.errors)
    }
}
