import BusProtocol
import DeviceAPI
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

    /// The configuration with the wall-clock fixture's action `principalClass` in place of the seed's.
    static func configuration(action principalClass: String) -> String {
        configuration().replacingOccurrences(
            of: "executable: \(BuildProducts.path("fixture-seed-product")), role: action, appGroup: \(group), principalClass: FocusPassAction",
            with: "executable: \(BuildProducts.path("fixture-wall-clock-product")), role: action, principalClass: \(principalClass)")
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
            XCTAssertTrue(run.events(DeviceTopic.callFailed).isEmpty, "\(profile): \(run.events(DeviceTopic.callFailed).map(\.bodyValue))")
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

    /// A monitor written as iOS code is — its checks computed with `Date()` and `Calendar.current` — gives the same
    /// journal, byte for byte, as its twin on bus time, across a fall-back night and two time-zone changes, under both
    /// profiles: inside a plugin the system clock and calendar are the device's.
    func testAMonitorOnTheSystemClockMatchesItsTwinOnBusTime() throws {
        let program = BuildProducts.path("fixture-wall-clock-product")
        func configuration(_ monitor: String) -> String {
            """
            name: night-focus
            timeZone: Europe/Berlin
            device:
              companionApp: Focus Window
              companionPlugin: app
              managedSettingsOwner: monitor
              authorization: approve
              selection: {apps: [Instagram, TikTok]}
            appGroups:
              - {name: group.com.example.night, slices: {app: [selection]}}
            plugins:
              - {name: monitor, executable: \(program), role: monitor, appGroup: group.com.example.night, principalClass: \(monitor)}
              - {name: app, executable: \(program), role: app, appGroup: group.com.example.night, principalClass: NightApp}

            """
        }
        for profile in ["faithful", "ios-realistic"] {
            // West across two zones, through London's fall-back night (01:00–02:00 twice): every check still ahead.
            let scenario = """
            name: night-across-zones
            start: 2026-10-24T20:30
            end: after 18h
            profile: \(profile)
            seed: 11
            steps:
              - {after: 2h40m, timeZone: Europe/London}
              - {after: 5h, timeZone: America/New_York}
              - {after: 30m, open: Instagram}

            """
            let onTheSystemClock = try ScenarioRun.run(configuration: configuration("SystemTimeNightMonitor"), scenario: scenario, timeoutSeconds: 120)
            let onBusTime = try ScenarioRun.run(configuration: configuration("BusTimeNightMonitor"), scenario: scenario, timeoutSeconds: 120)
            XCTAssertEqual(onBusTime.exitStatus, 0, "\(profile): \(onBusTime.errors.suffix(1500))")
            XCTAssertEqual(onTheSystemClock.exitStatus, 0, "\(profile): \(onTheSystemClock.errors.suffix(1500))")
            let writes = onBusTime.events("managedsettings.changed")
            XCTAssertTrue(writes.contains { $0.bodyValue["shield"]?["applications"] != nil }, "\(profile): the window shielded")
            XCTAssertTrue(writes.contains { $0.bodyValue["shield"]?["applications"] == nil }, "\(profile): and lifted")
            XCTAssertGreaterThan(onBusTime.events("deviceactivity.interval-did-start").count, 15, "\(profile): the checks ran all night")
            XCTAssertEqual(onTheSystemClock.events("managedsettings.changed").map { "\($0.time) \($0.bodyValue)" }, writes.map { "\($0.time) \($0.bodyValue)" }, profile)
            XCTAssertEqual(onTheSystemClock.journalBytes, onBusTime.journalBytes, "\(profile): the same journal, byte for byte")
        }
    }

    /// `UserDefaults` on the App Group, as iOS code uses it: every property-list kind written and read back, nil
    /// (and reported) for another product's group, `standard` private to the plugin in its container; a
    /// key written by a second plugin allowed and reported, not reported when declared `shared:`, refused (and
    /// reported) under `strictSlices: true`.
    func testUserDefaultsIsTheAppGroup() throws {
        let program = BuildProducts.path("fixture-wall-clock-product")
        func configuration(_ groupExtras: String) -> String {
            """
            name: group-probe
            timeZone: Europe/Berlin
            device: {companionApp: Focus Window, companionPlugin: app, authorization: approve}
            appGroups:
              - {name: group.com.example.night, slices: {app: [session]}\(groupExtras)}
              - {name: group.com.example.other, slices: {}}
            plugins:
              - {name: app, executable: \(program), role: app, appGroup: group.com.example.night, principalClass: GroupProbeApp}
              - {name: writer, executable: \(program), role: generic, appGroup: group.com.example.night, principalClass: GroupProbeWriter}

            """
        }
        let scenario = "name: probe\nstart: 2026-11-23T09:00\nend: after 1m\nsteps: []\n"
        let state = TemporaryDirectory(prefix: "sbstate")
        let open = try ScenarioRun.run(configuration: configuration(""), scenario: scenario, stateDirectory: state.path)
        let probe = try XCTUnwrap(open.events("x.app.probe").first, open.errors.suffix(2000).description)
        XCTAssertEqual(probe.bodyValue["failures"]?.arrayValue, [], "\(probe.bodyValue)")
        let failed = open.events("state.call-failed").compactMap { $0.bodyValue["call"]?.stringValue }
        // The group exists on the device, as another product's: this plugin is not in it.
        let notIn = open.events("state.call-failed").filter { ($0.bodyValue["message"]?.stringValue ?? "").contains("this plugin is not in the App Group 'group.com.example.other' (its App Groups: group.com.example.night)") }
        XCTAssertEqual(notIn.count, 2, "UserDefaults(suiteName:) and containerURL both said why: \(open.events("state.call-failed").map(\.bodyValue))")
        XCTAssertTrue(failed.contains { $0.contains("containerURL(forSecurityApplicationGroupIdentifier: \"group.com.example.other\")") }, "\(failed)")
        XCTAssertTrue(failed.contains { $0.contains("forKey: object") }, "a value that is no property-list value: \(failed)")
        let crossed = try XCTUnwrap(open.events("state.multiple-writers").first)
        XCTAssertEqual(crossed.bodyValue["key"]?.stringValue, "session")
        XCTAssertEqual(crossed.bodyValue["writers"]?.arrayValue?.compactMap(\.stringValue), ["app", "writer"])
        XCTAssertEqual(open.events("x.writer.done").first?.bodyValue["session"]?.stringValue, "writer", "the second writer's write stands, as on iOS")
        let listed = try runToEnd(BuildProducts.path("shieldbus"), ["state", "list", "--state-dir", state.path])
        XCTAssertTrue(listed.output.contains("    session: app, writer"), listed.output)
        let entries = try JSONValue(parsing: runToEnd(BuildProducts.path("shieldbus"), ["state", "list", "--json", "--state-dir", state.path]).output)["groups"]?.arrayValue?.first?["entries"]?.arrayValue ?? []
        XCTAssertEqual(entries.first { $0["key"]?.stringValue == "session" }?["writers"]?.arrayValue?.compactMap(\.stringValue), ["app", "writer"])
        XCTAssertEqual(entries.first { $0["key"]?.stringValue == "flag" }?["writers"]?.arrayValue?.compactMap(\.stringValue), ["app"])
        XCTAssertTrue(open.errors.contains("multiple-writers") || open.output.contains("written by app and writer") || open.errors.contains("written by app and writer"),
                      "said on the broker's terminal")

        // A power cut that set back a store the plugin opens first (`UserDefaults.standard`, which the broker never
        // opens): the open says what it lost, from the plugin, as the failure of the call that opened it.
        let standard = state.path + "/containers/app/Library/Preferences/standard.sqlite"
        try assertPowerCutIsSaid(by: "app", opening: standard, as: "UserDefaults.standard",
                                 rerun: { try ScenarioRun.run(configuration: configuration(""), scenario: scenario, arguments: ["--keep-state"], stateDirectory: state.path) })

        let shared = try ScenarioRun.run(configuration: configuration(", shared: [session]"), scenario: scenario)
        XCTAssertTrue(shared.events("state.multiple-writers").isEmpty, "a shared key is not reported")
        XCTAssertEqual(shared.events("x.writer.done").first?.bodyValue["session"]?.stringValue, "writer")

        let strict = try ScenarioRun.run(configuration: configuration(", strictSlices: true"), scenario: scenario)
        XCTAssertEqual(strict.events("x.writer.done").first?.bodyValue["session"]?.stringValue, "app", "the write outside the slice is refused")
        XCTAssertTrue(strict.events("state.call-failed").contains { $0.source == "writer" && ($0.bodyValue["message"]?.stringValue ?? "").contains("strictSlices") })
    }

    /// Sets `store` back as a power cut can (`PowerCut`), runs again, and checks that `plugin` says what it lost as
    /// the failure of `call` on the bus (`state.call-failed`).
    func assertPowerCutIsSaid(by plugin: String, opening store: String, as call: String, rerun: () throws -> ScenarioRun,
                              file: StaticString = #filePath, line: UInt = #line) throws {
        try PowerCut.setBack([store])
        let run = try rerun()
        let said = run.events("state.call-failed").filter { $0.source == plugin && $0.bodyValue["call"]?.stringValue == call }
        XCTAssertEqual(said.count, 1, "\(run.events("state.call-failed").map(\.bodyValue))", file: file, line: line)
        XCTAssertTrue((said.first?.bodyValue["message"]?.stringValue ?? "").contains("lost its last 2 committed write(s) with the machine's restart"),
                      "\(said.map(\.bodyValue))", file: file, line: line)
    }

    /// A completion handler called later — from a `Task` on another thread, from the main queue after a delay — is
    /// the OS's answer, as on iOS.
    func testACompletionHandlerMayBeCalledLater() throws {
        let configuration = Self.configuration(action: "LateAction")
        XCTAssertTrue(configuration.contains("LateAction"))
        let scenario = """
        name: late-answers
        start: 2026-11-23T09:00
        end: after 5m
        steps:
          - {after: 1m, open: Instagram}
          - {after: 10s, press: primary}
          - {after: 10s, open: TikTok}
          - {after: 10s, press: secondary}

        """
        let run = try ScenarioRun.run(configuration: configuration, scenario: scenario)
        XCTAssertEqual(run.exitStatus, 0, "\(run.errors.suffix(1500))")
        XCTAssertEqual(run.events("shield.action.handled").compactMap { $0.bodyValue["response"]?.stringValue }, ["close", "defer"])
        XCTAssertTrue(run.events(DeviceTopic.callFailed).isEmpty, "\(run.events(DeviceTopic.callFailed).map(\.bodyValue))")
    }

    /// In virtual time the OS's wait for a completion handler called later is judged by progress: a `Task` still at
    /// its work past `device.replyTimeoutMs` (as on a machine busy with other work) answers, and its answer counts —
    /// the SDK's wait and the OS's go on while the action's process works; "no action" would be the load speaking.
    func testACompletionHandlerStillAtWorkPastTheDeadlineAnswers() throws {
        let configuration = Self.configuration(action: "SlowAction").replacingOccurrences(of: "device:\n", with: "device:\n  replyTimeoutMs: 300\n")
        XCTAssertTrue(configuration.contains("SlowAction") && configuration.contains("replyTimeoutMs: 300"))
        let scenario = """
        name: slow-answer
        start: 2026-11-23T09:00
        end: after 3m
        steps:
          - {after: 1m, open: Instagram}
          - {after: 10s, press: primary}

        """
        let run = try ScenarioRun.run(configuration: configuration, scenario: scenario, timeoutSeconds: 120)
        XCTAssertEqual(run.exitStatus, 0, "\(run.errors.suffix(1500))")
        XCTAssertEqual(run.events("shield.action.handled").compactMap { $0.bodyValue["response"]?.stringValue }, ["close"])
        XCTAssertEqual(run.events("shield.action.handled").first?.bodyValue["decidedBy"]?.stringValue, "action")
        XCTAssertTrue(run.events(DeviceTopic.callFailed).isEmpty, "\(run.events(DeviceTopic.callFailed).map(\.bodyValue))")
    }

    /// Extension code's timed waits — a semaphore, a condition, a wall-clock timer, the OS's answer to a call from
    /// another thread — take the time they ask for on a device clock years behind the host's or years ahead of it:
    /// the C library measures their deadlines by the host's clock, and the device clock's lead is taken off them.
    /// In scaled time, where the device clock runs: a wall-clock timer comes due for Dispatch only as it moves.
    func testTimedWaitsTakeTheTimeTheyAskForWhateverTheDeviceClockSays() throws {
        let configuration = Self.configuration(action: "TimedWaitsAction")
        // The OS waits long enough for the answer that a loaded machine does not make it late: the waits are the test.
        .replacingOccurrences(of: "device:\n", with: "device:\n  replyTimeoutMs: 10000\n")
        XCTAssertTrue(configuration.contains("TimedWaitsAction") && configuration.contains("replyTimeoutMs: 10000"))
        for start in ["2020-11-23T09:00", "2099-11-23T09:00"] {
            let scenario = """
            name: timed-waits
            start: \(start)
            end: after 3m
            steps:
              - {after: 1m, open: Instagram}
              - {after: 10s, press: primary}

            """
            let run = try ScenarioRun.run(configuration: configuration, scenario: scenario, arguments: ["--clock", "scaled", "--speed", "60"])
            XCTAssertEqual(run.exitStatus, 0, "\(start): \(run.errors.suffix(1500))")
            XCTAssertEqual(run.events("shield.action.handled").compactMap { $0.bodyValue["response"]?.stringValue }, ["close"],
                           "\(start): every wait took its time (the action's log says what each took): \(run.errors.suffix(1500))")
        }
    }
}
