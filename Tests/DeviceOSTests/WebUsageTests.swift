import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Web browsing as STWebpageController and WebKit handle it, through the real broker: per-tab state, private tabs
/// that record nothing, Screen Time's own web limits and Content & Privacy Restrictions, and web time counted
/// toward DeviceActivity events.
final class WebUsageTests: XCTestCase {
    /// 07:00 on Monday 23 November 2026 in Berlin (UTC+1), as bus time.
    let seven: BusTime = 1_795_413_600_000

    func at(_ minutesAfterSeven: Int) -> BusTime { seven + BusTime(minutesAfterSeven) * 60_000 }

    let limits = """
    name: web-limits
    timeZone: Europe/Berlin
    device:
      webLimits: {reddit.com: 20}
      restrictedDomains: [poki.com]
    """

    // Reddit's limit is 20 minutes: 10 public minutes in tab 1, then 15 private ones (not counted), then the
    // public tab again reaches the limit at 07:40 — not at 07:21, as it would if private time counted.
    let limitDay = """
    name: web-limit-day
    start: 2026-11-23T07:00
    steps:
      - at: "07:01"
        visit: https://www.reddit.com/r/swift
      - at: "07:11"
        visit: {url: "https://www.reddit.com/r/ios", tab: 2, private: true}
      - at: "07:26"
        visit: {url: "https://news.ycombinator.com", tab: 3}
      - at: "07:30"
        visit: https://old.reddit.com/
      - at: "07:45"
        visit: {url: "https://www.reddit.com/", tab: 2, private: true}
      - at: "07:46"
        visit: {url: "https://github.com/", tab: 3}
      - at: "07:50"
        visit: {url: "https://poki.com/games", tab: 4}
      - at: "07:52"
        visit: {url: "https://github.com/", tab: 3}
      - at: "day 2 08:00"
        visit: https://www.reddit.com/
      - at: "day 2 08:05"
        home: true
    """

    func testAWebLimitShowsTheLimitViewWhenPublicBrowsingReachesItForThatDomainOnly() throws {
        let run = try ScenarioRun.run(configuration: limits, scenario: limitDay)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let shown = run.events("shield.shown")
        XCTAssertEqual(shown.map(\.time), [at(40), at(45), at(50)], "the limit at 07:40 in tab 1, again in the private tab, the restriction at once")
        guard shown.count == 3 else { return }
        for event in shown { XCTAssertEqual(event.bodyValue["renderedBy"]?.stringValue, "system", "the OS draws its own views") }
        XCTAssertEqual(shown[0].bodyValue["configuration"]?["title"]?["text"]?.stringValue, "You've reached your limit")
        XCTAssertEqual(shown[0].bodyValue["configuration"]?["subtitle"]?["text"]?.stringValue, "You've reached your 20-minute daily limit on reddit.com.")
        XCTAssertEqual(shown[0].bodyValue["stores"], ["screen-time-limits"])
        XCTAssertEqual(shown[0].bodyValue["target"]?["webDomain"]?["domain"]?.stringValue, "reddit.com")
        XCTAssertEqual(shown[1].bodyValue["configuration"]?["title"]?["text"]?.stringValue, "You've reached your limit",
                       "a limit reached in public tabs also shows in a private one")
        XCTAssertEqual(shown[2].bodyValue["configuration"]?["title"]?["text"]?.stringValue, "You cannot browse this page")
        XCTAssertEqual(shown[2].bodyValue["stores"], ["content-restrictions"])

        let left = run.events("activity.web.left")
        let limitReached = left.first { $0.bodyValue["reason"]?.stringValue == "limit-reached" }
        XCTAssertEqual(limitReached?.time, at(40))
        XCTAssertEqual(limitReached?.bodyValue["tab"]?.intValue, 1)

        // Visited (usable) pages, in order: the limit covers reddit.com only, and only until midnight.
        let visited = run.events("activity.web.visited").map {
            "\($0.bodyValue["webDomain"]?["domain"]?.stringValue ?? "?")@\($0.bodyValue["tab"]?.intValue ?? 0)\($0.bodyValue["isPrivate"]?.boolValue == true ? "p" : "")"
        }
        XCTAssertEqual(visited, ["reddit.com@1", "reddit.com@2p", "news.ycombinator.com@3", "reddit.com@1", "github.com@3", "github.com@3", "reddit.com@1"])
        XCTAssertEqual(run.events("activity.web.visited").last?.time, at(24 * 60 + 60), "the next day starts a new limit")
    }

    func testWebTimeCountsTowardDeviceActivityEventsAndPrivateTabsDoNot() throws {
        let configuration = """
        name: web-activity
        timeZone: Europe/Berlin
        device:
          companionApp: Speed Bump
          companionPlugin: app
          selection: {domains: [instagram.com]}
        appGroups:
          - {name: group.test.deeplink, slices: {app: ["DeepLinkInbox.*"]}}
        plugins:
          - {name: app, executable: \(BuildProducts.path("fixture-deeplink-app")), role: app, arguments: ["--monitor-minutes", "10"]}
        """
        // 6 public minutes, 5 private ones (not counted), then the public tab reaches 10 minutes at 07:16.
        let scenario = """
        name: web-threshold
        start: 2026-11-23T07:00
        steps:
          - at: "07:01"
            visit: https://www.instagram.com/
          - at: "07:07"
            visit: {url: "https://www.instagram.com/reels", tab: 2, private: true}
          - at: "07:12"
            visit: https://www.instagram.com/explore
          - at: "07:30"
            home: true
        """
        let run = try ScenarioRun.run(configuration: configuration, scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertEqual(run.events("deviceactivity.start-monitoring.reply").first?.bodyValue["ok"], true, run.errors)
        let crossings = run.events("deviceactivity.event-did-reach-threshold")
        XCTAssertEqual(crossings.map(\.time), [at(16)], "10 public minutes of instagram.com; the private tab's 5 do not count")
        XCTAssertEqual(crossings.first?.bodyValue["event"]?.stringValue, "limit")
    }

    /// The web-limit day is the device's: after a `time-zone` change, the date in the new zone, from its midnight to its
    /// next one — here New York's 1 November 2026, a 25-hour day (the clocks fall back at 02:00), which runs until 06:00
    /// in Berlin. 15 minutes on reddit.com before the change count toward the New York day: 5 more reach the limit at
    /// 00:10 Berlin (in Berlin's day, counted from its midnight, at 00:25); at 05:50 Berlin the New York day still runs and
    /// reddit.com is refused at once; at 06:05 the New York day is over (a 24-hour day would have ended at 05:00).
    func testTheWebLimitDayFollowsTheZoneInForceAcrossAFallBackDay() throws {
        let berlin2340: BusTime = 1_793_572_800_000  // 23:40 on Sunday 1 November 2026 in Berlin (UTC+1)
        func after(_ minutes: Int) -> BusTime { berlin2340 + BusTime(minutes) * 60_000 }
        let scenario = """
        name: web-limit-zone
        start: 2026-11-01T23:30
        steps:
          - at: "23:40"
            visit: https://www.reddit.com/
          - at: "23:55"
            home: true
          - at: "23:58"
            timeZone: America/New_York
          - at: "day 2 00:05"
            visit: https://www.reddit.com/r/swift
          - at: "day 2 00:20"
            home: true
          - at: "day 2 05:50"
            visit: https://www.reddit.com/r/ios
          - at: "day 2 05:55"
            home: true
          - at: "day 2 06:05"
            visit: https://www.reddit.com/
          - at: "day 2 06:10"
            home: true
        """
        let run = try ScenarioRun.run(configuration: limits, scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertEqual(run.events("device.time-zone-changed").map(\.time), [after(18)])
        XCTAssertEqual(run.events("shield.shown").map(\.time), [after(30), after(6 * 60 + 10)],
                       "the limit at 00:10 (the New York day's 20 minutes), and at once at 05:50 (New York's 1 November still)")
        XCTAssertEqual(run.events("activity.web.visited").map(\.time), [after(0), after(25), after(6 * 60 + 25)],
                       "reddit.com is usable again at 06:05 Berlin, 00:05 of New York's 2 November")
    }
}

