import BusProtocol
import Configuration
import Foundation
import ShieldBusTestSupport
import XCTest

/// The person revokes FamilyControls authorization in Settings and allows it again later: the OS cleared the app's
/// shields and stopped its schedules at the revocation, so the companion app must set everything up anew at the
/// approval. The reference app did so only on its first approval, and every lock stayed down for the rest of the day;
/// and the speed bump's threshold, registered again, counted from the approval, forgiving the day's use before the
/// revocation (explore: speed-bump 3, 6, 19). Generated days for each reference product, under both profiles, through the real broker and plugins.
final class AuthorizationRevokedTests: XCTestCase {
    static let selectedApps = ["habit-lock": ["Instagram", "TikTok"], "focus-window": ["Instagram", "YouTube", "Reddit"],
                               "speed-bump": ["Instagram", "TikTok", "Snapchat"]]

    /// A day: the product's apps used for a while before the revocation on some days (a speed bump's threshold may
    /// be reached then), the revocation between 07:00 and 15:00, the approval 1 minute to 3 hours later, then the
    /// apps used several times (the checker judges each stretch against the product's lock).
    static func day(product: String, index: Int, using generator: inout SeededRandom) -> String {
        let apps = selectedApps[product]!
        var steps: [String] = []
        func use(at minute: Int, forMinutes minutes: Int) {
            let app = apps[Int.random(in: 0..<apps.count, using: &generator)]
            steps += ["  - {at: \"\(clock(minute))\", open: \(app)}", "  - {after: \(minutes)m, home: true}"]
        }
        var at = 6 * 60 + 45
        for _ in 0..<Int.random(in: 0...2, using: &generator) {
            let minutes = Int.random(in: 10...40, using: &generator)
            use(at: at, forMinutes: minutes)
            at += minutes + Int.random(in: 1...20, using: &generator)
        }
        let revoked = max(at, Int.random(in: 7 * 60...15 * 60, using: &generator))
        let approved = revoked + Int.random(in: 1...180, using: &generator)
        steps += ["  - {at: \"\(clock(revoked))\", authorize: revoked}", "  - {at: \"\(clock(approved))\", authorize: approved}"]
        at = approved + Int.random(in: 1...20, using: &generator)
        for _ in 0..<3 where at < 22 * 60 {
            let minutes = Int.random(in: 2...45, using: &generator)
            use(at: at, forMinutes: minutes)
            at += minutes + Int.random(in: 5...90, using: &generator)
        }
        return scenario(name: "revoked-\(product)-\(index)", steps: steps)
    }

    /// The day held the lock invariant (the checker's account otherwise) and the bus reported no error.
    static func assertHeld(_ run: ScenarioRun, _ name: String, _ scenario: String, file: StaticString = #filePath, line: UInt = #line) {
        let account = run.errors.split(separator: "\n").filter { $0.contains("lock invariant") || $0.hasPrefix("    - ") }.joined(separator: "\n")
        XCTAssertEqual(run.exitStatus, 0, "\(name): \(account)\n\(scenario)", file: file, line: line)
        XCTAssertEqual(run.events("bus.error").compactMap { $0.bodyValue["code"]?.stringValue }, [], name, file: file, line: line)
    }

    static func clock(_ minutes: Int) -> String { String(format: "%02d:%02d", minutes / 60, minutes % 60) }

    static func scenario(name: String, steps: [String]) -> String {
        """
        name: \(name)
        start: 2026-11-23T06:30
        timeZone: Europe/Berlin
        steps:
        \(steps.joined(separator: "\n"))
        end: 2026-11-23T23:30

        """
    }

    func testAnApprovalAfterARevocationSetsTheProductUpAgain() throws {
        var generator = SeededRandom(seed: 20261124)
        var days: [(configuration: String, scenario: String, arguments: [String])] = []
        var names: [String] = []
        for product in ["habit-lock", "focus-window", "speed-bump"] {
            let configuration = try ScenarioRun.shippedConfiguration(product)
            for index in 0..<6 {
                let profile = index % 2 == 0 ? "faithful" : "ios-realistic"
                days.append((configuration, Self.day(product: product, index: index, using: &generator), ["--profile", profile]))
                names.append("\(product) day \(index) (\(profile))")
            }
        }
        let runs = try ScenarioRun.runAll(days, timeoutSeconds: 120)
        for (index, run) in runs.enumerated() {
            let name = names[index]
            Self.assertHeld(run, name, days[index].scenario)
            let statuses = run.events("familycontrols.authorization.changed").compactMap { $0.bodyValue["status"]?.stringValue }
            XCTAssertEqual(Array(statuses.suffix(2)), ["denied", "approved"], name)
            // Set up again: the product's schedules are started anew after the approval.
            let approval = try XCTUnwrap(run.events("familycontrols.authorization.changed").last, name)
            XCTAssertTrue(run.journal.contains { $0.seq > approval.seq && $0.topic == "deviceactivity.start-monitoring.request" },
                          "\(name): no schedule was started again after the approval")
        }
    }
}

/// The speed bump's 30 minutes a day across a revocation: the threshold registered again at the approval counts the
/// day's use before it (`includesPastActivity`), so a threshold reached before the revocation, or while the app was not
/// authorized, raises the speed bump again at the approval (the OS calls `eventDidReachThreshold` at once), and use
/// before the revocation counts towards one reached after the approval.
extension AuthorizationRevokedTests {
    /// How the day's use falls around the revocation.
    enum SpeedBumpUse: CaseIterable {
        /// 31–50 minutes before the revocation: the speed bump was up when the OS cleared it.
        case reachedBefore
        /// A picked app open through the revocation, the threshold reached while the app is not authorized.
        case reachedWhileRevoked
        /// 10–25 minutes before the revocation, the rest after the approval.
        case reachedAfter
    }

    static func speedBumpDay(_ use: SpeedBumpUse, index: Int, using generator: inout SeededRandom) -> (scenario: String, approved: Int) {
        let apps = selectedApps["speed-bump"]!
        func app() -> String { apps[Int.random(in: 0..<apps.count, using: &generator)] }
        var steps: [String] = []
        var at = 7 * 60 + Int.random(in: 0...120, using: &generator)
        let before: Int
        switch use {
        case .reachedBefore: before = Int.random(in: 31...50, using: &generator)
        case .reachedWhileRevoked: before = Int.random(in: 5...25, using: &generator)
        case .reachedAfter: before = Int.random(in: 10...25, using: &generator)
        }
        // In one or two stretches.
        let first = Int.random(in: 0...1, using: &generator) == 0 ? before : before / 2
        steps += ["  - {at: \"\(clock(at))\", open: \(app())}", "  - {after: \(first)m, home: true}"]
        at += first
        if first < before {
            at += Int.random(in: 1...30, using: &generator)
            steps += ["  - {at: \"\(clock(at))\", open: \(app())}", "  - {after: \(before - first)m, home: true}"]
            at += before - first
        }
        let revoked: Int
        if use == .reachedWhileRevoked {
            // Back in a picked app just before the revocation, kept open until the day's use is past the threshold.
            revoked = at + Int.random(in: 2...20, using: &generator)
            steps.removeLast()  // the app stays open through the revocation
            steps += ["  - {at: \"\(clock(revoked))\", authorize: revoked}",
                      "  - {after: \(30 - before + Int.random(in: 2...15, using: &generator))m, home: true}"]
        } else {
            revoked = at + Int.random(in: 5...90, using: &generator)
            steps += ["  - {at: \"\(clock(revoked))\", authorize: revoked}"]
        }
        let approved = revoked + 30 + Int.random(in: 15...120, using: &generator)
        steps += ["  - {at: \"\(clock(approved))\", authorize: approved}"]
        // Then a picked app within minutes of the approval: locked at once unless the day's count is still short.
        let after = use == .reachedAfter ? 30 - before + Int.random(in: 5...20, using: &generator) : Int.random(in: 3...20, using: &generator)
        at = approved + Int.random(in: 0...5, using: &generator)
        steps += ["  - {at: \"\(clock(at))\", open: \(app())}", "  - {after: \(after)m, home: true}"]
        return (scenario(name: "revoked-speed-bump-\(use)-\(index)", steps: steps), approved)
    }

    func testTheSpeedBumpCountsTheDaysUseBeforeARevocation() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        var generator = SeededRandom(seed: 20261125)
        var days: [(configuration: String, scenario: String, arguments: [String])] = []
        var described: [(name: String, use: SpeedBumpUse)] = []
        for index in 0..<6 {
            let use = SpeedBumpUse.allCases[index % SpeedBumpUse.allCases.count]
            let profile = index / SpeedBumpUse.allCases.count == 0 ? "faithful" : "ios-realistic"
            days.append((configuration, Self.speedBumpDay(use, index: index, using: &generator).scenario, ["--profile", profile]))
            described.append(("speed-bump \(use) \(index) (\(profile))", use))
        }
        let runs = try ScenarioRun.runAll(days, timeoutSeconds: 120)
        for (index, run) in runs.enumerated() {
            let (name, use) = described[index]
            Self.assertHeld(run, name, days[index].scenario)
            let approval = try XCTUnwrap(run.events("familycontrols.authorization.changed").last, name)
            XCTAssertEqual(approval.bodyValue["status"]?.stringValue, "approved", name)
            let thresholds = run.events("deviceactivity.event-did-reach-threshold").filter {
                $0.seq > approval.seq && $0.bodyValue["activity"]?.stringValue == "speed-bump.daily"
            }
            guard let first = thresholds.first else {
                XCTFail("\(name): no threshold after the approval\n\(days[index].scenario)")
                continue
            }
            switch use {
            case .reachedBefore, .reachedWhileRevoked:
                // The OS counted the day's use at the registration: the callback comes at once (its whole minute at most).
                XCTAssertLessThanOrEqual(first.time - approval.time, 60_000, "\(name): the threshold came \(first.time - approval.time) ms after the approval")
            case .reachedAfter:
                XCTAssertGreaterThan(first.time - approval.time, 60_000, "\(name): the threshold came at the approval, before the day's use reached it")
            }
        }
    }
}

/// A dismiss before the revocation: the count started again at the cooldown's end, and the speed bump held to the
/// device's midnight for every picked app but the dismissed one. The revocation cleared its shields and stopped the
/// cooldown's end with every other schedule; the approval must put both back, and count the day's use only from the
/// cooldown's end.
extension AuthorizationRevokedTests {
    static let dismissedThenRevoked = """
    start: 2026-11-23T06:30
    timeZone: Europe/Berlin
    end: 2026-11-23T11:30
    steps:
      - {at: "07:00", open: Instagram}
      - {after: 32m, press: primary}
      - {after: 3m, home: true}
      - {at: "08:00", open: TikTok}
      - {after: 5m, home: true}
      - {at: "08:30", authorize: revoked}
      - {at: "09:30", authorize: approved}

    """

    func testADismissBeforeARevocationStandsAfterTheApproval() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let days: [(name: String, scenario: String)] = [
            // Explore speed-bump 86 as shrunk (26 steps to 8): X's speed bump dismissed, the clock set to the next date
            // (whose count runs from the cooldown's end), a revocation approved 10 s later. The threshold registered with
            // the day's use raised the speed bump over Snapchat at once: shielded though allowed.
            ("speed-bump 86", """
            name: speed-bump-seed86
            start: 2026-11-24T08:14
            timeZone: Asia/Tokyo
            seed: 86
            end: after 27m2s
            steps:
              - {after: 1h4m26s, open: X}
              - {after: 10h26m14s, press: primary}
              - {after: 14m5s, visit: {url: "https://www.instagram.com/", tab: 2, private: false}}
              - {after: 11m18s, restart: true}
              - {after: 21m32s, setClock: "+11h"}
              - {after: 12m39s, authorize: revoked}
              - {after: 10s, authorize: approved}
              - {after: 6s, open: Snapchat}

            """),
            // The dismissed app after the approval: allowed until the count from the cooldown's end reaches 30 minutes.
            ("the dismissed app", "name: dismissed-then-revoked-instagram\n" + Self.dismissedThenRevoked
                + "  - {at: \"09:35\", open: Instagram}\n  - {after: 10m, home: true}\n"),
            // Another picked app after the approval: its speed bump holds to midnight (it was usable, the store empty).
            ("another app", "name: dismissed-then-revoked-tiktok\n" + Self.dismissedThenRevoked
                + "  - {at: \"09:35\", open: TikTok}\n  - {after: 10m, home: true}\n"),
            // Approved during the cooldown: the count starts again at its end (the dismissed app was usable to 08:30).
            ("approved during the cooldown", """
            name: approved-during-the-cooldown
            start: 2026-11-23T06:30
            timeZone: Europe/Berlin
            end: 2026-11-23T11:30
            steps:
              - {at: "07:00", open: Instagram}
              - {after: 32m, press: primary}
              - {after: 2m, home: true}
              - {at: "07:35", authorize: revoked}
              - {at: "07:40", authorize: approved}
              - {at: "07:50", open: Instagram}
              - {after: 40m, home: true}
              - {at: "09:00", open: TikTok}
              - {after: 5m, home: true}

            """),
        ]
        let profiles = ["faithful", "ios-realistic"]
        let runs = try ScenarioRun.runAll(profiles.flatMap { profile in days.map { (configuration, $0.scenario, ["--profile", profile]) } },
                                          timeoutSeconds: 120)
        for (index, run) in runs.enumerated() {
            let day = days[index % days.count]
            let name = "\(day.name) (\(profiles[index / days.count]))"
            Self.assertHeld(run, name, day.scenario)
            XCTAssertEqual(run.events("familycontrols.authorization.changed").last?.bodyValue["status"]?.stringValue, "approved", name)
        }
    }
}

extension AuthorizationRevokedTests {
    /// The app force-quit while revoked: the process that hears the approval was launched after the revocation, so it
    /// learns that the product had been set up from the selection saved in the App Group, not from its own memory (the
    /// speed bump raised at 07:35 stayed down after the approval: TikTok usable).
    func testAnAppLaunchedWhileRevokedSetsUpAgainWithTheDaysUse() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        let scenario = Self.scenario(name: "speed-bump-force-quit-while-revoked", steps: [
            "  - {at: \"07:00\", open: Instagram}", "  - {after: 35m, home: true}",
            "  - {at: \"08:00\", authorize: revoked}", "  - {at: \"08:05\", forceQuit: Speed Bump}",
            "  - {at: \"08:30\", authorize: approved}", "  - {at: \"08:40\", open: TikTok}", "  - {after: 10m, home: true}",
        ])
        let profiles = ["faithful", "ios-realistic"]
        let runs = try ScenarioRun.runAll(profiles.map { (configuration, scenario, ["--profile", $0]) }, timeoutSeconds: 120)
        for (profile, run) in zip(profiles, runs) {
            Self.assertHeld(run, profile, scenario)
            let approval = try XCTUnwrap(run.events("familycontrols.authorization.changed").last, profile)
            XCTAssertTrue(run.events("deviceactivity.event-did-reach-threshold").contains { $0.seq > approval.seq && $0.time - approval.time <= 60_000 },
                          "\(profile): no threshold at the approval")
        }
    }
}

/// Use of the dismissed app after its cooldown's end, then a revocation and an approval: the app's registration at the
/// approval counts from there (Apple's `includesPastActivity` would count the day's use before the dismiss too), and a
/// monitor has no readout of the use since the cooldown's end — so that use is forgiven, and the checker counts from the
/// approval (the lead's ruling, docs/explore.md "A revocation after a cooldown"). Generated days, both profiles, the
/// real broker and plugins; each day's use before and after the approval together passes the threshold on most days,
/// so a checker counting from the cooldown's end finds a late lock.
extension AuthorizationRevokedTests {
    /// A day: Instagram to the speed bump and dismissed, used again after the cooldown for less than the threshold,
    /// the revocation, the approval, then Instagram again (`after` minutes: past the threshold from the approval or not).
    static func usedAfterTheCooldownDay(index: Int, using generator: inout SeededRandom) -> (scenario: String, after: Int) {
        var at = 7 * 60 + Int.random(in: 0...60, using: &generator)
        let dismissed = at + Int.random(in: 31...36, using: &generator)
        var steps = ["  - {at: \"\(clock(at))\", open: Instagram}", "  - {at: \"\(clock(dismissed))\", press: primary}",
                     "  - {after: \(Int.random(in: 1...5, using: &generator))m, home: true}"]
        at = dismissed + 15 + Int.random(in: 1...20, using: &generator)
        let before = Int.random(in: 5...25, using: &generator)
        steps += ["  - {at: \"\(clock(at))\", open: Instagram}", "  - {after: \(before)m, home: true}"]
        let revoked = at + before + Int.random(in: 5...60, using: &generator)
        let approved = revoked + Int.random(in: 30...120, using: &generator)
        let after = Int.random(in: 5...45, using: &generator)
        steps += ["  - {at: \"\(clock(revoked))\", authorize: revoked}", "  - {at: \"\(clock(approved))\", authorize: approved}",
                  "  - {at: \"\(clock(approved + 2))\", open: Instagram}", "  - {after: \(after)m, home: true}"]
        return (scenario(name: "used-after-the-cooldown-\(index)", steps: steps), after)
    }

    func testAfterACooldownTheCountStartsAgainAtTheApproval() throws {
        let configuration = try ScenarioRun.shippedConfiguration("speed-bump")
        var generator = SeededRandom(seed: 20261126)
        let profiles = ["faithful", "ios-realistic"]
        let days = (0..<8).map { Self.usedAfterTheCooldownDay(index: $0, using: &generator) }
        let runs = try ScenarioRun.runAll(days.enumerated().map { (configuration, $0.element.scenario, ["--profile", profiles[$0.offset % 2]]) },
                                          timeoutSeconds: 120)
        for (index, run) in runs.enumerated() {
            let day = days[index]
            let name = "day \(index) (\(profiles[index % 2]))"
            Self.assertHeld(run, name, day.scenario)
            let approval = try XCTUnwrap(run.events("familycontrols.authorization.changed").last, name)
            let thresholds = run.events("deviceactivity.event-did-reach-threshold").filter {
                $0.seq > approval.seq && $0.bodyValue["activity"]?.stringValue == "speed-bump.daily"
            }
            // Instagram opens two minutes after the approval; the OS's count starts at the approval (no use in between).
            if day.after >= 31 {
                let first = try XCTUnwrap(thresholds.first, "\(name): the threshold never came after the approval\n\(day.scenario)")
                XCTAssertEqual(Double(first.time - approval.time) / 60_000, 32, accuracy: 1, "\(name): the count did not start at the approval\n\(day.scenario)")
            } else if day.after < 30 {
                XCTAssertEqual(thresholds.count, 0, "\(name): the threshold came before 30 minutes of use since the approval\n\(day.scenario)")
            }
        }
    }
}
