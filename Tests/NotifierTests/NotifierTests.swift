import BusProtocol
import Foundation
import ReferenceKit
import ShieldBusSDK
import ShieldBusTestSupport
import SQLite
import XCTest

/// The notifier and the pending deep link through the real broker and real plugin processes: quiet hours,
/// one notification of a kind per window, and a route followed exactly once by the companion app — or not at all
/// once expired.
final class NotifierTests: XCTestCase {
    /// 06:00 on Monday 23 November 2026 in Berlin (UTC+1), as bus time.
    let six: BusTime = 1_795_410_000_000

    func at(_ hour: Int, _ minute: Int) -> BusTime { six + BusTime((hour - 6) * 60 + minute) * 60_000 }

    func configuration(withApp: Bool = false) -> String {
        let app = withApp ? "\n  - {name: app, executable: \(BuildProducts.path("fixture-deeplink-app")), role: app, arguments: [--group, group.test.notifier]}" : ""
        return """
        name: notifier
        timeZone: Europe/Berlin
        device:
          companionApp: Speed Bump\(withApp ? "\n  companionPlugin: app" : "")
          restrictedDomains: [poki.com]
        appGroups:
          - name: group.test.notifier
            slices: {notifier: ["PendingDeepLinkRoute", "notifier.*"]\(withApp ? ", app: [\"DeepLinkInbox.*\"]" : "")}
        plugins:
          - name: notifier
            executable: \(BuildProducts.path("notifier"))
            role: notifier
            options:
              appGroup: group.test.notifier
              rules:
                - {on: deviceactivity.event-did-reach-threshold, when: {event: mindful}, kind: circle-nudge, interruptionLevel: time-sensitive,
                   title: Your inner circle is ready, body: Want to make a call instead?, route: circle_contacts}
                - {on: deviceactivity.event-did-reach-threshold, when: {event: other}, kind: other, title: "Threshold {event} of {activity}", body: Time is up}
                - {on: shield.shown, kind: shield-note, interruptionLevel: passive, title: "{target} is shielded", body: Take a breath}
              routes: {circle_contacts: "tether://nudge?action=call"}
              routeLifetimeMinutes: 10
              quietHours: {start: "22:00", end: "07:00"}
              dedupMinutes: 30\(app)
        """
    }

    /// A DeviceActivity callback as the OS publishes it.
    func threshold(_ event: String, at time: String) -> String {
        "  - {at: \"\(time)\", publish: {topic: deviceactivity.event-did-reach-threshold, body: {activity: daily, event: \(event), scheduledFor: 0}}}"
    }

    func testQuietHoursAndOneNotificationOfAKindPerWindow() throws {
        let scenario = """
        name: notifier-day
        start: 2026-11-23T06:00
        steps:
        \(threshold("other", at: "06:30"))
        \(threshold("mindful", at: "06:31"))
        \(threshold("other", at: "07:10"))
        \(threshold("other", at: "07:20"))
        \(threshold("other", at: "07:40"))
        \(threshold("mindful", at: "07:45"))
          - {at: "07:50", visit: "https://poki.com/"}
        \(threshold("mindful", at: "22:30"))
          - {at: "22:31", visit: {url: "https://poki.com/games", tab: 2}}
        """
        let run = try ScenarioRun.run(configuration: configuration(), scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let posted = run.events("notification.posted").map { "\(clock($0.time)) \($0.bodyValue["kind"]?.stringValue ?? "?"): \($0.bodyValue["title"]?.stringValue ?? "?")" }
        XCTAssertEqual(posted, [
            "06:31 circle-nudge: Your inner circle is ready",  // time-sensitive breaks through the quiet hours
            "07:10 other: Threshold other of daily",
            "07:40 other: Threshold other of daily",           // 30 minutes after the last one: the window is over
            "07:45 circle-nudge: Your inner circle is ready",
            "07:50 shield-note: poki.com is shielded",
            "22:30 circle-nudge: Your inner circle is ready",
        ])
        let suppressed = run.events("notification.suppressed").map { "\(clock($0.time)) \($0.bodyValue["kind"]?.stringValue ?? "?"): \($0.bodyValue["reason"]?.stringValue ?? "?")" }
        XCTAssertEqual(suppressed, ["06:30 other: quiet-hours", "07:20 other: duplicate", "22:31 shield-note: quiet-hours"])
        XCTAssertEqual(run.events("notification.posted").first?.bodyValue["interruptionLevel"]?.stringValue, "time-sensitive")
    }

    func testAPendingRouteIsFollowedExactlyOnceAndAnExpiredOneNotAtAll() throws {
        let scenario = """
        name: deep-links
        start: 2026-11-23T07:00
        steps:
        \(threshold("mindful", at: "07:00"))
          - {at: "07:02", tapNotification: latest}
          - {at: "07:03", home: true}
          - {at: "07:04", open: Speed Bump}
          - {at: "07:05", home: true}
        \(threshold("mindful", at: "08:00"))
          - {at: "08:20", tapNotification: latest}
          - {at: "08:21", home: true}
          - {at: "08:22", open: Speed Bump}
        """
        let run = try ScenarioRun.run(configuration: configuration(withApp: true), scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let outcomes = run.events("app.deeplink.outcome").map { "\(clock($0.time)) \($0.bodyValue["outcome"]?.stringValue ?? "?")" }
        XCTAssertEqual(outcomes, ["07:02 opened", "07:04 none", "08:20 expired", "08:22 none"])
        let opened = run.events("app.url.opened")
        XCTAssertEqual(opened.map(\.time), [at(7, 2)], "opened once, and never the expired route")
        XCTAssertEqual(opened.first?.bodyValue["url"]?.stringValue, "tether://nudge?action=call")
        XCTAssertEqual(opened.first?.source, "broker", "the OS opened it for the app")
        // The route was in place before its notification was posted.
        let routeWritten = try XCTUnwrap(run.events("state.changed").first { $0.bodyValue["key"] == "PendingDeepLinkRoute" })
        let posted = try XCTUnwrap(run.events("notification.posted").first)
        XCTAssertLessThan(routeWritten.seq, posted.seq)
    }

    /// Issue 11: a notification posted and not yet tapped, and the deep-link route it leads to, outlive a broker
    /// SIGKILLed between the post and the tap (`--crash-at-step`), and the tap after the restart opens the route.
    func testAPendingNotificationAndItsRouteSurviveABrokerSIGKILL() throws {
        try crashBetweenPostAndTap()
    }

    /// The same, on a device state written before delivered notifications had rows of their own (the whole list
    /// under one key): the broker moves it over and the tap still finds the notification.
    func testDeliveredNotificationsSavedAsOneValueAreReadAfterAnUpgrade() throws {
        try crashBetweenPostAndTap { state in
            let device = try SQLiteConnection(path: state + "/device.sqlite", flags: [.readWrite])
            let rows = try device.prepare("SELECT json FROM list_item WHERE list = 'notifications.delivered' ORDER BY position")
            var items: [String] = []
            while try rows.step() { items.append(try XCTUnwrap(try rows.string(at: 0))) }
            XCTAssertEqual(items.count, 1, "the posted notification is stored as a row")
            try device.execute("DELETE FROM list_item")
            try device.prepare("INSERT INTO state (key, json) VALUES ('notifications.delivered', ?)", bindings: [.text("[" + items.joined(separator: ",") + "]")]).run()
        }
    }

    /// Posts a notification, SIGKILLs the broker before the person taps it, runs `beforeResume` on the state folder,
    /// resumes: the tap opens the route, once.
    func crashBetweenPostAndTap(beforeResume: (String) throws -> Void = { _ in }) throws {
        let scenario = """
        name: crash-between-post-and-tap
        start: 2026-11-23T07:00
        steps:
        \(threshold("mindful", at: "07:00"))
          - {at: "07:02", tapNotification: latest}
          - {at: "07:03", home: true}
        """
        let state = TemporaryDirectory(prefix: "sbnotifiercrash")
        let killed = try ScenarioRun.run(configuration: configuration(withApp: true), scenario: scenario,
                                         arguments: ["--crash-at-step", "2"], stateDirectory: state.path)
        XCTAssertEqual(killed.exitStatus, 128 + SIGKILL, "the broker died by SIGKILL before the tap: \(killed.errors)")
        let posted = try XCTUnwrap(killed.events("notification.posted").first, killed.errors)
        XCTAssertTrue(killed.events("notification.tapped").isEmpty && killed.events("app.url.opened").isEmpty, "nothing was tapped yet")
        let defaults = try SharedDefaults(suiteName: "group.test.notifier", container: AppGroupContainer(root: URL(fileURLWithPath: state.file("appgroups"))))
        let pending = try XCTUnwrap(try defaults.value(PendingDeepLinkRoute.self, forKey: PendingDeepLinkRoute.key), "the route is pending in the store")
        XCTAssertEqual(pending.url, "tether://nudge?action=call")

        try beforeResume(state.path)
        let resumed = try ScenarioRun.run(configuration: configuration(withApp: true), scenario: scenario, arguments: ["--resume"], stateDirectory: state.path)
        XCTAssertEqual(resumed.exitStatus, 0, resumed.errors)
        XCTAssertFalse(resumed.events("bus.error").contains { $0.bodyValue["code"]?.stringValue == "no-notification" },
                       "the notification posted before the kill is still delivered: \(resumed.events("bus.error").map(\.bodyValue))")
        let tapped = try XCTUnwrap(resumed.events("notification.tapped").first, "the tap found the notification")
        XCTAssertEqual(tapped.bodyValue["id"]?.stringValue, posted.bodyValue["id"]?.stringValue)
        XCTAssertEqual(tapped.bodyValue["kind"]?.stringValue, "circle-nudge")
        XCTAssertEqual(resumed.events("app.deeplink.outcome").map { $0.bodyValue["outcome"]?.stringValue }, ["opened"])
        let opened = resumed.events("app.url.opened")
        XCTAssertEqual(opened.map { $0.bodyValue["url"]?.stringValue }, ["tether://nudge?action=call"], "the route opens the right screen, once")
        XCTAssertEqual(opened.first?.time, at(7, 2))
        XCTAssertTrue(resumed.events("notification.posted").isEmpty, "not posted a second time")
    }

    /// `HH:MM` of a bus time in Berlin (UTC+1 in November).
    func clock(_ time: BusTime) -> String {
        let minutes = Int((time - six) / 60_000) + 6 * 60
        return String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }
}
