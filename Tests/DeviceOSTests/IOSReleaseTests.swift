import BusProtocol
import Configuration
import DeviceOS
import Foundation
import ShieldBusTestSupport
import XCTest

/// The iOS releases' Screen Time bugs (`--ios`, `IOSRelease`), each seen through the device OS with Speed Bump's own
/// plugins in virtual time, beside the same day on no release.
final class IOSReleaseTests: XCTestCase {
    func testAReleaseAddsItsBugsToTheProfileAndTheConfigurationsSwitchesWin() {
        let realistic = Fidelity(profile: .iosRealistic, release: .iOS26_3_1)
        XCTAssertTrue(realistic.has(.monitorNeverWoken))
        XCTAssertTrue(realistic.has(.wholeMinuteCallbacks), "on top of the profile")
        XCTAssertEqual(Fidelity(profile: .faithful, release: .iOS17_5_1).quirks, [.tokensChangeUnderShields])
        XCTAssertFalse(Fidelity(profile: .faithful, release: .iOS26_2RC, overrides: [.thresholdsAtFirstPickup: false]).has(.thresholdsAtFirstPickup))
        // No profile plays a release's bug or a reported behaviour: the profiles play what they always did.
        XCTAssertEqual(Fidelity.Profile.iosRealistic.quirks, [.unreliableFarSchedules, .restartingMonitoringEndsInterval, .wholeMinuteCallbacks,
                                                             .shortLivedExtensions, .suspendedBackgroundApps, .suspendedAsyncTasks])
        XCTAssertEqual(Fidelity(profile: .faithful).quirks, [])
    }

    /// 17.5.1: past the threshold Instagram is shielded; after the update the store still names the old token, which
    /// matches no app — Instagram opens. On no release the OS carries its store over and the shield stays.
    func testOn17_5_1AnUpdateLeavesTheShieldsBlank() throws {
        let day = SpeedBumpDays.setUp + """
          - {at: "07:10", open: Instagram}
          - {after: 31m, home: true}
          - {after: 1m, open: Instagram}
          - {after: 1m, home: true}
          - {after: 1m, osUpdate: true}
          - {after: 1m, open: Instagram}
        end: after 2m

        """
        let (none, release) = try SpeedBumpDays.play(day, on: "17.5.1")
        let afterUpdate = SpeedBumpDays.at("2026-11-25T07:45")
        for run in [none, release] {
            XCTAssertTrue(run.events("shield.shown").contains { $0.time == SpeedBumpDays.at("2026-11-25T07:42") }, "shielded past the threshold: \(run.errors)")
        }
        XCTAssertTrue(none.events("shield.shown").contains { $0.time == afterUpdate }, "no release: the store was carried over")
        XCTAssertFalse(release.events("shield.shown").contains { $0.time >= afterUpdate }, "17.5.1: nothing shielded after the update")
        XCTAssertTrue(release.events("activity.app.opened").contains { $0.time == afterUpdate }, "17.5.1: Instagram opens")
        XCTAssertEqual(release.events("device.quirk").first?.bodyValue["quirk"]?.stringValue, "tokens-change-under-shields")
        XCTAssertEqual(release.events("bus.started").first?.bodyValue["ios"]?.stringValue, "17.5.1")
        XCTAssertNil(none.events("bus.started").first?.bodyValue["ios"], "no release, none named")
    }

    /// 26.2 RC: each day's first pickup — Speed Bump opened on day 1, Instagram on day 2 — fires the thresholds of both
    /// its activities (the daily limit, the selection's), with no use; the second pickup fires nothing. On no release
    /// nothing fires.
    func testOn26_2RCTheFirstPickupOfTheDayFiresEveryThreshold() throws {
        let day = SpeedBumpDays.setUp + """
          - {at: "day 2 07:30", open: Instagram}
          - {after: 1m, home: true}
          - {after: 1m, open: Instagram}
        end: after 1m

        """
        let (none, release) = try SpeedBumpDays.play(day, on: "26.2-rc")
        XCTAssertEqual(none.events("deviceactivity.event-did-reach-threshold").count, 0, none.errors)
        let fired = Dictionary(grouping: release.events("deviceactivity.event-did-reach-threshold"), by: \.time)
            .mapValues { Set($0.compactMap { $0.bodyValue["event"]?.stringValue }) }
        let events: Set<String> = ["speed-bump.limit", "speed-bump.selection"]
        XCTAssertEqual(fired, [SpeedBumpDays.at("2026-11-25T07:05"): events, SpeedBumpDays.at("2026-11-26T07:30"): events],
                       "each threshold once, at each day's first pickup: \(release.errors)")
        XCTAssertTrue(release.events("shield.shown").contains { $0.time >= SpeedBumpDays.at("2026-11-26T07:30") }, "the product locked on it")
    }

    /// 26.3.1: the monitor hears no callback — no threshold, so no shield; each swallowed callback is a `device.quirk`.
    func testOn26_3_1TheMonitorIsNeverWoken() throws {
        let day = SpeedBumpDays.setUp + """
          - {at: "07:10", open: Instagram}
          - {after: 31m, home: true}
          - {after: 1m, open: Instagram}
        end: after 1m

        """
        let (none, release) = try SpeedBumpDays.play(day, on: "26.3.1")
        XCTAssertEqual(none.events("deviceactivity.event-did-reach-threshold").count, 1, none.errors)
        XCTAssertFalse(none.events("shield.shown").isEmpty)
        XCTAssertTrue(release.journal.filter { $0.topic.hasPrefix("deviceactivity.") && !$0.topic.contains(".request") && !$0.topic.contains(".reply") }.isEmpty,
                      "no callback reached the bus: \(release.journal.map(\.topic).filter { $0.hasPrefix("deviceactivity.") })")
        let swallowed = release.events("device.quirk").map(\.bodyValue)
        XCTAssertTrue(swallowed.contains { $0["quirk"]?.stringValue == "monitor-never-woken" && $0["callback"]?.stringValue == "deviceactivity.event-did-reach-threshold" },
                      "\(swallowed)")
        XCTAssertTrue(release.events("shield.shown").isEmpty, "a monitor-driven lock cannot lock")
    }
}

/// The behaviours developers report, as quirks a configuration turns on (`quirks:`), each beside the same day without.
final class ReportedBehaviourTests: XCTestCase {
    /// Registered at 07:00 for a day whose interval began at midnight: the thresholds of both activities fire at once,
    /// with no use.
    func testAThresholdFiresAtOnceWhenTheStartAlreadyMatchedToday() throws {
        let (without, with) = try SpeedBumpDays.play(SpeedBumpDays.setUp + "end: after 5m\n", quirk: "past-start-fires-thresholds")
        XCTAssertEqual(without.events("deviceactivity.event-did-reach-threshold").count, 0, without.errors)
        let fired = with.events("deviceactivity.event-did-reach-threshold")
        XCTAssertEqual(Set(fired.compactMap { $0.bodyValue["event"]?.stringValue }), ["speed-bump.limit", "speed-bump.selection"], with.errors)
        let registered = try XCTUnwrap(with.events("deviceactivity.start-monitoring.reply").first?.time)
        XCTAssertTrue(fired.allSatisfy { $0.time == registered }, "at the registrations, 07:00, before any use")
    }

    /// A schedule from 09:00 (a time) to a dated 10:00 is taken, and its interval never starts; faithful refuses it.
    func testAScheduleMixingTimeOnlyAndFullDateNeverStarts() throws {
        let day = SpeedBumpDays.setUp + """
          - at: "08:00"
            publish:
              topic: deviceactivity.start-monitoring.request
              body: {activity: mixed, events: {}, schedule: {intervalStart: {hour: 9, minute: 0}, intervalEnd: {year: 2026, month: 11, day: 25, hour: 10, minute: 0}, repeats: false}}
        end: day 1 10:30

        """
        let (without, with) = try SpeedBumpDays.play(day, quirk: "mixed-components-never-start")
        func mixed(_ run: ScenarioRun, _ topic: String) -> [Envelope] { run.events(topic).filter { $0.bodyValue["activity"]?.stringValue == "mixed" } }
        let refused = without.events("deviceactivity.start-monitoring.reply").last?.bodyValue
        XCTAssertEqual(refused?["error"]?["code"]?.stringValue, "invalid-date-components", "\(String(describing: refused))")
        XCTAssertEqual(with.events("deviceactivity.start-monitoring.reply").last?.bodyValue["ok"]?.boolValue, true, "taken without an error")
        XCTAssertTrue(mixed(with, "deviceactivity.interval-did-start").isEmpty, "never started")
        XCTAssertEqual(mixed(with, "deviceactivity.interval-did-end").map(\.time), [SpeedBumpDays.at("2026-11-25T10:00")], "its end still comes")
        XCTAssertTrue(with.events("device.quirk").contains { $0.bodyValue["quirk"]?.stringValue == "mixed-components-never-start" })
    }

    /// A threshold reached at 21:40 is delivered again when the daily interval starts after midnight.
    func testThresholdsAreDeliveredAgainAfterMidnight() throws {
        let day = SpeedBumpDays.setUp.replacingOccurrences(of: "07:0", with: "21:0") + """
          - {at: "21:10", open: Instagram}
          - {after: 31m, home: true}
        end: day 2 00:10

        """
        let (without, with) = try SpeedBumpDays.play(day, quirk: "thresholds-redelivered-after-midnight")
        XCTAssertEqual(without.events("deviceactivity.event-did-reach-threshold").count, 1, without.errors)
        let times = with.events("deviceactivity.event-did-reach-threshold").map(\.time)
        XCTAssertEqual(times.count, 2, with.errors)
        XCTAssertGreaterThanOrEqual(times.last ?? 0, SpeedBumpDays.at("2026-11-26T00:00"), "the second after midnight")
    }
}

/// Speed Bump days for the tests above: its set-up, and a day played with and without a release or a quirk.
enum SpeedBumpDays {
    /// The app opened, authorized and left: from 07:05 it monitors its all-day activity with a 30-minute threshold.
    static let setUp = """
    name: day
    start: 2026-11-25T07:00
    timeZone: Europe/Berlin
    steps:
      - {at: "07:05", open: Speed Bump}
      - {after: 10s, authorize: approved}
      - {after: 1m, home: true}

    """

    static func at(_ local: String) -> BusTime {
        BusTime((LocalDateTime(parsing: local)!.resolve(in: TimeZone(identifier: "Europe/Berlin")!).timeIntervalSince1970 * 1000).rounded())
    }

    /// The day on no release and on `release`.
    static func play(_ day: String, on release: String) throws -> (none: ScenarioRun, release: ScenarioRun) {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let runs = try ScenarioRun.runAll([(configuration, day, []), (configuration, day, ["--ios", release])])
        return (runs[0], runs[1])
    }

    /// The day without and with `quirk` switched on in the configuration.
    static func play(_ day: String, quirk: String) throws -> (without: ScenarioRun, with: ScenarioRun) {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let runs = try ScenarioRun.runAll([(configuration, day, []), (configuration + "\nquirks: {\(quirk): true}\n", day, [])])
        return (runs[0], runs[1])
    }
}
