import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Extension code as it ships to the App Store runs here unchanged (issue 24): the seeds' Swift
/// (`Tests/Fixtures/SeedProduct`, imports as published) played as a product's shield, action, monitor and app through
/// the real broker, under both profiles.
final class ExtensionCodeTests: XCTestCase {
    static let group = "group.com.example.focus.shield"

    /// The seed product's configuration, each plugin the program's class that the configuration names.
    static func configuration(shield: String = "FocusShieldConfiguration") -> String {
        let program = BuildProducts.path("fixture-seed-product")
        return """
        name: seed-focus
        timeZone: Europe/Berlin
        device:
          companionApp: Focus Window
          companionPlugin: app
          managedSettingsOwner: monitor
          authorization: approve
          selection: {apps: [Instagram, TikTok]}
        appGroups:
          - name: \(group)
            slices: {action: [passUntil], app: [selection]}
        plugins:
          - {name: monitor, executable: \(program), role: monitor, appGroup: \(group), principalClass: FocusPassMonitor}
          - {name: shield, executable: \(program), role: shield, principalClass: \(shield)}
          - {name: action, executable: \(program), role: action, appGroup: \(group), principalClass: FocusPassAction}
          - {name: app, executable: \(program), role: app, appGroup: \(group), principalClass: FocusApp}

        """
    }

    /// The Rork write-up's shield and action: the shield shows the seed's title and colors; its secondary button's
    /// `passUntil` (written with `UserDefaults(suiteName:)` and `Date()` by the action process) is read by the
    /// monitor process, which lifts the shield for the pass and puts it back when the pass ends, on the device's time.
    func testTheSeedsShieldAndActionRunAsPublished() throws {
        for profile in ["faithful", "ios-realistic"] {
            let scenario = """
            name: seed-focus-pass
            start: 2026-11-23T09:00
            end: after 15m
            profile: \(profile)
            seed: 5
            steps:
              - {after: 1m, open: Instagram}
              - {after: 10s, press: secondary}
              - {after: 5s, open: Instagram}
            expect:
              - {at: "09:01:05", shielded: Instagram}
              - {at: "09:02:30", usable: Instagram}
              - {at: "09:05:50", usable: Instagram}
              - {at: "09:07:05", shielded: Instagram}

            """
            let run = try ScenarioRun.run(configuration: Self.configuration(), scenario: scenario)
            XCTAssertEqual(run.exitStatus, 0, "\(profile): \(run.output.suffix(1500))\n\(run.errors.suffix(1500))")

            let shown = try XCTUnwrap(run.events("shield.shown").first, profile)
            let drawn = try XCTUnwrap(shown.bodyValue["configuration"], profile)
            XCTAssertEqual(drawn["title"]?["text"]?.stringValue, "This is your focus time", profile)
            XCTAssertEqual(drawn["backgroundColor"]?.stringValue, "#141A29FF", "UIColor(red: 0.08, green: 0.10, blue: 0.16, alpha: 1)")
            XCTAssertEqual(drawn["primaryButtonBackgroundColor"]?.stringValue, "#338CE6FF", profile)
            XCTAssertEqual(drawn["subtitle"]?["color"]?.stringValue, "#BFBFBFFF", "UIColor(white: 0.75, alpha: 1)")
            XCTAssertEqual(drawn["secondaryButtonLabel"]?["text"]?.stringValue, "Open for 5 minutes", profile)
            XCTAssertEqual(drawn["icon"]?.stringValue, "ShieldLeaf", profile)
            XCTAssertEqual(drawn["backgroundBlurStyle"]?.stringValue, "systemThinMaterialDark", profile)

            // The pass is the press's device time plus five minutes, written by the action into the App Group
            // (announced), and its end puts the shield back within the minute iOS may take.
            let press = try XCTUnwrap(run.events("shield.action.handled").first { $0.bodyValue["action"]?.stringValue == "secondaryButtonPressed" }, profile)
            XCTAssertEqual(press.bodyValue["response"]?.stringValue, "defer", profile)
            let written = try XCTUnwrap(run.events("state.changed").first { $0.bodyValue["key"]?.stringValue == "passUntil" }, profile)
            XCTAssertEqual(written.source, "action", profile)
            XCTAssertEqual(written.bodyValue["group"]?.stringValue, Self.group, profile)
            let passEnd = press.time + 5 * 60 * 1000
            let lifted = try XCTUnwrap(run.events("managedsettings.changed").first { $0.time > press.time - 1 && $0.bodyValue["writer"]?.stringValue == "monitor" }, profile)
            XCTAssertLessThanOrEqual(lifted.time - press.time, 60_000, "\(profile): the pass starts within a minute")
            let back = try XCTUnwrap(run.events("managedsettings.changed").last { $0.bodyValue["writer"]?.stringValue == "monitor" }, profile)
            XCTAssertNotNil(back.bodyValue["shield"]?["applications"], "\(profile): the shield is back")
            XCTAssertGreaterThanOrEqual(back.time, passEnd, "\(profile): not before the pass ends")
            XCTAssertLessThanOrEqual(back.time - passEnd, 60_000, "\(profile): within the minute")
            XCTAssertTrue(run.events(Topic.callFailed).isEmpty, "\(profile): \(run.events(Topic.callFailed).map(\.bodyValue))")
        }
    }

    /// Manish Yadav's shield configuration (seed 003): the app's name in the title, one button, white on black.
    func testTheSecondSeedsShieldConfigurationRuns() throws {
        let scenario = """
        name: seed-restricted
        start: 2026-11-23T09:00
        end: after 5m
        steps:
          - {after: 1m, open: TikTok}
        expect:
          - {at: "09:01:30", shielded: TikTok}

        """
        let run = try ScenarioRun.run(configuration: Self.configuration(shield: "ShieldConfigurationExtension"), scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, "\(run.output.suffix(1500))\n\(run.errors.suffix(1500))")
        let drawn = try XCTUnwrap(run.events("shield.shown").first?.bodyValue["configuration"])
        XCTAssertEqual(drawn["title"]?["text"]?.stringValue, "TikTok is Restricted")
        XCTAssertEqual(drawn["backgroundColor"]?.stringValue, "#000000FF")
        XCTAssertEqual(drawn["backgroundBlurStyle"]?.stringValue, "dark")
        XCTAssertEqual(drawn["primaryButtonLabel"]?["text"]?.stringValue, "Close")
        XCTAssertNil(drawn["secondaryButtonLabel"], "secondaryButtonLabel: nil is a single button")
    }
}
