import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// The device OS through the real broker and real plugin processes (the fixture plugins).
final class EnforcementTests: XCTestCase {
    func configuration(shieldArguments: [String] = [], appArguments: [String] = [], replyTimeoutMs: Int = 1000) -> String {
        """
        name: enforcement
        timeZone: Europe/Berlin
        bus: {ackTimeoutMs: 1000}
        device:
          companionApp: Habit Lock
          companionPlugin: app
          authorization: approve
          replyTimeoutMs: \(replyTimeoutMs)
          selection: {apps: [Instagram, TikTok], domains: [instagram.com]}
        plugins:
          - {name: shield, executable: \(BuildProducts.path("fixture-shield")), role: shield, arguments: [\(shieldArguments.joined(separator: ", "))]}
          - {name: app, executable: \(BuildProducts.path("fixture-app")), role: app, arguments: [\(appArguments.joined(separator: ", "))]}
        """
    }

    let day = """
    name: shielded-day
    start: 2026-11-23T07:00
    steps:
      - at: "07:01"
        open: Instagram
      - at: "07:02"
        open: Duolingo
      - at: "07:03"
        visit: https://www.instagram.com/explore
      - at: "07:04"
        visit: {url: "https://news.ycombinator.com", tab: 2}
      - at: "07:05"
        open: TikTok
      - at: "07:06"
        press: primary
    """

    func testAnAppOpenOnAShieldedTokenShowsTheRenderersShield() throws {
        let run = try ScenarioRun.run(configuration: configuration(), scenario: day)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let shields = run.events("shield.shown").map(\.bodyValue)
        XCTAssertEqual(shields.count, 3, "Instagram, instagram.com and TikTok are shielded: \(shields.map(\.jsonText))")
        guard shields.count == 3 else { return }
        XCTAssertEqual(shields.first?["renderedBy"]?.stringValue, "shield")
        XCTAssertEqual(shields.first?["entryPoint"]?.stringValue, "application")
        XCTAssertEqual(shields.first?["configuration"]?["title"]?["text"]?.stringValue, "Fixture shield: Instagram")
        XCTAssertEqual(shields[1]["entryPoint"]?.stringValue, "webDomain")
        XCTAssertEqual(shields[1]["configuration"]?["title"]?["text"]?.stringValue, "Fixture web shield: instagram.com")
        let opened = run.events("activity.app.opened").compactMap { $0.bodyValue["application"]?["localizedDisplayName"]?.stringValue }
        XCTAssertEqual(opened, ["Duolingo"], "shielded apps never open")
        XCTAssertEqual(run.events("activity.web.visited").compactMap { $0.bodyValue["webDomain"]?["domain"]?.stringValue }, ["news.ycombinator.com"])
        // Plugins never see bundle identifiers.
        XCTAssertFalse(run.journal.contains { String(decoding: $0.body, as: UTF8.self).contains("com.burbn.instagram") })
        // Without an action delegate the primary button closes the app, as on iOS.
        XCTAssertEqual(run.events("shield.action.handled").first?.bodyValue["response"]?.stringValue, "close")
        XCTAssertEqual(run.events("activity.home").last?.bodyValue["reason"]?.stringValue, "shield-close")
    }

    func testAHungRendererYieldsTheDefaultShieldWithinTheDeadline() throws {
        let run = try ScenarioRun.run(configuration: configuration(shieldArguments: ["--hang"], replyTimeoutMs: 300),
                                      scenario: "name: hang\nstart: 2026-11-23T07:00\nsteps:\n  - at: \"07:01\"\n    open: Instagram\n")
        // The device shows the default shield; the day itself is degraded (a plugin that never answered): it fails.
        XCTAssertEqual(run.exitStatus, 3, run.errors)
        XCTAssertTrue(run.errors.contains("run health        DEGRADED"), run.errors)
        let shown = try XCTUnwrap(run.events("shield.shown").first)
        XCTAssertEqual(shown.bodyValue["renderedBy"]?.stringValue, "system")
        XCTAssertTrue(shown.bodyValue["fallbackReason"]?.stringValue?.hasPrefix("renderer-timeout: no reply within 300 ms") == true, shown.bodyValue.jsonText)
        XCTAssertEqual(shown.bodyValue["configuration"]?["title"]?["text"]?.stringValue, "Restricted", "the system's default shield")
        let open = try XCTUnwrap(run.events("scenario.step").first)
        XCTAssertEqual(shown.time, open.time, "virtual time does not move while the OS waits for the renderer")
    }

    /// In virtual time the OS's deadline for the renderer's answer is judged by its progress: a renderer still at work
    /// past it (its CPU time rising, as on a machine busy with other work) is late, not too slow, and its shield is
    /// drawn; the default shield would be the machine's load speaking (a hung one is the test above).
    func testARendererStillAtWorkPastTheDeadlineDrawsItsShield() throws {
        let run = try ScenarioRun.run(configuration: configuration(shieldArguments: ["--work-ms", "1500"], replyTimeoutMs: 300),
                                      scenario: "name: slow\nstart: 2026-11-23T07:00\nsteps:\n  - at: \"07:01\"\n    open: Instagram\n", timeoutSeconds: 120)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let shown = try XCTUnwrap(run.events("shield.shown").first)
        XCTAssertEqual(shown.bodyValue["renderedBy"]?.stringValue, "shield", shown.bodyValue.jsonText)
        XCTAssertEqual(shown.bodyValue["configuration"]?["title"]?["text"]?.stringValue, "Fixture shield: Instagram")
    }

    func testTheSameVirtualScenarioTwiceGivesIdenticalJournals() throws {
        let first = try ScenarioRun.run(configuration: configuration(), scenario: day)
        let second = try ScenarioRun.run(configuration: configuration(), scenario: day)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        XCTAssertGreaterThan(first.journal.count, 20)
        XCTAssertEqual(first.journalBytes, second.journalBytes, "the journals differ")
    }

    func testManagedSettingsPersistAcrossABrokerRestart() throws {
        let state = TemporaryDirectory(prefix: "sbstate")
        let first = try ScenarioRun.run(configuration: configuration(), scenario: "name: a\nstart: 2026-11-23T07:00\nsteps: []\n",
                                        stateDirectory: state.path)
        XCTAssertEqual(first.exitStatus, 0, first.errors)
        XCTAssertEqual(first.events("managedsettings.changed").count, 1)
        // The second device boots from the first one's state: the app does not block again, the shield is still there.
        let second = try ScenarioRun.run(configuration: configuration(appArguments: ["--no-block"]),
                                         scenario: "name: b\nstart: 2026-11-23T08:00\nsteps:\n  - at: \"08:01\"\n    open: Instagram\n",
                                         arguments: ["--keep-state"], stateDirectory: state.path)
        XCTAssertEqual(second.exitStatus, 0, second.errors)
        XCTAssertEqual(second.events("managedsettings.changed").count, 0)
        XCTAssertEqual(second.events("shield.shown").count, 1, "the store survived the restart")
    }
}

/// FamilyControls through the real broker: without approval nothing can be shielded; revoking removes
/// the app's shields and schedules.
final class AuthorizationTests: XCTestCase {
    func configuration(authorization: String) -> String {
        """
        name: authorization
        timeZone: Europe/Berlin
        device:
          companionApp: Habit Lock
          companionPlugin: app
          authorization: \(authorization)
          selection: {apps: [Instagram], categories: [games]}
        plugins:
          - {name: app, executable: \(BuildProducts.path("fixture-app")), role: app}
        """
    }

    func testWithoutApprovalWritingShieldsFailsClearly() throws {
        let run = try ScenarioRun.run(configuration: configuration(authorization: "deny"),
                                      scenario: "name: denied\nstart: 2026-11-23T07:00\nsteps:\n  - at: \"07:01\"\n    open: Instagram\n")
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertEqual(run.events("managedsettings.changed").count, 0)
        let reply = try XCTUnwrap(run.events("managedsettings.write.reply").first?.bodyValue)
        XCTAssertEqual(reply["ok"]?.boolValue, false)
        XCTAssertEqual(reply["error"]?["code"]?.stringValue, "unauthorized")
        XCTAssertTrue(reply["error"]?["message"]?.stringValue?.contains("request and get authorization") == true)
        XCTAssertEqual(run.events("activity.app.opened").count, 1, "nothing is shielded")
    }

    func testRevokingRemovesTheShields() throws {
        let run = try ScenarioRun.run(configuration: configuration(authorization: "approve"), scenario: """
        name: revoked
        start: 2026-11-23T07:00
        steps:
          - at: "07:01"
            open: Instagram
          - at: "07:02"
            authorize: revoked
          - at: "07:03"
            open: Instagram
        """)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertEqual(run.events("shield.shown").count, 1, "shielded before the revocation only")
        XCTAssertEqual(run.events("familycontrols.authorization.changed").last?.bodyValue["status"]?.stringValue, "denied")
        XCTAssertEqual(run.events("managedsettings.changed").last?.bodyValue["shield"], [:], "the store is emptied")
        XCTAssertEqual(run.events("activity.app.opened").count, 1, "Instagram opens after the revocation")
    }
}

/// Apple's limit of 50 tokens per set of a store's shield settings, through the real broker: a write over it is
/// refused with `too-many-tokens`, naming the set and its size, and the store is unchanged (iOS would say nothing).
final class ShieldTokenLimitTests: XCTestCase {
    func testAWriteOverFiftyTokensIsRefusedAndChangesNothing() throws {
        let broker = try BrokerProcess(configuration: "name: limits\ntimeZone: Europe/Berlin\ndevice: {companionApp: Habit Lock}\n")
        defer { _ = broker.stop() }
        let client = try broker.connect(name: "writer", role: .generic, subscriptions: ["managedsettings."])
        func write(_ count: Int, corr: String) throws -> JSONValue {
            let tokens = (0..<count).map { JSONValue.string("app-token-\($0)") }
            try client.publish(Publish(topic: "managedsettings.write.request", body: ["store": "default", "shield": ["applications": .array(tokens)]], corr: corr))
            let replies = try collectEvents(from: client) { events in events.contains { $0.corr == corr && $0.isReply } }
            return try XCTUnwrap(replies.first { $0.corr == corr && $0.isReply }?.bodyValue)
        }
        let over = try write(51, corr: "over")
        XCTAssertEqual(over["ok"]?.boolValue, false)
        XCTAssertEqual(over["error"]?["code"]?.stringValue, "too-many-tokens")
        XCTAssertTrue(over["error"]?["message"]?.stringValue?.contains("applications holds 51 tokens") == true, over.jsonText)
        let atTheLimit = try write(50, corr: "limit")
        XCTAssertNotEqual(atTheLimit["error"]?["code"]?.stringValue, "too-many-tokens", "50 is within the limit: \(atTheLimit.jsonText)")
    }
}

/// Apple's 50 named stores per process: a write that would make a 51st store holding settings is refused with
/// `too-many-stores` and changes nothing; a store written empty is gone and frees its place.
final class NamedStoreLimitTests: XCTestCase {
    func testAFiftyFirstStoreIsRefusedUntilOneIsCleared() throws {
        let broker = try BrokerProcess(configuration: "name: limits\ntimeZone: Europe/Berlin\ndevice: {companionApp: Habit Lock}\n")
        defer { _ = broker.stop() }
        let client = try broker.connect(name: "writer", role: .generic, subscriptions: ["managedsettings.", "familycontrols."])
        try client.publish(Publish(topic: "familycontrols.authorization.request", body: ["member": "individual"], corr: "authorize"))
        let authorized = try collectEvents(from: client) { events in events.contains { $0.corr == "authorize" && $0.isReply } }
        XCTAssertEqual(authorized.first { $0.corr == "authorize" && $0.isReply }?.bodyValue["value"]?["status"]?.stringValue, "approved")
        func write(_ store: String, tokens: [JSONValue] = ["app-token"]) throws -> JSONValue {
            let corr = "write-\(store)-\(tokens.count)"
            try client.publish(Publish(topic: "managedsettings.write.request", body: ["store": .string(store), "shield": ["applications": .array(tokens)]], corr: corr))
            let replies = try collectEvents(from: client) { events in events.contains { $0.corr == corr && $0.isReply } }
            return try XCTUnwrap(replies.first { $0.corr == corr && $0.isReply }?.bodyValue)
        }
        for index in 0..<50 { XCTAssertEqual(try write("store-\(index)")["ok"]?.boolValue, true, "store \(index) is within the limit") }
        let over = try write("store-50")
        XCTAssertEqual(over["error"]?["code"]?.stringValue, "too-many-stores", over.jsonText)
        XCTAssertTrue(over["error"]?["message"]?.stringValue?.contains("at most 50 named stores") == true, over.jsonText)
        XCTAssertEqual(try write("store-7", tokens: ["app-token", "another"])["ok"]?.boolValue, true, "a store already held may change")
        XCTAssertEqual(try write("store-3", tokens: [])["ok"]?.boolValue, true, "cleared")
        XCTAssertEqual(try write("store-50")["ok"]?.boolValue, true, "a cleared store frees its place")
    }
}
