import Foundation
import BusClient
import BusProtocol
import Configuration
import DeviceAPI
import XCTest

/// The rules of who may be whom and publish what, as pure functions (the broker applies them; BrokerTests and
/// the Python attack suite check them through the real broker).
final class TrustRulesTests: XCTestCase {

    func testNamesAreLowercaseASCIILettersDigitsAndDashesOfOneTo64Bytes() {
        for good in ["monitor", "a", "py-echo", "focus-coach-2", String(repeating: "x", count: 64), "9lives"] {
            XCTAssertNil(BusTable.screenTime.nameProblem(with: good), good)
        }
        let bad = ["", "Broker", "brоker" /* Cyrillic о */, "mon\u{1B}[2Jitor", "nul\u{0}l", "bell\u{7}", "zero\u{200B}width",
                   "rtl\u{202E}gnp", "with space", "under_score", "dot.ted", "ünicode", String(repeating: "x", count: 65),
                   "broker", "scenario", "system", "peer-00ff"]
        for name in bad {
            XCTAssertEqual(BusTable.screenTime.nameProblem(with: name)?.code, "bad-name", TerminalText.escaped(name))
        }
        // Screen Time's sources are its table's: the bus alone reserves only its own.
        XCTAssertNil(BusName.problem(with: "scenario"))
        XCTAssertNil(BusTable.bare.nameProblem(with: "system"))
    }

    /// A property over many generated names: the rule accepts exactly the names made only of [a-z0-9-], 1–64
    /// bytes, that are not reserved — whatever scalars are mixed in.
    func testTheNameRuleAgreesWithItsDefinitionOnGeneratedNames() {
        let alphabet: [Unicode.Scalar] = Array("abcxyz019-".unicodeScalars) + ["A", "Z", "_", ".", " ", "\u{0}", "\u{1B}", "\u{7F}", "\u{85}",
                                                                               "\u{200B}", "\u{202E}", "\u{43E}", "é", "😀"]
        var random = SeededRandom(seed: 10)
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...70, using: &random)
            var name = ""
            for _ in 0..<length { name.unicodeScalars.append(alphabet.randomElement(using: &random)!) }
            let expected = (1...64).contains(name.utf8.count)
                && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
                && !BusName.reserved.contains(name) && !name.hasPrefix("peer-")
            XCTAssertEqual(BusName.problem(with: name) == nil, expected, TerminalText.escaped(name))
        }
    }

    func testTerminalTextEscapesControlAndInvisibleCharactersAndKeepsTheRest() {
        XCTAssertEqual(TerminalText.escaped("plain text, Grüße, 日本, 😀"), "plain text, Grüße, 日本, 😀")
        XCTAssertEqual(TerminalText.escaped("a\u{1B}[2Jb"), "a\\u{1b}[2Jb")
        XCTAssertEqual(TerminalText.escaped("\u{0}\u{7}\u{7F}\u{9B}"), "\\u{0}\\u{7}\\u{7f}\\u{9b}")
        XCTAssertEqual(TerminalText.escaped("x\u{200B}y\u{202E}z"), "x\\u{200b}y\\u{202e}z")
        XCTAssertEqual(TerminalText.escaped("line\nbreak"), "line\\u{a}break")
    }

    /// Escaping JSON for the terminal keeps it valid JSON with the same meaning, over generated strings.
    func testEscapedJSONMeansTheSameAndShowsNothingRaw() throws {
        let alphabet: [Unicode.Scalar] = Array("ab\"\\ {}".unicodeScalars) + ["\u{0}", "\u{1B}", "\u{7F}", "\u{9B}", "\u{200B}", "\u{202E}",
                                                                              "\u{E000}", "é", "😀", "\u{2028}"]
        var random = SeededRandom(seed: 11)
        for _ in 0..<2_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...20, using: &random) { text.unicodeScalars.append(alphabet.randomElement(using: &random)!) }
            let json = JSONValue.object(["s": .string(text)]).jsonText
            let shown = TerminalText.escapedJSON(json)
            XCTAssertEqual(try JSONValue(parsing: Array(shown.utf8)), try JSONValue(parsing: Array(json.utf8)), TerminalText.escaped(text))
            XCTAssertEqual(TerminalText.escaped(shown), shown, "nothing left to escape in \(TerminalText.escaped(shown))")
        }
    }

    func testOnlyTheSystemProducesActivityCallbacksButtonPressesClockDeviceAndLifecycle() {
        for topic in ["activity.habit.completed", "activity.app.opened", "deviceactivity.interval-did-end", "deviceactivity.interval-did-start",
                      "deviceactivity.event-did-reach-threshold", "shield.action.request", "shield.configuration.request", "shield.shown",
                      "clock.tick", "device.restarted", "plugin.up", "bus.ready", "scenario.step", "managedsettings.changed",
                      "app.lifecycle.will-enter-foreground", "app.timer.fired", "notification.tapped"] {
            XCTAssertTrue(BusTable.screenTime.isSystemOnly(topic), topic)
        }
        for topic in ["managedsettings.write.request", "deviceactivity.start-monitoring.request", "shield.configuration.reply",
                      "shield.action.reply", "app.unlock.started", "report.daily.request", "state.changed", "x.coach.tip", "input.open.request"] {
            XCTAssertFalse(BusTable.screenTime.isSystemOnly(topic), topic)
        }
    }

    func testATableWithoutAProductsStillKeepsTheBussOwnRolesAndEvents() {
        XCTAssertEqual(BusTable.bare.roles, [.generic, .tap, .tool])
        XCTAssertTrue(BusTable.bare.exclusiveRoles.isEmpty)
        for topic in ["bus.ready", "clock.tick", "plugin.up"] { XCTAssertTrue(BusTable.bare.isSystemOnly(topic), topic) }
        XCTAssertFalse(BusTable.bare.isSystemOnly("activity.app.opened"), "a product's events are its table's")
        XCTAssertEqual(BusTable.bare.topicProblem(with: "activity.app.opened")?.code, "unknown-topic", "and so are its namespaces")
        XCTAssertNil(BusTable.bare.topicProblem(with: "x.coach.tip"))
        XCTAssertNil(BusTable.bare.answeringRole(forRequest: "shield.configuration.request"))
        XCTAssertEqual(BusTable.screenTime.roles.map(\.rawValue), ["monitor", "shield", "action", "notifier", "report", "app", "generic", "tap", "tool"])
        XCTAssertFalse(BusTable.screenTime.isExclusive(.generic))
        XCTAssertTrue(BusTable.screenTime.isExclusive(.shield))
    }

    func testThePersonsInputIsTheProductsTableNotTheBuss() {
        XCTAssertEqual(BusTable.bare.topicProblem(with: "input.open.request")?.code, "unknown-topic", "the bus alone has no person's input")
        XCTAssertFalse(BusTable.bare.isToolsOnly("input.open.request"))
        XCTAssertTrue(BusTable.bare.isToolsOnly(Topic.clockControlRequest), "the clock's controls are the bus's own")
        XCTAssertTrue(BusTable.bare.isToolsOnly(Topic.pluginRestartRequest))
        XCTAssertTrue(BusTable.screenTime.isPersonInput("input.open.request"))
        XCTAssertTrue(BusTable.screenTime.isToolsOnly("input.open.request"))
        XCTAssertFalse(BusTable.screenTime.isToolsOnly("state.write-failed"))
        XCTAssertEqual(BusProtocolError.personInputOnly("input.open.request").code, "reserved-topic")
        XCTAssertTrue(BusProtocolError.personInputOnly("input.open.request").description.contains("the person's input"))
    }

    func testPluginNamespacesBelongToTheirPlugin() {
        XCTAssertEqual(Topic.owner(of: "x.coach.tip", declared: [:]), "coach")
        XCTAssertEqual(Topic.owner(of: "focuscoach.session.started", declared: ["focuscoach": "coach"]), "coach")
        XCTAssertNil(Topic.owner(of: "app.unlock.started", declared: ["focuscoach": "coach"]))
        XCTAssertNil(BusTable.screenTime.topicProblem(with: "x.coach.tip"))
        XCTAssertEqual(BusTable.screenTime.topicProblem(with: "focuscoach.tip")?.code, "unknown-topic")
        XCTAssertNil(BusTable.screenTime.topicProblem(with: "focuscoach.tip", declaredNamespaces: ["focuscoach"]))
    }

    func testRequestsAreAnsweredByTheirRoleOrByTheOS() {
        XCTAssertEqual(BusTable.screenTime.answeringRole(forRequest: "shield.configuration.request"), .shield)
        XCTAssertEqual(BusTable.screenTime.answeringRole(forRequest: "shield.action.request"), .action)
        XCTAssertEqual(BusTable.screenTime.answeringRole(forRequest: "report.daily.request"), .report)
        XCTAssertNil(BusTable.screenTime.answeringRole(forRequest: "managedsettings.write.request"))
        XCTAssertTrue(BusTable.screenTime.isAnsweredBySystem("managedsettings.write.request"))
        XCTAssertTrue(BusTable.screenTime.isAnsweredBySystem("input.open.request"))
        XCTAssertFalse(BusTable.screenTime.isAnsweredBySystem("report.weekly.request"))
        XCTAssertFalse(BusTable.screenTime.isAnsweredBySystem("x.coach.ask.request"))
    }

    func testTheSenderIsTheSystemOnlyUnderTheSystemsOwnNames() {
        func envelope(_ source: String) -> Envelope { Envelope(seq: 1, time: 0, topic: "activity.habit.completed", source: source, body: Array("{}".utf8)) }
        XCTAssertTrue(envelope("broker").isFromSystem)
        XCTAssertTrue(envelope("scenario").isFromSystem)
        XCTAssertFalse(envelope("scenario").isFromSystem(of: .bare), "a scenario is Screen Time's, not the bus's")
        XCTAssertFalse(envelope("companion-app").isFromSystem)
        XCTAssertEqual(envelope("companion-app").sender, "companion-app")
    }

    func testCredentialsAreLongRandomAndComparedWhole() {
        let one = BusCredential.random(), two = BusCredential.random()
        XCTAssertEqual(one.utf8.count, 64)
        XCTAssertTrue(one.allSatisfy { "0123456789abcdef".contains($0) }, "64 lowercase hex digits, as a cookie file must hold: \(one)")
        XCTAssertNotEqual(one, two)
        XCTAssertTrue(BusCredential.matches(one, one))
        XCTAssertFalse(BusCredential.matches(one, two))
        XCTAssertFalse(BusCredential.matches(String(one.dropLast()), one))
        XCTAssertFalse(BusCredential.matches(nil, one))
        XCTAssertFalse(BusCredential.matches("", ""), "an empty credential admits nobody")
    }

    func testAClientFindsTheCookieNextToTheSocketOrItsLaunchCredentialFirst() throws {
        let directory = NSTemporaryDirectory() + "cookie-\(getpid())-\(Int.random(in: 0...999_999))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "abc123\n".write(toFile: directory + "/cookie", atomically: true, encoding: .utf8)
        XCTAssertEqual(BusCredential.forClient(endpoint: "ipc://\(directory)/bus.sock", environment: [:]), "abc123")
        XCTAssertEqual(BusCredential.forClient(endpoint: "tcp://127.0.0.1:5555", environment: ["SHIELDBUS_RUNTIME_DIR": directory]), "abc123")
        XCTAssertEqual(BusCredential.forClient(endpoint: "ipc://\(directory)/bus.sock", environment: [BusCredential.environmentKey: "launch"]), "launch")
    }
}
