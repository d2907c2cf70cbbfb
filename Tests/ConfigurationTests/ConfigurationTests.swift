import Configuration
import XCTest

final class ConfigurationTests: XCTestCase {
    func parse(_ text: String) throws -> ShieldBusConfiguration {
        try ShieldBusConfiguration.parse(YAMLValue.parse(text, file: "test.yml"))
    }

    func assertError(_ text: String, line: Int, key: String, contains: String, file: StaticString = #filePath, testLine: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: testLine) { error in
            guard let error = error as? ConfigurationError else { return XCTFail("\(error)", file: file, line: testLine) }
            XCTAssertEqual(error.file, "test.yml", file: file, line: testLine)
            XCTAssertEqual(error.line, line, "\(error)", file: file, line: testLine)
            XCTAssertEqual(error.key, key, "\(error)", file: file, line: testLine)
            XCTAssertTrue(error.description.contains(contains), error.description, file: file, line: testLine)
            XCTAssertTrue(error.description.hasPrefix("test.yml:\(line):"), error.description, file: file, line: testLine)
        }
    }

    /// The configuration reads zone names as scenarios do: IANA names (current ones that tzdata keeps as links too),
    /// never an abbreviation or an offset that ignores daylight saving.
    func testTimeZonesAreIANANamesAsInScenarios() throws {
        XCTAssertEqual(try parse("name: t\ntimeZone: Asia/Kolkata\n").timeZone, "Asia/Kolkata")
        XCTAssertEqual(try parse("name: t\ntimeZone: UTC\n").timeZone, "UTC")
        assertError("name: t\ntimeZone: CET\n", line: 2, key: "timeZone", contains: "expected an IANA time zone name like Europe/Berlin, got 'CET'")
        assertError("name: t\ntimeZone: Europe/Berln\n", line: 2, key: "timeZone", contains: "did you mean 'Europe/Berlin'?")
    }

    /// `ios:` names a release whose bugs the device reproduces: checked at load, with its line and the closest name.
    func testTheIOSReleaseIsAKnownRelease() throws {
        XCTAssertNil(try parse("name: t\n").ios)
        XCTAssertEqual(try parse("name: t\nios: \"26.3.1\"\n").ios, .iOS26_3_1)
        XCTAssertEqual(try parse("name: t\nios: 17.5.1\n").ios, .iOS17_5_1)
        XCTAssertEqual(try parse("name: t\nios: 26.2-rc\n").ios, .iOS26_2RC)
        assertError("name: t\nprofile: faithful\nios: 26.2 RC\n", line: 3, key: "ios", contains: "did you mean '26.2-rc'?")
        assertError("name: t\nios: 26.3\n", line: 2, key: "ios", contains: "expected one of 17.5.1, 26.2-rc, 26.3.1, got '26.3' — did you mean '26.3.1'?")
        // The release's bugs are quirks a configuration may also switch on alone.
        XCTAssertEqual(try parse("name: t\nquirks: {monitor-never-woken: true}\n").quirks, ["monitor-never-woken": true])
    }

    /// Quirk names are checked at load, with their line and the closest known name.
    func testQuirksAreKnownNames() throws {
        XCTAssertEqual(try parse("name: t\nquirks: {whole-minute-callbacks: false, starts-intervals-at-once: true}\n").quirks,
                       ["whole-minute-callbacks": false, "starts-intervals-at-once": true])
        assertError("name: t\nquirks:\n  whole-minute-callback: false\n", line: 3, key: "quirks.whole-minute-callback", contains: "did you mean 'whole-minute-callbacks'?")
    }

    func testReadsAFullConfiguration() throws {
        let configuration = try parse("""
        name: demo
        bus:
          maxBodyBytes: 2048
          heartbeatMs: 500
          sessionTimeoutMs: 3000
        journal: out.jsonl
        plugins:
          - name: monitor
            executable: activity-monitor
            role: monitor
            arguments: [--verbose]
            environment: {MODE: test}
            restart: always
        """)
        XCTAssertEqual(configuration.name, "demo")
        XCTAssertEqual(configuration.bus.maxBodyBytes, 2048)
        XCTAssertEqual(configuration.bus.heartbeatMs, 500)
        XCTAssertEqual(configuration.journal, "out.jsonl")
        XCTAssertEqual(configuration.plugins.count, 1)
        XCTAssertEqual(configuration.plugins[0].role, .monitor)
        XCTAssertEqual(configuration.plugins[0].arguments, ["--verbose"])
        XCTAssertEqual(configuration.plugins[0].environment, ["MODE": "test"])
        XCTAssertEqual(configuration.plugins[0].restart, "always")
        XCTAssertEqual(configuration.plugins[0].line, 8)
    }

    func testUnknownKeyNamesFileLineAndSuggestsTheRightOne() {
        assertError("name: x\nbus:\n  heartbeatMS: 5\n", line: 3, key: "bus.heartbeatMS", contains: "did you mean 'heartbeatMs'")
    }

    func testWrongTypeNamesTheKey() {
        assertError("bus:\n  maxBodyBytes: lots\n", line: 2, key: "bus.maxBodyBytes", contains: "expected a whole number")
    }

    func testUnknownRoleListsTheRoles() {
        assertError("plugins:\n  - name: a\n    executable: x\n    role: wizard\n", line: 4, key: "plugins[0].role", contains: "expected one of monitor, shield")
    }

    func testDuplicatePluginNames() {
        assertError("plugins:\n  - {name: a, executable: x, role: monitor}\n  - {name: a, executable: y, role: shield}\n",
                    line: 3, key: "plugins[1].name", contains: "used twice")
    }

    /// What the broker sets at every launch is refused in an entry's `environment`, where it would be replaced without
    /// a word: the device's zone (`TZ`), the container's folders and the broker's own variables.
    func testAnEntryCannotSetWhatTheBrokerSetsAtEveryLaunch() {
        assertError("plugins:\n  - name: a\n    executable: x\n    role: monitor\n    environment:\n      MODE: test\n      TZ: Europe/Paris\n",
                    line: 7, key: "plugins[0].environment.TZ", contains: "the device's time zone in force")
        for key in ["HOME", "XDG_CACHE_HOME", "SHIELDBUS_CREDENTIAL", "SHIELDBUS_STATE_DIR"] {
            assertError("plugins:\n  - {name: a, executable: x, role: monitor, environment: {\(key): v}}\n",
                        line: 2, key: "plugins[0].environment.\(key)", contains: "set by the broker at every launch")
        }
        XCTAssertEqual(try parse("plugins:\n  - {name: a, executable: x, role: monitor, environment: {SHIELDBUS_LOG_LEVEL: debug}}\n").plugins[0].environment,
                       ["SHIELDBUS_LOG_LEVEL": "debug"], "the plugin's own settings stay the entry's to give")
    }

    func testPluginNamesFollowTheBusNameRule() {
        assertError("plugins:\n  - {name: Monitor, executable: x, role: monitor}\n", line: 2, key: "plugins[0].name", contains: "lowercase ASCII letters")
        assertError("plugins:\n  - {name: broker, executable: x, role: monitor}\n", line: 2, key: "plugins[0].name", contains: "reserved")
    }

    func testNamespacesAndOutsideClients() throws {
        let configuration = try parse("""
        plugins:
          - {name: coach, executable: x, role: generic, namespaces: [focuscoach]}
        clients:
          - {roles: [tap]}
          - {name: person, roles: [tool, generic], namespaces: [person-notes]}

        """)
        XCTAssertEqual(configuration.plugins[0].namespaces, ["focuscoach"])
        XCTAssertEqual(configuration.clients?.count, 2)
        XCTAssertEqual(configuration.clients?[1], .init(name: "person", roles: [.tool, .generic], namespaces: ["person-notes"]))
        XCTAssertNil(try parse("name: x\n").clients, "no clients: section means the defaults")
        assertError("plugins:\n  - {name: a, executable: x, role: generic, namespaces: [app]}\n", line: 2, key: "plugins[0].namespaces[0]", contains: "system's namespaces")
        assertError("plugins:\n  - {name: a, executable: x, role: generic, namespaces: [coach]}\n  - {name: b, executable: x, role: generic, namespaces: [coach]}\n",
                    line: 3, key: "plugins[1].namespaces[0]", contains: "declared twice")
        assertError("plugins:\n  - {name: a, executable: x, role: generic, namespaces: [a.b]}\n", line: 2, key: "plugins[0].namespaces[0]", contains: "one topic segment")
        assertError("clients:\n  - {roles: [wizard]}\n", line: 2, key: "clients[0].roles[0]", contains: "expected one of")
        assertError("clients:\n  - {roles: [generic], namespaces: [mine]}\n", line: 2, key: "clients[0].namespaces", contains: "only a client with a 'name'")
        assertError("clients:\n  - {name: Person, roles: [tool]}\n", line: 2, key: "clients[0].name", contains: "lowercase ASCII letters")
    }

    func testYAMLSyntaxErrorHasALine() {
        XCTAssertThrowsError(try parse("name: [unclosed\nbus: 1\n")) { error in
            XCTAssertTrue("\(error)".hasPrefix("test.yml:"), "\(error)")
            XCTAssertTrue("\(error)".contains("YAML"), "\(error)")
        }
    }

    func testSessionTimeoutMustExceedTwoHeartbeats() {
        assertError("bus:\n  heartbeatMs: 1000\n  sessionTimeoutMs: 1500\n", line: 3, key: "bus.sessionTimeoutMs", contains: "twice heartbeatMs")
    }

    func testTheShippedDefaultConfigurationIsValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        XCTAssertNoThrow(try ShieldBusConfiguration.load(path: root.appendingPathComponent("Config/default.yml").path))
    }
}
