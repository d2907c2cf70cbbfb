import BusProtocol
import Foundation
import ShieldBusTestSupport
import UsageReports
import XCTest

/// Pickups and shield encounters around the OS's own web views, through the real broker and report builder: an app
/// opened from the restricted-site view or the web-limit view is a switch, not a pickup; the view redrawn after an
/// iOS update (or a ManagedSettings change) is the same encounter.
final class ShieldViewCountingTests: XCTestCase {
    static let configuration = """
        name: shield-views
        timeZone: Europe/Berlin
        device:
          webLimits: {reddit.com: 1}
          restrictedDomains: [poki.com]
        appGroups:
          - {name: group.test.reports, slices: {reports: ["reports.*"]}}
        plugins:
          - {name: reports, executable: \(BuildProducts.path("report-builder")), role: report, options: {appGroup: group.test.reports}}
        """

    static let scenario = """
        name: shield-views
        start: 2026-11-23T07:00
        steps:
          - {at: "08:00", open: Instagram}          # from the home screen: a pickup
          - {at: "08:10", home: true}
          - {at: "09:00", visit: "https://poki.com/"} # the restricted-site view, from the home screen
          - {at: "09:01", open: Duolingo}           # from that view: a switch
          - {at: "09:10", home: true}
          - {at: "10:00", visit: "https://www.reddit.com/"}   # the limit is reached at 10:01 while browsing
          - {at: "10:02", open: TikTok}             # from the web-limit view: a switch
          - {at: "10:10", home: true}
          - {at: "11:00", visit: "https://www.reddit.com/r/swift"}   # the web-limit view at once, from the home screen
          - {at: "11:01", open: Maps}               # a switch again
          - {at: "11:10", home: true}
          - {at: "12:00", visit: "https://poki.com/games"}  # the restricted-site view again: a second poki encounter
          - {at: "12:01", osUpdate: true}           # the OS redraws the view: the same encounter
          - {at: "12:02", home: true}
          - {at: "13:00", publish: {topic: report.daily.request, body: {date: "2026-11-23"}}}
        """

    func testViewsOfTheOSAreNotTheHomeScreenAndARedrawIsTheSameEncounter() throws {
        let run = try ScenarioRun.run(configuration: Self.configuration, scenario: Self.scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        // The situations happened as described: four apps opened, the views drawn by the OS, the poki view redrawn.
        XCTAssertEqual(run.events("activity.app.opened").compactMap { $0.bodyValue["application"]?["localizedDisplayName"]?.stringValue },
                       ["Instagram", "Duolingo", "TikTok", "Maps"])
        let shown = run.events("shield.shown").map { ($0.bodyValue["target"]?["webDomain"]?["domain"]?.stringValue ?? "?", $0.time) }
        XCTAssertEqual(shown.map(\.0), ["poki.com", "reddit.com", "reddit.com", "poki.com", "poki.com"])
        XCTAssertTrue(run.events("shield.dismissed").contains { $0.bodyValue["reason"] == "os-update" }, "the iOS update redrew the view")

        let report = try ReportBuilderTests.value(DailyReport.self, of: run.events("report.daily.reply").first)
        XCTAssertEqual(report.pickupsByApp, [CountEntry(name: "Instagram", count: 1)], "only the app opened from the home screen")
        XCTAssertEqual(report.shieldEncountersByTarget, [CountEntry(name: "poki.com", count: 2), CountEntry(name: "reddit.com", count: 2)])
        XCTAssertEqual(report.webDomains, [UsageEntry(name: "reddit.com", seconds: 60)])
    }

    /// Speed Bump's shield over Instagram: met while using it (the threshold crossed) it only interrupts; met when
    /// Instagram is opened from the home screen, the app that comes out from under it (a press lets it through) is
    /// the pickup the person made.
    func testAnAppLetThroughItsShieldFromTheHomeScreenIsAPickup() throws {
        var configuration = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Config/speed-bump.yml"), encoding: .utf8)
        configuration = configuration.replacingOccurrences(of: "scenario: scenarios/speed-bump-day.yml\n", with: "")
        for name in ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "report-builder", "notifier"] {
            configuration = configuration.replacingOccurrences(of: "executable: \(name)", with: "executable: \(BuildProducts.path(name))")
        }
        let scenario = """
            name: shielded-pickup
            start: 2026-11-25T07:00
            steps:
              - {at: "07:05", open: Speed Bump}
              - {after: 10s, authorize: approved}
              - {after: 1m, home: true}
              - {at: "08:00", open: Instagram}    # a pickup; the 30-minute threshold brings the shield at 08:30
              - {at: "08:40", home: true}
              - {at: "09:00", open: Instagram}    # the shield at once, from the home screen
              - {after: 1m, press: primary}       # Speed Bump lets Instagram through: the pickup
              - {after: 5m, home: true}
              - {at: "09:30", publish: {topic: report.daily.request, body: {date: "2026-11-25"}}}
            """
        let run = try ScenarioRun.run(configuration: configuration, scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let lifted = run.events("activity.app.opened").filter { $0.bodyValue["reason"] == "shield-lifted" }
        XCTAssertEqual(lifted.map(\.time), [busTime("2026-11-25T08:01:00Z")], "Instagram came out from under its shield at 09:01")
        let report = try ReportBuilderTests.value(DailyReport.self, of: run.events("report.daily.reply").first)
        XCTAssertEqual(report.pickupsByApp, [CountEntry(name: "Instagram", count: 2), CountEntry(name: "Speed Bump", count: 1)])
        XCTAssertEqual(report.shieldEncountersByTarget, [CountEntry(name: "Instagram", count: 2)], "going home in between makes it a new one")
    }

    func busTime(_ text: String) -> BusTime { BusTime(ReportBuilderTests.utc(text).timeIntervalSince1970 * 1000) }
}
