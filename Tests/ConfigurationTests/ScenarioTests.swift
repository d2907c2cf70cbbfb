// Longer than 500 lines: the scenario format is one language (steps, times, expectations, zones), and its tests
// share one parser helper and one catalog; split by section, each file would repeat them.
import Configuration
import Foundation
import XCTest

final class ScenarioTests: XCTestCase {
    static let catalog: AppCatalog = try! AppCatalog.load(path: AppCatalogTests.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    func parse(_ text: String, defaultTimeZone: TimeZone = berlin) throws -> Scenario {
        try Scenario.parse(YAMLValue.parse(text, file: "day.yml"), catalog: Self.catalog, defaultTimeZone: defaultTimeZone)
    }

    /// A scenario starting at 2026-11-23 06:30 in Berlin (05:30 UTC) with these step lines; the first step is on line 4.
    func day(_ steps: String) -> String {
        "name: test\nstart: 2026-11-23T06:30\nsteps:\n" + steps
    }

    /// An instant given as UTC wall-clock text, `2026-11-23 05:30:00`.
    func utc(_ text: String) -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.date(from: text)!
    }

    func assertError(_ text: String, line: Int, key: String, message: String, file: StaticString = #filePath, testLine: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: testLine) { error in
            guard let error = error as? ConfigurationError else { return XCTFail("\(error)", file: file, line: testLine) }
            XCTAssertEqual(error.file, "day.yml", file: file, line: testLine)
            XCTAssertEqual(error.line, line, "\(error)", file: file, line: testLine)
            XCTAssertEqual(error.key, key, "\(error)", file: file, line: testLine)
            XCTAssertTrue(error.message.contains(message), "\(error)", file: file, line: testLine)
        }
    }

    // MARK: The document

    func testReadsTheHeader() throws {
        let scenario = try parse("""
        name: habit-lock-day
        description: A weekday with the habit lock.
        start: 2026-11-23T06:30:15
        timeZone: America/New_York
        profile: ios-realistic
        seed: 42
        end: day 2 01:00
        steps: []
        """)
        XCTAssertEqual(scenario.file, "day.yml")
        XCTAssertEqual(scenario.name, "habit-lock-day")
        XCTAssertEqual(scenario.description, "A weekday with the habit lock.")
        XCTAssertEqual(scenario.start, utc("2026-11-23 11:30:15"))
        XCTAssertEqual(scenario.timeZoneName, "America/New_York")
        XCTAssertEqual(scenario.timeZone?.identifier, "America/New_York")
        XCTAssertEqual(scenario.resolvedTimeZone.identifier, "America/New_York")
        XCTAssertEqual(scenario.profile, "ios-realistic")
        XCTAssertEqual(scenario.seed, 42)
        XCTAssertEqual(scenario.end, utc("2026-11-24 06:00:00"))
        XCTAssertEqual(scenario.steps, [])
    }

    func testOptionalFieldsDefault() throws {
        let scenario = try parse(day("  - {at: \"07:00\", home: true}\n"))
        XCTAssertNil(scenario.description)
        XCTAssertNil(scenario.timeZone)
        XCTAssertNil(scenario.timeZoneName)
        XCTAssertEqual(scenario.resolvedTimeZone, Self.berlin, "without timeZone, the configuration's zone resolves the times")
        XCTAssertNil(scenario.profile)
        XCTAssertNil(scenario.seed)
        XCTAssertEqual(scenario.start, utc("2026-11-23 05:30:00"))
        XCTAssertEqual(scenario.end, utc("2026-11-23 06:01:00"), "the default end is one minute after the last step")
        XCTAssertEqual(try parse("name: t\nstart: 2026-11-23T06:30\nsteps: []\n").end, utc("2026-11-23 05:31:00"))
        XCTAssertEqual(try parse(day("  - {at: \"07:00\", home: true}\n"), defaultTimeZone: TimeZone(identifier: "UTC")!).start,
                       utc("2026-11-23 06:30:00"))
    }

    func testHeaderMistakes() {
        assertError("start: 2026-11-23T06:30\nsteps: []\n", line: 1, key: "", message: "a scenario needs a 'name'")
        assertError("name: t\nsteps: []\n", line: 1, key: "", message: "a scenario needs a 'start'")
        assertError("name: t\nstart: 2026-11-23T06:30\n", line: 1, key: "", message: "a scenario needs 'steps'")
        assertError("name: t\nstart: 2026-11-23\nsteps: []\n", line: 2, key: "start", message: "expected a local date-time like 2026-11-23T06:30")
        assertError("name: t\nstart: 2026-02-30T06:30\nsteps: []\n", line: 2, key: "start", message: "got '2026-02-30T06:30'")
        assertError("name: t\nstart: 2026-11-23T24:00\nsteps: []\n", line: 2, key: "start", message: "expected a local date-time")
        assertError("name: t\nstart: 2026-11-23T06:30\ntimeZone: Europe/Berln\nsteps: []\n",
                    line: 3, key: "timeZone", message: "expected an IANA time zone name like Europe/Berlin, got 'Europe/Berln' — did you mean 'Europe/Berlin'?")
        assertError("name: t\nstart: 2026-11-23T06:30\nprofile: ios_realistic\nsteps: []\n",
                    line: 3, key: "profile", message: "expected one of faithful, ios-realistic, got 'ios_realistic' — did you mean 'ios-realistic'?")
        assertError("name: t\nstart: 2026-11-23T06:30\nios: 17.5\nsteps: []\n",
                    line: 3, key: "ios", message: "expected one of 17.5.1, 26.2-rc, 26.3.1, got '17.5' — did you mean '17.5.1'?")
        XCTAssertEqual(try parse("name: t\nstart: 2026-11-23T06:30\nios: \"26.3.1\"\nsteps: []\n").ios, .iOS26_3_1)
        assertError("name: t\nstart: 2026-11-23T06:30\nseed: -1\nsteps: []\n", line: 3, key: "seed", message: "expected a non-negative whole number, got '-1'")
        assertError("name: t\nstart: 2026-11-23T06:30\nseed: 1.5\nsteps: []\n", line: 3, key: "seed", message: "non-negative whole number")
        assertError("name: t\nstart: 2026-11-23T06:30\nsteps: []\nstepz: []\n", line: 4, key: "stepz", message: "unknown key — did you mean 'steps'?")
    }

    /// A current IANA name that tzdata keeps as a link, missing from `TimeZone.knownTimeZoneIdentifiers` (which lists
    /// the old Asia/Calcutta), is a zone; abbreviations and offsets are still refused.
    func testEveryIANANameTheSystemResolvesIsAZone() throws {
        let kolkata = try parse("name: t\nstart: 2026-11-23T06:30\ntimeZone: Asia/Kolkata\nsteps: []\n")
        XCTAssertEqual(kolkata.start, utc("2026-11-23 01:00:00"), "06:30 in India is 01:00 UTC")
        assertError("name: t\nstart: 2026-11-23T06:30\ntimeZone: CET\nsteps: []\n", line: 3, key: "timeZone", message: "expected an IANA time zone name")
        assertError("name: t\nstart: 2026-11-23T06:30\ntimeZone: Etc/GMT+1\nsteps: []\n", line: 3, key: "timeZone", message: "expected an IANA time zone name")
        assertError("name: t\nstart: 2026-11-23T06:30\ntimeZone: EST5EDT\nsteps: []\n", line: 3, key: "timeZone", message: "expected an IANA time zone name")
        assertError("name: t\nstart: 2026-11-23T06:30\ntimeZone: Factory\nsteps: []\n", line: 3, key: "timeZone", message: "expected an IANA time zone name")
        // Links without an area name a place too (`make zones` found scenarios of theirs refused).
        for (link, zone) in [("Cuba", "America/Havana"), ("NZ-CHAT", "Pacific/Chatham"), ("Egypt", "Africa/Cairo")] {
            let scenario = try parse("name: t\nstart: 2026-11-23T06:30\ntimeZone: \(link)\nsteps: []\n")
            XCTAssertEqual(TimeZone(identifier: zone)?.secondsFromGMT(for: scenario.start), TimeZone(identifier: link)?.secondsFromGMT(for: scenario.start), link)
        }
    }

    func testALargeSeedFitsInUInt64() throws {
        XCTAssertEqual(try parse("name: t\nstart: 2026-11-23T06:30\nseed: 18446744073709551615\nsteps: []\n").seed, UInt64.max)
    }

    // MARK: Actions

    func testEveryActionParses() throws {
        let scenario = try parse(day("""
          - {after: 0s, open: Instagram}
          - {after: 1m, open: com.zhiliaoapp.musically}
          - {after: 1m, close: instagram}
          - {after: 1m, close: }
          - {after: 1m, home: true}
          - {after: 1m, visit: {url: "https://www.Instagram.com/explore", tab: 2, private: true}}
          - {after: 1m, visit: "http://unknown-site.example/page"}
          - {after: 1m, closeTab: 2}
          - {after: 1m, press: primary}
          - {after: 1m, press: secondary}
          - {after: 1m, tapNotification: latest}
          - {after: 1m, tapNotification: n-42}
          - {after: 1m, tapNotification: }
          - {after: 1m, habit: "Read 10 pages"}
          - {after: 1m, authorize: approved}
          - {after: 1m, authorize: denied}
          - {after: 1m, authorize: revoked}
          - {after: 1m, osUpdate: true}
          - {after: 1m, restart: true}
          - {after: 1m, forceQuit: Habit Lock}
          - {after: 1m, publish: {topic: app.custom.thing, body: {k: v, b: 2, a: [1, 2.5, true, null, "7", ~], z: {y: x}}}}
          - {after: 1m, publish: {topic: app.custom.empty}}
          - {after: 1m, switchTab: 2}
          - {after: 1m, setClock: "+2h"}
          - {after: 1m, setClock: "-1h30m"}
          - {after: 1m, setClock: "2026-11-24T09:15"}
          - {after: 1m, timeZone: America/New_York}
          - {after: 1m, crashBroker: true}
          - {after: 1m, fillActivityLimit: true}
          - {after: 1m, appAction: skip-tonight}
          - {after: 1m, appAction: {app: Habit Lock, action: take-a-break}}

        """))
        let app = { (name: String) in Self.catalog.app(named: name)! }
        XCTAssertEqual(scenario.steps.map(\.action), [
            .open(app: app("Instagram")),
            .open(app: app("TikTok")),
            .close(app: app("Instagram")),
            .close(app: nil),
            .home,
            .visit(url: "https://www.Instagram.com/explore", host: "www.instagram.com", tab: 2, isPrivate: true),
            .visit(url: "http://unknown-site.example/page", host: "unknown-site.example", tab: 1, isPrivate: false),
            .closeTab(2),
            .press(button: .primary),
            .press(button: .secondary),
            .tapNotification(id: nil),
            .tapNotification(id: "n-42"),
            .tapNotification(id: nil),
            .habit("Read 10 pages"),
            .authorize(.approved),
            .authorize(.denied),
            .authorize(.revoked),
            .osUpdate,
            .restart,
            .forceQuit(app: app("dev.shieldbus.habitlock")),
            .publish(topic: "app.custom.thing", bodyJSON: #"{"a":[1,2.5,true,null,"7",null],"b":2,"k":"v","z":{"y":"x"}}"#),
            .publish(topic: "app.custom.empty", bodyJSON: "{}"),
            .switchTab(2),
            .setClock(.shift(seconds: 7200)),
            .setClock(.shift(seconds: -5400)),
            .setClock(.absolute(LocalDateTime(year: 2026, month: 11, day: 24, hour: 9, minute: 15)!)),
            .setTimeZone("America/New_York"),
            .crashBroker,
            .fillActivityLimit,
            .appAction(app: nil, action: "skip-tonight"),
            .appAction(app: app("dev.shieldbus.habitlock"), action: "take-a-break"),
        ])
        XCTAssertEqual(scenario.steps.map(\.line), Array(4...34))
        XCTAssertEqual(scenario.steps.map(\.action.key), [
            "open", "open", "close", "close", "home", "visit", "visit", "closeTab", "press", "press", "tapNotification",
            "tapNotification", "tapNotification", "habit", "authorize", "authorize", "authorize", "osUpdate", "restart",
            "forceQuit", "publish", "publish", "switchTab", "setClock", "setClock", "setClock", "timeZone", "crashBroker",
            "fillActivityLimit", "appAction", "appAction",
        ])
        XCTAssertEqual(Set(scenario.steps.map(\.action.key)), Set(ScenarioAction.keys), "every action is covered")
    }

    func testVisitsToUnknownHostsAreAllowedButHaveNoCategory() throws {
        let scenario = try parse(day("  - {at: \"07:00\", visit: \"https://blog.example.org/\"}\n  - {after: 1m, visit: \"https://m.tiktok.com/x\"}\n"))
        guard case .visit(_, let host, _, _) = scenario.steps[0].action, case .visit(_, let known, _, _) = scenario.steps[1].action else {
            return XCTFail("\(scenario.steps)")
        }
        XCTAssertEqual(host, "blog.example.org")
        XCTAssertNil(Self.catalog.domain(host))
        XCTAssertEqual(Self.catalog.domain(known)?.categoryID, "social")
    }

    func testTheBriefsExampleError() {
        let text = """
        name: t
        start: 2026-11-23T06:30
        timeZone: Europe/Berlin
        profile: faithful
        steps:
          - at: "07:05"
            open: Instagram
          - after: 10m
            close: Instagram
          - after: 1m
            home: true
          # a second try
          - at: "08:00"
            open: Instagarm
        """
        XCTAssertThrowsError(try parse(text)) { error in
            XCTAssertEqual("\(error)", "day.yml:14:11: steps[3].open: no app named 'Instagarm' in the catalog — did you mean 'Instagram'?")
        }
    }

    func testUnknownAppsAreRefusedWithASuggestion() {
        assertError(day("  - {at: \"07:00\", forceQuit: Habit Lok}\n"), line: 4, key: "steps[0].forceQuit",
                    message: "no app named 'Habit Lok' in the catalog — did you mean 'Habit Lock'?")
        assertError(day("  - {at: \"07:00\", close: Tiktak}\n"), line: 4, key: "steps[0].close", message: "did you mean 'TikTok'?")
        assertError(day("  - {at: \"07:00\", open: com.burbn.instagarm}\n"), line: 4, key: "steps[0].open", message: "did you mean 'com.burbn.instagram'?")
    }

    func testActionValueMistakes() {
        assertError(day("  - {at: \"07:00\", press: tertiary}\n"), line: 4, key: "steps[0].press", message: "expected one of primary, secondary, got 'tertiary'")
        assertError(day("  - {at: \"07:00\", authorize: aproved}\n"), line: 4, key: "steps[0].authorize", message: "did you mean 'approved'?")
        assertError(day("  - {at: \"07:00\", closeTab: 0}\n"), line: 4, key: "steps[0].closeTab", message: "tabs are numbered from 1")
        assertError(day("  - {at: \"07:00\", home: false}\n"), line: 4, key: "steps[0].home", message: "write 'true'")
        assertError(day("  - {at: \"07:00\", restart: maybe}\n"), line: 4, key: "steps[0].restart", message: "expected true or false")
        assertError(day("  - {at: \"07:00\", habit: \" \"}\n"), line: 4, key: "steps[0].habit", message: "expected the habit completed")
        assertError(day("  - {at: \"07:00\", visit: {url: \"https://x.com\", tab: -1}}\n"), line: 4, key: "steps[0].visit.tab", message: "numbered from 1")
        assertError(day("  - {at: \"07:00\", visit: {url: \"https://x.com\", privat: true}}\n"), line: 4, key: "steps[0].visit.privat",
                    message: "did you mean 'private'?")
        assertError(day("  - {at: \"07:00\", visit: {tab: 1}}\n"), line: 4, key: "steps[0].visit", message: "a visit needs a 'url'")
    }

    func testBadURLs() {
        assertError(day("  - {at: \"07:00\", visit: \"instagram.com\"}\n"), line: 4, key: "steps[0].visit",
                    message: "a visit URL starts with http:// or https://, got 'instagram.com' (e.g. https://instagram.com)")
        assertError(day("  - {at: \"07:00\", visit: \"ftp://files.example.com/a\"}\n"), line: 4, key: "steps[0].visit", message: "starts with http:// or https://")
        assertError(day("  - {at: \"07:00\", visit: {url: \"https://\"}}\n"), line: 4, key: "steps[0].visit.url", message: "has no host")
        assertError(day("  - {at: \"07:00\", visit: \"https://bad_host.example/\"}\n"), line: 4, key: "steps[0].visit",
                    message: "the URL's host 'bad_host.example' is not a valid hostname")
        assertError(day("  - {at: \"07:00\", visit: \"https://exa mple.com/\"}\n"), line: 4, key: "steps[0].visit", message: "is not a valid URL")
    }

    func testBadPublishes() {
        assertError(day("  - {at: \"07:00\", publish: {topic: App.Thing}}\n"), line: 4, key: "steps[0].publish.topic",
                    message: "topic 'App.Thing' segments may contain only a-z, 0-9, '_' and '-'")
        assertError(day("  - {at: \"07:00\", publish: {topic: custom.thing}}\n"), line: 4, key: "steps[0].publish.topic",
                    message: "topic 'custom.thing' is in no known namespace")
        assertError(day("  - {at: \"07:00\", publish: {topic: app..thing}}\n"), line: 4, key: "steps[0].publish.topic", message: "empty segment")
        assertError(day("  - {at: \"07:00\", publish: {topic: clock.tick}}\n"), line: 4, key: "steps[0].publish.topic", message: "reserved for the broker")
        assertError(day("  - {at: \"07:00\", publish: {topic: app.x, body: [1]}}\n"), line: 4, key: "steps[0].publish.body", message: "the body is a mapping")
        assertError(day("  - {at: \"07:00\", publish: {topic: app.x, body: {n: .inf}}}\n"), line: 4, key: "steps[0].publish.body.n", message: "no infinite or NaN")
        assertError(day("  - {at: \"07:00\", publish: {topic: app.x, body: {n: 99999999999999999999}}}\n"), line: 4, key: "steps[0].publish.body.n",
                    message: "does not fit in 64 bits")
        assertError(day("  - {at: \"07:00\", publish: {topic: app.x, body: {k: 1, k: 2}}}\n"), line: 4, key: "steps[0].publish.body.k",
                    message: "the key is written twice in this mapping (first on line 4)")
        assertError(day("  - {at: \"07:00\", publish: {body: {}}}\n"), line: 4, key: "steps[0].publish", message: "a publish needs a 'topic'")
        assertError(day("  - {at: \"07:00\", publish: app.x}\n"), line: 4, key: "steps[0].publish", message: "expected a mapping")
    }

    // MARK: Step structure

    func testUnknownStepKeyIsRefusedWithASuggestion() {
        assertError(day("  - at: \"07:00\"\n    opne: Instagram\n"), line: 5, key: "steps[0].opne", message: "unknown key — did you mean 'open'?")
        assertError(day("  - at: \"07:00\"\n    tapNotifcation: latest\n"), line: 5, key: "steps[0].tapNotifcation", message: "did you mean 'tapNotification'?")
    }

    func testAStepNeedsATime() {
        assertError(day("  - {at: \"07:00\", home: true}\n  - open: Instagram\n"), line: 5, key: "steps[1]", message: "a step needs a time: 'at'")
    }

    func testAStepHasOneTime() {
        assertError(day("  - at: \"07:00\"\n    after: 5m\n    home: true\n"), line: 5, key: "steps[0].after", message: "'at' or 'after', not both")
    }

    func testAKeyWrittenTwiceIsRefused() {
        assertError(day("  - at: \"07:00\"\n    at: \"08:00\"\n    home: true\n"), line: 5, key: "steps[0].at",
                    message: "the key is written twice in this mapping (first on line 4)")
        assertError("name: t\nstart: 2026-11-23T06:30\nname: u\nsteps: []\n", line: 3, key: "name", message: "written twice")
    }

    func testAStepNeedsAnAction() {
        assertError(day("  - at: \"07:00\"\n"), line: 4, key: "steps[0]", message: "a step needs one action: open, close, home,")
    }

    func testTwoActionsInOneStepNameTheSecond() {
        assertError(day("  - at: \"07:00\"\n    open: Instagram\n    close: TikTok\n"), line: 6, key: "steps[0].close",
                    message: "a step has exactly one action and this one already has 'open'; give 'close' a step of its own")
        // The file order decides which one is "second", not the order of the keys in the documentation.
        assertError(day("  - at: \"07:00\"\n    close: TikTok\n    open: Instagram\n"), line: 6, key: "steps[0].open",
                    message: "already has 'close'")
    }

    func testStepsAreAListOfMappings() {
        assertError("name: t\nstart: 2026-11-23T06:30\nsteps: {open: Instagram}\n", line: 3, key: "steps", message: "expected a list")
        assertError(day("  - open Instagram\n"), line: 4, key: "steps[0]", message: "expected a mapping")
    }

    // MARK: Times

    func testTimeForms() throws {
        let scenario = try parse(day("""
          - {after: 90s, home: true}
          - {at: "07:05", home: true}
          - {at: "7:06:30", home: true}
          - {at: "day 1 08:00", home: true}
          - {at: "day 2 07:30", home: true}
          - {at: "2026-11-24T08:00", home: true}
          - {at: "2026-11-24 08:00:05", home: true}
          - {at: "DAY 3 00:00", home: true}
          - {at: "day 10 23:59:59", home: true}

        """))
        XCTAssertEqual(scenario.steps.map(\.time), [
            utc("2026-11-23 05:31:30"),   // after: relative to start for the first step
            utc("2026-11-23 06:05:00"),
            utc("2026-11-23 06:06:30"),
            utc("2026-11-23 07:00:00"),
            utc("2026-11-24 06:30:00"),
            utc("2026-11-24 07:00:00"),
            utc("2026-11-24 07:00:05"),
            utc("2026-11-24 23:00:00"),   // day 3 starts at midnight local time
            utc("2026-12-02 22:59:59"),   // day 10 crosses into December
        ])
    }

    func testDurations() throws {
        let scenario = try parse(day("""
          - {after: 0s, home: true}
          - {after: 90s, home: true}
          - {after: 10m, home: true}
          - {after: 2h, home: true}
          - {after: 1h30m, home: true}
          - {after: 1h0m15s, home: true}
          - {after: 1m30s, home: true}
          - {after: 25h, home: true}

        """))
        let start = scenario.start
        XCTAssertEqual(scenario.steps.map { $0.time.timeIntervalSince(start) },
                       [0, 90, 690, 7890, 13290, 16905, 16995, 106_995])
        for bad in ["10", "1m1h", "10 m", "1.5h", "m", "1h1h", "10M", "-5m", "\"\""] {
            assertError(day("  - {after: \(bad), home: true}\n"), line: 4, key: "steps[0].after", message: "expected a duration like 90s, 10m, 2h or 1h30m")
        }
    }

    func testBadTimes() {
        for bad in ["\"25:00\"", "\"7\"", "\"07:5\"", "tomorrow", "\"2026-11-24T08\"", "\"day 2\""] {
            assertError(day("  - {at: \(bad), home: true}\n"), line: 4, key: "steps[0].at", message: "expected a time: HH:MM[:SS] on the start day")
        }
        assertError(day("  - {at: \"day 0 07:00\", home: true}\n"), line: 4, key: "steps[0].at", message: "the day is a number counting from 1 (the start day), got '0'")
        assertError(day("  - {at: \"day two 07:00\", home: true}\n"), line: 4, key: "steps[0].at", message: "counting from 1 (the start day), got 'two'")
    }

    func testStepsMustNotGoBackInTime() {
        assertError(day("  - {at: \"07:05\", home: true}\n  - {at: \"07:00\", home: true}\n"), line: 5, key: "steps[1].at",
                    message: "2026-11-23 07:00 +01:00 is before the previous step's (line 4) 2026-11-23 07:05 +01:00; steps must not go back in time")
        assertError(day("  - {at: \"06:00\", home: true}\n"), line: 4, key: "steps[0].at",
                    message: "2026-11-23 06:00 +01:00 is before the start, 2026-11-23 06:30 +01:00")
        assertError(day("  - {at: \"day 2 07:00\", home: true}\n  - {at: \"2026-11-24T06:59:59\", home: true}\n"), line: 5, key: "steps[1].at",
                    message: "2026-11-24 06:59:59 +01:00 is before the previous step's (line 4) 2026-11-24 07:00 +01:00")
    }

    func testStepsAtTheSameInstantAreAllowed() throws {
        let scenario = try parse(day("  - {at: \"07:00\", open: Instagram}\n  - {at: \"07:00\", press: primary}\n  - {after: 0s, home: true}\n"))
        XCTAssertEqual(Set(scenario.steps.map(\.time)), [utc("2026-11-23 06:00:00")])
    }

    func testEnd() throws {
        XCTAssertEqual(try parse(day("  - {at: \"07:00\", home: true}\nend: \"23:00\"\n")).end, utc("2026-11-23 22:00:00"))
        XCTAssertEqual(try parse(day("  - {at: \"07:00\", home: true}\nend: day 2 01:00\n")).end, utc("2026-11-24 00:00:00"))
        XCTAssertEqual(try parse(day("  - {at: \"07:00\", home: true}\nend: \"07:00\"\n")).end, utc("2026-11-23 06:00:00"))
        assertError(day("  - {at: \"07:00\", home: true}\nend: \"06:59\"\n"), line: 5, key: "end",
                    message: "the end, 2026-11-23 06:59 +01:00, is before the last step's time (line 4), 2026-11-23 07:00 +01:00")
        assertError("name: t\nstart: 2026-11-23T06:30\nend: \"06:00\"\nsteps: []\n", line: 3, key: "end", message: "is before the start")
        assertError(day("  - {at: \"07:00\", home: true}\nend: soon\n"), line: 5, key: "end", message: "expected a time")
    }

    // MARK: Daylight saving (Europe/Berlin, 2026: clocks go 02:00 → 03:00 on 29 March and 03:00 → 02:00 on 25 October)

    func testSpringForwardResolvesASkippedTimeToTheFirstValidInstantAfterIt() throws {
        let scenario = try parse("""
        name: spring
        start: 2026-03-29T01:30
        timeZone: Europe/Berlin
        steps:
          - {at: "01:59:59", home: true}
          - {at: "02:00", home: true}
          - {at: "02:30", home: true}
          - {at: "03:00", home: true}
          - {at: "03:30", home: true}
          - {after: 1h, home: true}
        """)
        XCTAssertEqual(scenario.start, utc("2026-03-29 00:30:00"))
        XCTAssertEqual(scenario.steps.map(\.time), [
            utc("2026-03-29 00:59:59"),   // 01:59:59 CET
            utc("2026-03-29 01:00:00"),   // 02:00 does not exist: the change itself, 03:00 CEST
            utc("2026-03-29 01:00:00"),   // 02:30 does not exist either
            utc("2026-03-29 01:00:00"),   // 03:00 CEST
            utc("2026-03-29 01:30:00"),
            utc("2026-03-29 02:30:00"),   // durations are elapsed time: 04:30 CEST
        ])
        // Elapsed time across the change: one real hour from 01:30 CET is 03:30 CEST.
        let across = try parse("name: s\nstart: 2026-03-29T01:30\nsteps:\n  - {after: 1h, home: true}\n")
        XCTAssertEqual(LocalDateTime.describe(across.steps[0].time, in: Self.berlin), "2026-03-29 03:30 +02:00")
    }

    func testFallBackResolvesARepeatedTimeToItsFirstOccurrence() throws {
        let scenario = try parse("""
        name: autumn
        start: 2026-10-25T01:00
        timeZone: Europe/Berlin
        steps:
          - {at: "02:00", home: true}
          - {at: "02:30", home: true}
          - {after: 1h, home: true}
          - {at: "03:00", home: true}
        """)
        XCTAssertEqual(scenario.start, utc("2026-10-24 23:00:00"))
        XCTAssertEqual(scenario.steps.map(\.time), [
            utc("2026-10-25 00:00:00"),   // 02:00 CEST, the first of the two 02:00s
            utc("2026-10-25 00:30:00"),   // 02:30 CEST
            utc("2026-10-25 01:30:00"),   // an hour later it is 02:30 again, CET
            utc("2026-10-25 02:00:00"),   // 03:00 CET
        ])
        XCTAssertEqual(scenario.steps.map { LocalDateTime.describe($0.time, in: Self.berlin) },
                       ["2026-10-25 02:00 +02:00", "2026-10-25 02:30 +02:00", "2026-10-25 02:30 +01:00", "2026-10-25 03:00 +01:00"])
        // After the second 02:30, "02:45" names the first occurrence, which is in the past: refused, and the
        // message's offsets tell the two apart.
        assertError("""
        name: autumn
        start: 2026-10-25T01:00
        steps:
          - {at: "02:30", home: true}
          - {after: 1h, home: true}
          - {at: "02:45", home: true}
        """, line: 6, key: "steps[2].at",
                    message: "2026-10-25 02:45 +02:00 is before the previous step's (line 5) 2026-10-25 02:30 +01:00")
    }

    func testSecondNamesTheRepeatedOccurrenceOfAFallBackHour() throws {
        let scenario = try parse("""
        name: autumn
        start: 2026-10-25T01:00
        timeZone: Europe/Berlin
        steps:
          - {at: "02:30", home: true}
          - {at: "02:30 second", home: true}
          - {at: "day 1 02:45 second", home: true}
        expect:
          - {at: "02:50 second", usable: Instagram}
        """)
        XCTAssertEqual(scenario.steps.map(\.time), [utc("2026-10-25 00:30:00"), utc("2026-10-25 01:30:00"), utc("2026-10-25 01:45:00")])
        XCTAssertEqual(scenario.expectations.map(\.claim), [.usable(target: "Instagram", at: utc("2026-10-25 01:50:00"))])
        // Any generated repeated time: its second occurrence is one hour after its first (Berlin falls back by one hour).
        let zone = Self.berlin
        for minute in stride(from: 0, to: 60, by: 7) {
            let local = LocalDateTime(year: 2026, month: 10, day: 25, hour: 2, minute: minute)!
            XCTAssertEqual(local.resolveSecondOccurrence(in: zone)?.timeIntervalSince(local.resolve(in: zone)), 3600, "\(local)")
        }
        // Times that happen once have no second occurrence, on that day and on every other day of the year.
        var day = LocalDateTime(year: 2026, month: 1, day: 1, hour: 2, minute: 30)!
        for _ in 0..<365 where !(day.month == 10 && day.day == 25) {
            XCTAssertNil(day.resolveSecondOccurrence(in: zone), "\(day)")
            day = day.addingDays(1)
        }
        XCTAssertNil(LocalDateTime(year: 2026, month: 10, day: 25, hour: 3, minute: 30)!.resolveSecondOccurrence(in: zone))
        assertError("name: t\nstart: 2026-11-23T06:30\nsteps:\n  - {at: \"07:00 second\", home: true}\n", line: 4, key: "steps[0].at",
                    message: "2026-11-23 07:00 happens only once in Europe/Berlin")
    }

    func testNewActionMistakesNameTheirLineAndKey() {
        assertError(day("  - {after: 1m, setClock: \"2h\"}\n"), line: 4, key: "steps[0].setClock", message: "expected a signed duration (+2h, -30m) or a local date-time")
        assertError(day("  - {after: 1m, setClock: \"+2 hours\"}\n"), line: 4, key: "steps[0].setClock", message: "expected a signed duration like +2h")
        assertError(day("  - {after: 1m, timeZone: Europe/Berln}\n"), line: 4, key: "steps[0].timeZone", message: "did you mean 'Europe/Berlin'?")
        assertError(day("  - {after: 1m, switchTab: 0}\n"), line: 4, key: "steps[0].switchTab", message: "tabs are numbered from 1")
        assertError(day("  - {after: 1m, crashBroker: false}\n"), line: 4, key: "steps[0].crashBroker", message: "write 'true'")
    }

    func testExpectations() throws {
        let scenario = try parse(day("""
          - {at: "07:00", open: Instagram}
        expect:
          - {at: "07:01", shielded: Instagram}
          - {at: "day 1 07:02", usable: instagram.com}
          - {key: isCurrentlyUnlocked, value: false}
          - {appGroup: group.x, key: habits.done, value: [Read, Walk]}
          - {notification: circle-nudge}
          - {notification: circle-nudge, at: "08:00"}

        """))
        XCTAssertEqual(scenario.expectations.map(\.line), Array(6...11))
        XCTAssertEqual(scenario.expectations.map(\.claim), [
            .shielded(target: "Instagram", at: utc("2026-11-23 06:01:00")),
            .usable(target: "instagram.com", at: utc("2026-11-23 06:02:00")),
            .appGroupValue(group: nil, key: "isCurrentlyUnlocked", valueJSON: "false"),
            .appGroupValue(group: "group.x", key: "habits.done", valueJSON: #"["Read","Walk"]"#),
            .notificationPosted(id: "circle-nudge", before: nil),
            .notificationPosted(id: "circle-nudge", before: utc("2026-11-23 07:00:00")),
        ])
        let expect = day("  - {at: \"07:00\", open: Instagram}\nexpect:\n")
        assertError(expect + "  - {shielded: Instagram}\n", line: 6, key: "expect[0]", message: "'shielded' needs 'at'")
        assertError(expect + "  - {at: \"07:01\", shielded: X, usable: X}\n", line: 6, key: "expect[0]", message: "either 'shielded' or 'usable'")
        assertError(expect + "  - {key: k}\n", line: 6, key: "expect[0]", message: "needs 'value'")
        assertError(expect + "  - {at: \"07:01\", key: k, value: 1}\n", line: 6, key: "expect[0].at", message: "checked at the end of the run")
        assertError(expect + "  - {at: \"07:01\"}\n", line: 6, key: "expect[0]", message: "an expectation needs one of")
        assertError(expect + "  - {at: \"07:01\", shieled: X}\n", line: 6, key: "expect[0].shieled", message: "did you mean 'shielded'?")
        assertError(expect + "  - {at: \"25:00\", usable: X}\n", line: 6, key: "expect[0].at", message: "expected a time")
    }

    func testEndAfterTheLastStep() throws {
        let scenario = try parse(day("  - {at: \"07:00\", home: true}\nend: after 1h30m\n"))
        XCTAssertEqual(scenario.end, utc("2026-11-23 07:30:00"))
        assertError(day("  - {at: \"07:00\", home: true}\nend: after soon\n"), line: 5, key: "end", message: "expected 'after' and a duration")
    }

    func testLocalDateTimeResolutionInOtherZones() {
        let newYork = TimeZone(identifier: "America/New_York")!
        // 2026-03-08 02:30 does not exist in New York (02:00 EST → 03:00 EDT at 07:00 UTC).
        XCTAssertEqual(LocalDateTime(year: 2026, month: 3, day: 8, hour: 2, minute: 30)!.resolve(in: newYork), utc("2026-03-08 07:00:00"))
        // 2026-11-01 01:30 happens twice; the first is EDT (05:30 UTC).
        XCTAssertEqual(LocalDateTime(year: 2026, month: 11, day: 1, hour: 1, minute: 30)!.resolve(in: newYork), utc("2026-11-01 05:30:00"))
        XCTAssertEqual(LocalDateTime(year: 2026, month: 6, day: 1, hour: 12)!.resolve(in: TimeZone(identifier: "UTC")!), utc("2026-06-01 12:00:00"))
        XCTAssertNil(LocalDateTime(year: 2026, month: 2, day: 29))
        XCTAssertNotNil(LocalDateTime(year: 2028, month: 2, day: 29))
        XCTAssertEqual(LocalDateTime(year: 2026, month: 12, day: 31, hour: 8)!.addingDays(1).description, "2027-01-01 08:00")
    }

    // MARK: The shipped scenarios

    func testTheShippedScenariosParseWithTheDefaultCatalog() throws {
        let folder = AppCatalogTests.repositoryRoot.appendingPathComponent("Config/scenarios")
        for (name, steps) in [("habit-lock-day", 20), ("focus-window-day", 20), ("speed-bump-day", 15)] {
            let scenario = try Scenario.load(path: folder.appendingPathComponent("\(name).yml").path, catalog: Self.catalog,
                                             defaultTimeZone: TimeZone(identifier: "UTC")!)
            XCTAssertEqual(scenario.name, name)
            XCTAssertEqual(scenario.timeZoneName, "Europe/Berlin")
            XCTAssertEqual(scenario.profile, "faithful")
            XCTAssertNotNil(scenario.description)
            XCTAssertGreaterThanOrEqual(scenario.steps.count, steps, name)
            XCTAssertEqual(scenario.steps.map(\.time), scenario.steps.map(\.time).sorted(), name)
            XCTAssertGreaterThanOrEqual(scenario.end, scenario.steps.last!.time, name)
        }
        let speedBump = try Scenario.load(path: folder.appendingPathComponent("speed-bump-day.yml").path, catalog: Self.catalog,
                                          defaultTimeZone: Self.berlin)
        let actions = speedBump.steps.map(\.action)
        XCTAssertTrue(actions.contains(.osUpdate))
        XCTAssertTrue(actions.contains(.tapNotification(id: nil)))
        XCTAssertTrue(actions.contains(.press(button: .primary)))
        let focus = try Scenario.load(path: folder.appendingPathComponent("focus-window-day.yml").path, catalog: Self.catalog,
                                      defaultTimeZone: Self.berlin)
        XCTAssertTrue(focus.steps.map(\.action).contains(.press(button: .secondary)))
    }
}
