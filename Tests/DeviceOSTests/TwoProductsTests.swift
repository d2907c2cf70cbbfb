import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Several products on one device, through the real broker and real plugin processes: each product's requests,
/// stores, activities and lifecycle keep to its own plugins (docs/architecture.md § 2.1).
final class TwoProductsTests: XCTestCase {
    /// Three fixture products: `bump` and `habit` each shield their picks in their own store, and `snoop` holds a
    /// renderer that answers the OS's first shield request whoever it went to. `bump` comes first, so a request
    /// routed to "the" shield role's holder, as on a one-product device, would go to `bump-shield`.
    let fixtures = """
    name: two-fixture-products
    timeZone: Europe/Berlin
    bus: {ackTimeoutMs: 1000}
    device: {authorization: approve, replyTimeoutMs: 5000}
    products:
      - name: bump
        companionApp: Speed Bump
        companionPlugin: bump-app
        stores: {bump-store: bump-app}
        selection: {apps: [Facebook, Instagram]}
        plugins: [bump-app, bump-shield]
      - name: habit
        companionApp: Habit Lock
        companionPlugin: habit-app
        stores: {habit-store: habit-app}
        selection: {apps: [Instagram, TikTok]}
        plugins: [habit-app, habit-shield]
      - name: snoop
        stores: {snoop-store: snoop-shield}
        plugins: [snoop-shield]
    plugins:
      - {name: bump-app, executable: \(BuildProducts.path("fixture-app")), role: app, arguments: [--store, bump-store, --activities, "20"]}
      - {name: bump-shield, executable: \(BuildProducts.path("fixture-shield")), role: shield}
      - {name: habit-app, executable: \(BuildProducts.path("fixture-app")), role: app, arguments: [--store, habit-store, --activities, "21"]}
      - {name: habit-shield, executable: \(BuildProducts.path("fixture-shield")), role: shield}
      - {name: snoop-shield, executable: \(BuildProducts.path("fixture-shield")), role: shield, arguments: [--answer-others]}
    """

    func testEachProductsShieldIsDrawnByItsOwnRendererAndAnotherProductCannotAnswer() throws {
        let run = try ScenarioRun.run(configuration: fixtures, scenario: """
        name: whose-shield
        start: 2026-11-24T07:00
        steps:
          - {at: "07:01", open: TikTok}
          - {at: "07:02", open: Facebook}
          - {at: "07:03", open: Instagram}
        """)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let shown = run.events("shield.shown").map(\.bodyValue)
        let drawn = shown.map { [$0["target"]?["application"]?["localizedDisplayName"]?.stringValue ?? "?", $0["renderedBy"]?.stringValue ?? "?",
                                 $0["configuration"]?["title"]?["text"]?.stringValue ?? "?"] }
        XCTAssertEqual(drawn, [["TikTok", "habit-shield", "Fixture shield: TikTok"],
                               ["Facebook", "bump-shield", "Fixture shield: Facebook"],
                               // Both stores shield it: the product declared first draws it.
                               ["Instagram", "bump-shield", "Fixture shield: Instagram"]])
        XCTAssertEqual(shown.last?["stores"]?.arrayValue?.compactMap(\.stringValue), ["bump-store", "habit-store"], "every store that shields it is named")
        // The requests went to their product's renderer alone.
        XCTAssertEqual(run.events("shield.configuration.reply").map(\.source), ["habit-shield", "bump-shield", "bump-shield"])
        // The snoop's answer to a request that went to another product's renderer is refused.
        let refusals = run.events("bus.error").map(\.bodyValue).filter { $0["sender"]?.stringValue == "snoop-shield" }
        XCTAssertEqual(refusals.compactMap { $0["code"]?.stringValue }, ["reply-refused"], run.events("bus.error").map(\.bodyValue.jsonText).joined(separator: "\n"))
    }

    func testTheActivityLimitOfTwentyIsPerApp() throws {
        let run = try ScenarioRun.run(configuration: fixtures, scenario: "name: limits\nstart: 2026-11-24T07:00\nend: after 2m\nsteps: []\n")
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        func outcomes(of plugin: String) -> [String] {
            run.events("deviceactivity.start-monitoring.reply").filter { $0.corr?.hasPrefix(plugin + "-") == true }.map { reply in
                reply.bodyValue["ok"]?.boolValue == true ? "ok" : reply.bodyValue["error"]?["code"]?.stringValue ?? "?"
            }
        }
        XCTAssertEqual(outcomes(of: "bump-app"), Array(repeating: "ok", count: 20), "20 activities of one app, while another app has 20 too")
        XCTAssertEqual(outcomes(of: "habit-app"), Array(repeating: "ok", count: 20) + ["excessive-activities"], "the 21st of one app is refused")
        // Each app's callbacks reach only its own plugins: the journal names no other product's plugin as a reader,
        // and each activity started once, for its app.
        let started = run.events("deviceactivity.interval-did-start").compactMap { $0.bodyValue["activity"]?.stringValue }
        XCTAssertEqual(Set(started).count, 40, started.joined(separator: ", "))
    }

    func testEachAppHasItsOwnAuthorization() throws {
        let configuration = """
        name: two-authorizations
        timeZone: Europe/Berlin
        device: {authorization: approve}
        products:
          - {name: asks, companionApp: Habit Lock, companionPlugin: asks-app, stores: {asks-store: asks-app}, selection: {apps: [TikTok]}, plugins: [asks-app]}
          - {name: never-asked, companionApp: Speed Bump, companionPlugin: other-app, stores: {other-store: other-app}, selection: {apps: [X]}, plugins: [other-app]}
        plugins:
          - {name: asks-app, executable: \(BuildProducts.path("fixture-app")), role: app, arguments: [--store, asks-store]}
          - {name: other-app, executable: \(BuildProducts.path("fixture-app")), role: app, arguments: [--store, other-store, --unauthorized]}
        """
        let run = try ScenarioRun.run(configuration: configuration, scenario: """
        name: two-authorizations
        start: 2026-11-24T07:00
        steps:
          - {at: "07:01", open: TikTok}
          - {at: "07:02", open: X}
        """)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        let writes = run.events("managedsettings.write.reply").map { reply in
            [String(reply.corr?.split(separator: "-").dropLast().joined(separator: "-") ?? "?"),
             reply.bodyValue["ok"]?.boolValue == true ? "ok" : reply.bodyValue["error"]?["code"]?.stringValue ?? "?"]
        }
        XCTAssertEqual(writes.sorted { $0[0] < $1[0] }, [["asks-app", "ok"], ["other-app", "unauthorized"]], "the other app never asked: its approval is not the first app's")
        XCTAssertEqual(run.events("familycontrols.authorization.changed").count, 1)
        XCTAssertEqual(run.events("shield.shown").compactMap { $0.bodyValue["target"]?["application"]?["localizedDisplayName"]?.stringValue }, ["TikTok"])
    }

    /// The shipped two-product device and its day (habit lock and speed bump): both shields up at once, and the
    /// habit lock's unlock lifts its own shield only.
    func testOneProductsUnlockLeavesTheOtherProductsShieldUp() throws {
        let day = try String(contentsOf: BuildProducts.repositoryRoot.appendingPathComponent("Config/scenarios/two-products-day.yml"), encoding: .utf8)
        let run = try ScenarioRun.run(configuration: try ScenarioRun.shippedConfiguration("two-products"), scenario: day)
        XCTAssertEqual(run.exitStatus, 0, run.errors)
        XCTAssertTrue(run.errors.contains("expectations      6 held"), run.errors)
        XCTAssertTrue(run.errors.contains("lock invariant    held (habit-lock)"), run.errors)
        XCTAssertTrue(run.errors.contains("lock invariant    held (speed-bump)"), run.errors)
        let renderers = run.events("shield.shown").map { [$0.bodyValue["target"]?["application"]?["localizedDisplayName"]?.stringValue ?? "?", $0.bodyValue["renderedBy"]?.stringValue ?? "?"] }
        XCTAssertTrue(renderers.contains(["Instagram", "habit-shield"]), "\(renderers)")
        XCTAssertTrue(renderers.contains(["Facebook", "bump-shield"]), "\(renderers)")
        // The unlock's timer is the habit app's: it fires for it alone, and nothing of the speed bump's store was lifted.
        let lifted = run.events("managedsettings.changed").filter { $0.bodyValue["store"]?.stringValue == "speed-bump" && $0.bodyValue["shield"]?.objectValue?.isEmpty != false }
        XCTAssertEqual(lifted.count, 0, lifted.map(\.bodyValue.jsonText).joined(separator: "\n"))
    }

    /// Two products pick the same app: one's unlock leaves it shielded by the other (the stores are merged).
    func testAnUnlockOfOneProductNeverLiftsAnotherProductsShieldOnTheSameApp() throws {
        var configuration = try ScenarioRun.shippedConfiguration("two-products")
        // The speed bump becomes a focus window (09:00–12:00) over Instagram too.
        configuration = configuration.replacingOccurrences(of: "apps: [Facebook, X, Snapchat]", with: "apps: [Instagram, Facebook]")
            .replacingOccurrences(of: "product: speed-bump, appGroup: group.dev.shieldbus.speedbump, store: speed-bump, thresholdMinutes: 30, cooldownMinutes: 15",
                                  with: "product: focus-window, appGroup: group.dev.shieldbus.speedbump, store: speed-bump, focusHours: [{start: \"09:00\", end: \"12:00\"}]")
            .replacingOccurrences(of: "promise: {locked: {dailyUse: {minutes: 30, dismiss: primary, cooldownMinutes: 15}}}",
                                  with: #"promise: {locked: {windows: [{start: "09:00", end: "12:00"}]}}"#)
        XCTAssertTrue(configuration.contains("product: focus-window"), "the shipped file changed: adapt this test")
        XCTAssertTrue(configuration.contains("windows: [{start"), "the shipped file changed: adapt this test")
        for profile in ["faithful", "ios-realistic"] {
            let run = try ScenarioRun.run(configuration: configuration, scenario: """
            name: same-app-two-products
            start: 2026-11-24T09:20
            profile: \(profile)
            end: after 5m
            steps:
              - {at: "09:21", open: Habit Lock}
              - {at: "09:22", habit: Read}
              - {after: 0s, habit: Walk}
              - {after: 0s, habit: Stretch}
              - {at: "09:25", open: TikTok}
              - {at: "09:26", open: Instagram}
              - {at: "09:50", open: Instagram}
            expect:
              - {at: "09:25:30", usable: TikTok}
              - {at: "09:26:30", shielded: Instagram}
              - {at: "09:50:30", shielded: Instagram}
            """)
            XCTAssertEqual(run.exitStatus, 0, "\(profile): \(run.errors)")
            XCTAssertTrue(run.errors.contains("expectations      3 held"), "\(profile): \(run.errors)")
            XCTAssertFalse(run.errors.contains("BROKEN"), "\(profile): \(run.errors)")
            XCTAssertTrue(run.events("app.unlock.started").count == 1, "\(profile): the habit lock unlocked")
        }
    }
}
