import BusProtocol
import Configuration
import Foundation
import LockInvariant
import ShieldBusTestSupport
import XCTest

/// One scenario per lesson of the seeds: each breaks a deliberately naive plugin (the lock-invariant checker
/// reports which app was usable, when, and for how long) and does not break the reference plugins — under
/// both fidelity profiles.
final class LessonTests: XCTestCase {
    enum Profile: String, CaseIterable { case faithful, iosRealistic = "ios-realistic" }

    struct Lesson {
        var product = "habit-lock"
        var options = ""
        /// The naive variant: its flaw, and which plugins it replaces.
        var flaw: String
        var naiveRoles: Set<String> = ["monitor", "shield", "action", "app"]
        /// The profiles under which the naive variant must break.
        var breaksUnder: Set<Profile> = Set(Profile.allCases)
        /// The target a violation must name.
        var victim = "Instagram"
        var extraPlugins = ""
        var seed = 7
        var steps: String

        /// What the lesson's product promises, in the terms its plugin options give.
        var promise: String {
            func option(_ key: String, _ fallback: Int) -> Int {
                guard let range = options.range(of: key + ": ") else { return fallback }
                return Int(options[range.upperBound...].prefix { $0.isNumber }) ?? fallback
            }
            switch product {
            case "speed-bump":
                return "{locked: {dailyUse: {minutes: \(option("thresholdMinutes", 30)), dismiss: primary, cooldownMinutes: \(option("cooldownMinutes", 15))}}}"
            case "focus-window":
                return #"{locked: {windows: [{start: "09:00", end: "12:00"}]}, passes: [{button: secondary, minutes: 5, targets: apps}]}"#
            default:
                return "{locked: always, unlocks: [{habits: 3, minutes: \(option("unlockMinutes", 30))}]}"
            }
        }
    }

    static let roles: [(name: String, executable: String)] = [("monitor", "activity-monitor"), ("shield", "shield-renderer"), ("action", "action-delegate"), ("app", "companion-app")]

    static func configuration(_ lesson: Lesson, naive: Bool) -> String {
        let companion = ["habit-lock": "Habit Lock", "focus-window": "Focus Window", "speed-bump": "Speed Bump"][lesson.product]!
        let group = "group.test.\(lesson.product)"
        var text = """
        name: lesson
        timeZone: Europe/Berlin
        seed: \(lesson.seed)
        bus: {ackTimeoutMs: 2000}
        promise: \(lesson.promise)
        device:
          companionApp: \(companion)
          companionPlugin: app
          managedSettingsOwner: monitor
          selection: {apps: [Instagram, TikTok], categories: [games], domains: [instagram.com]}
        appGroups:
          - name: \(group)
            slices:
              app: [isCurrentlyUnlocked, quotaEndTimestamp, "globalSerialized*", "habits.*"]
              shield: [lastShieldDayCheck]
              action: [passUntil, passApplication, "graceTally.*", "nudge.*"]
              monitor: ["monitor.*"]
        plugins:

        """
        for role in Self.roles {
            let isNaive = naive && lesson.naiveRoles.contains(role.name)
            let executable = BuildProducts.path(isNaive ? "naive-plugin" : role.executable)
            text += "  - name: \(role.name)\n    executable: \(executable)\n    role: \(role.name == "app" ? "app" : role.name)\n"
            if isNaive { text += "    arguments: [\(role.name)]\n    environment: {NAIVE_FLAW: \(lesson.flaw)}\n" }
            text += "    options: {product: \(lesson.product), appGroup: \(group)\(lesson.options)}\n"
        }
        return text + lesson.extraPlugins
    }

    func violations(_ lesson: Lesson, profile: Profile, naive: Bool, file: StaticString = #filePath, line: UInt = #line) throws -> [LockViolation] {
        let config = Self.configuration(lesson, naive: naive)
        let scenario = "name: lesson\nstart: 2026-11-23T08:00\nsteps:\n" + lesson.steps
        let run = try ScenarioRun.run(configuration: config, scenario: scenario, arguments: ["--profile", profile.rawValue], file: file, line: line)
        XCTAssertTrue(run.exitStatus == 0 || run.exitStatus == 3, "the run failed: \(run.errors)", file: file, line: line)
        let configuration = try ShieldBusConfiguration.parse(YAMLValue.parse(config, file: "lesson.yml"))
        let catalog = try AppCatalog.load(path: BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path)
        let verdicts = try LockInvariantChecker(configuration: configuration, catalog: catalog).verdicts(for: run.journal)
        XCTAssertEqual(verdicts.map(\.product), [lesson.product], file: file, line: line)
        let found = verdicts.flatMap(\.violations)
        if !naive {
            // A reference run is a healthy run too: no plugin stopped answering, none was missing, no default shield.
            let degraded = run.events("bus.error").compactMap { $0.bodyValue["code"]?.stringValue }
                .filter { ["ack-timeout", "startup-timeout", "gap", "delivery-dropped"].contains($0) }
            XCTAssertEqual(degraded, [], "the reference run under \(profile.rawValue) was degraded", file: file, line: line)
            XCTAssertFalse(run.events("shield.shown").contains { $0.bodyValue["renderedBy"]?.stringValue == "system" },
                           "the reference run under \(profile.rawValue) fell back to the system shield", file: file, line: line)
        }
        // The summary the command prints agrees with the in-process check.
        XCTAssertEqual(run.exitStatus == 3, !found.isEmpty, "exit \(run.exitStatus) vs \(found); the run said: \(run.errors.suffix(1500))", file: file, line: line)
        return found
    }

    /// The naive variant breaks (under the profiles the seed's bug needs) and the reference plugins do not.
    func prove(_ lesson: Lesson, file: StaticString = #filePath, line: UInt = #line) throws {
        for profile in Profile.allCases {
            let reference = try violations(lesson, profile: profile, naive: false, file: file, line: line)
            XCTAssertEqual(reference.map(\.description), [], "the reference plugins broke the invariant under \(profile.rawValue)", file: file, line: line)
            let naive = try violations(lesson, profile: profile, naive: true, file: file, line: line)
            if lesson.breaksUnder.contains(profile) {
                XCTAssertTrue(naive.contains { $0.target == lesson.victim }, "the naive '\(lesson.flaw)' variant should break under \(profile.rawValue); violations: \(naive)", file: file, line: line)
            }
        }
    }

    /// The habits done at 08:56: an unlock from 08:56 for the lesson's minutes.
    static let habitsDone = """
      - at: "08:55"
        open: Habit Lock
      - at: "08:56"
        habit: Read
      - after: 0s
        habit: Walk
      - after: 0s
        habit: Stretch

    """

    // Lesson 1: one mechanism is never enough.
    static let forceQuitDuringAnUnlock = Lesson(flaw: "app-timer-only", steps: habitsDone + """
      - at: "08:57"
        forceQuit: Habit Lock
      - at: "09:40"
        open: Instagram
      - at: "09:50"
        home: true

    """)

    func testLesson1ForceQuitDuringAnUnlock() throws {
        try prove(Self.forceQuitDuringAnUnlock)
    }

    func testLesson1DeviceRestartDuringAnUnlock() throws {
        try prove(Lesson(flaw: "app-timer-only", steps: Self.habitsDone + """
          - at: "08:57"
            restart: true
          - at: "09:40"
            open: Instagram
          - at: "09:50"
            home: true

        """))
    }

    func testLesson1TheAppIgnoredForTwelveHours() throws {
        try prove(Lesson(flaw: "foreground-only", steps: Self.habitsDone + """
          - at: "08:57"
            home: true
          - at: "21:00"
            open: Instagram
          - at: "21:10"
            home: true

        """))
    }

    // Lesson 2: schedules far ahead are unreliable (ios-realistic).
    func testLesson2AnUnlockLongerThanFortyFiveMinutes() throws {
        try prove(Lesson(options: ", unlockMinutes: 90", flaw: "one-far-check", breaksUnder: [.iosRealistic], seed: LessonTests.unluckySeed, steps: Self.habitsDone + """
          - at: "08:57"
            home: true
          - at: "10:40"
            open: Instagram
          - at: "10:50"
            home: true

        """))
    }

    /// A seed under which the naive plugin's one far-ahead check fires late, early or never.
    static let unluckySeed = 1

    func testLesson2TwoRecheckSchedulesUnderOneName() throws {
        try prove(Lesson(options: ", unlockMinutes: 40", flaw: "single-slot-name", steps: Self.habitsDone + """
          - at: "08:57"
            home: true
          - at: "09:38"
            open: Instagram
          - at: "09:45"
            home: true

        """))
    }

    // Lesson 3: startMonitoring ends the running interval (the 1 AM bug; ios-realistic).
    func testLesson3StartMonitoringToChainACheckDuringAnUnlock() throws {
        try prove(Lesson(options: ", unlockMinutes: 60", flaw: "unguarded-interval-end", naiveRoles: ["monitor"], breaksUnder: [.iosRealistic], steps: Self.habitsDone + """
          - at: "08:57"
            home: true
          - at: "09:05"
            open: Instagram
          - at: "09:40"
            home: true

        """))
    }

    // Lesson 4: a token set that does not decode is never "repaired" by writing it back empty.
    func testLesson4StoredTokensThatFailToDecode() throws {
        try prove(Lesson(flaw: "write-back-empty", naiveRoles: ["app", "monitor", "shield"],
                         extraPlugins: "  - {name: corrupter, executable: \(BuildProducts.path("state-corrupter")), role: generic, arguments: [group.test.habit-lock]}\n",
                         steps: Self.habitsDone + """
          - at: "08:57"
            home: true
          - at: "09:05"
            publish: {topic: app.test.corrupt-tokens}
          - at: "09:10"
            open: Habit Lock
          - at: "09:12"
            home: true
          - at: "09:40"
            open: Instagram
          - at: "09:50"
            home: true

        """))
    }

    // Lesson 5: apps, categories AND web domains.
    func testLesson5OnlyAppsShieldedAndTheBrowserGetsThrough() throws {
        try prove(Lesson(flaw: "apps-only", victim: "instagram.com", steps: Self.habitsDone + """
          - at: "08:57"
            home: true
          - at: "09:40"
            visit: https://www.instagram.com/explore/
          - at: "09:50"
            home: true

        """))
    }

    // Lesson 6: the stale flag (ios-realistic: the app's timer stops in the background).
    func testLesson6TheStaleFlagAfterTheAppWasBackgrounded() throws {
        try prove(Lesson(flaw: "flag-only", breaksUnder: [.iosRealistic], steps: Self.habitsDone + """
          - at: "08:57"
            home: true
          - at: "09:40"
            open: Instagram
          - at: "09:50"
            home: true

        """))
    }

    // Lesson 8: minute versus second precision.
    func testLesson8AnExpiryAt103045CheckedAt1030() throws {
        try prove(Lesson(options: ", unlockMinutes: 45", flaw: "no-buffer", steps: """
          - at: "09:45"
            open: Habit Lock
          - at: "09:45:45"
            habit: Read
          - after: 0s
            habit: Walk
          - after: 0s
            habit: Stretch
          - at: "09:46"
            home: true
          - at: "10:40"
            open: Instagram
          - at: "10:50"
            home: true

        """))
    }

    // Lesson 9: an async re-block is suspended with the app (ios-realistic).
    func testLesson9TheAppSuspendedInTheMiddleOfAnAsyncReblock() throws {
        try prove(Lesson(flaw: "async-reblock", breaksUnder: [.iosRealistic], steps: Self.habitsDone + """
          - at: "09:25"
            open: Habit Lock
          - at: "09:26:01"
            open: Instagram
          - at: "09:40"
            home: true

        """))
    }

    // Lesson 7: the synchronous check comes first on foreground (ios-realistic).
    func testLesson7TheFirstThingOnForegroundIsTheReblockCheck() throws {
        try prove(Lesson(flaw: "foreground-late-check", breaksUnder: [.iosRealistic], steps: Self.habitsDone + """
          - at: "08:57"
            home: true
          - at: "12:00"
            open: Habit Lock
          - at: "12:00:01"
            open: Instagram
          - at: "12:10"
            home: true

        """))
    }

    // Tether: tokens regenerate on an OS update; the dismiss uses the token the system hands over.
    func testTokensRegeneratedThenASpeedBumpDismiss() throws {
        try prove(Lesson(product: "speed-bump", options: ", thresholdMinutes: 20, cooldownMinutes: 15", flaw: "saved-token-unblock", naiveRoles: ["action"], steps: """
          - at: "08:05"
            osUpdate: true
          - at: "08:10"
            open: Instagram
          - at: "08:31"
            press: primary
          - at: "08:35"
            home: true
          - at: "08:36"
            open: Instagram
          - at: "08:40"
            home: true

        """))
    }

    // The Rork focus app: a grace pass ends on time.
    func testAGracePassEndsOnTime() throws {
        try prove(Lesson(product: "focus-window", options: #", passMinutes: 5, focusHours: [{start: "09:00", end: "12:00"}]"#, flaw: "pass-no-recheck", naiveRoles: ["monitor", "shield"], steps: """
          - at: "09:30"
            open: Instagram
          - at: "09:30:10"
            press: secondary
          - at: "09:50"
            home: true

        """))
    }
}

/// `shieldbus check` on journals of real runs: each product's verdict in words and as JSON, exit 3 when broken.
final class CheckCommandTests: XCTestCase {
    func check(_ configuration: String, _ run: ScenarioRun, json: Bool) throws -> (status: Int32, output: String) {
        let work = TemporaryDirectory(prefix: "sbc")
        let configPath = work.file("config.yml"), journalPath = work.file("journal.jsonl"), outputPath = work.file("out")
        let catalog = BuildProducts.repositoryRoot.appendingPathComponent("Config/catalog.yml").path
        try (configuration + "\ncatalog: \(catalog)\n").write(toFile: configPath, atomically: true, encoding: .utf8)
        try run.journalBytes.write(to: URL(fileURLWithPath: journalPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        process.arguments = ["check", "--config", configPath, journalPath] + (json ? ["--json"] : [])
        try process.run(outputTo: outputPath, errorsTo: nil)
        process.waitUntilExit()
        return (process.terminationStatus, try String(contentsOfFile: outputPath, encoding: .utf8))
    }

    func testCheckGivesTheVerdictOfARealRunInWordsAndAsJSON() throws {
        let lesson = LessonTests.forceQuitDuringAnUnlock
        let scenario = "name: lesson\nstart: 2026-11-23T08:00\nsteps:\n" + lesson.steps
        for naive in [false, true] {
            let configuration = LessonTests.configuration(lesson, naive: naive)
            let run = try ScenarioRun.run(configuration: configuration, scenario: scenario)
            XCTAssertEqual(run.exitStatus, naive ? 3 : 0, run.errors)
            XCTAssertTrue(run.errors.contains(naive ? "lock invariant    BROKEN (habit-lock): 1 violation(s)" : "lock invariant    held (habit-lock)"), run.errors)
            let text = try check(configuration, run, json: false)
            XCTAssertEqual(text.status, naive ? 3 : 0)
            let json = try check(configuration, run, json: true)
            XCTAssertEqual(json.status, naive ? 3 : 0)
            let verdict = try JSONValue(parsing: Array(json.output.utf8))
            XCTAssertEqual(verdict["held"]?.boolValue, !naive, json.output)
            XCTAssertEqual(verdict["products"]?.arrayValue?.compactMap { $0["product"]?.stringValue }, ["habit-lock"])
            let violations = verdict["products"]?.arrayValue?.first?["violations"]?.arrayValue ?? []
            if naive {
                XCTAssertTrue(text.output.contains("habit-lock: Instagram was usable from 2026-11-23 09:40:00"), text.output)
                XCTAssertEqual(violations.map { $0["target"]?.stringValue }, ["Instagram"])
                XCTAssertEqual(violations.first?["kind"]?.stringValue, "usable-while-locked")
                // The unlock ended at 09:26; Instagram was usable to 09:50: 24 minutes past it. The monitor lifted it last.
                XCTAssertEqual(violations.first?["pastEndMs"]?.intValue, 24 * 60_000)
                XCTAssertEqual(violations.first?["decidedBy"]?.stringValue, "monitor")
                // And where to see it: the Studio opened just after the last event before the violation began.
                let at = try XCTUnwrap(text.output.firstMatch(of: #/shieldbus studio --journal \S+ --config \S+ --at (\d+)\n/#), text.output)
                let from = try XCTUnwrap(violations.first?["from"]?.intValue)
                XCTAssertEqual(UInt64(at.1), run.journal.last { $0.time <= from }?.seq, text.output)
                // `run --json`: the same verdict as one JSON object, the last line on standard error.
                let jsonRun = try ScenarioRun.run(configuration: configuration, scenario: scenario, arguments: ["--json"])
                let runVerdict = try JSONValue(parsing: Array((jsonRun.errors.split(separator: "\n").last ?? "").utf8))
                XCTAssertEqual(runVerdict, verdict)
            } else {
                XCTAssertEqual(text.output, "  lock invariant    held (habit-lock)\n")
                XCTAssertEqual(violations.count, 0)
            }
        }
    }

    /// `run --no-check` (how explore plays its days, judging each journal itself): no verdict and no failing status
    /// for a broken day, and the journal the same bytes as the judged run's.
    func testNoCheckJudgesNothingAndJournalsTheSame() throws {
        let lesson = LessonTests.forceQuitDuringAnUnlock
        let scenario = "name: lesson\nstart: 2026-11-23T08:00\nsteps:\n" + lesson.steps
        let configuration = LessonTests.configuration(lesson, naive: true)
        let judged = try ScenarioRun.run(configuration: configuration, scenario: scenario)
        let unjudged = try ScenarioRun.run(configuration: configuration, scenario: scenario, arguments: ["--no-check"])
        XCTAssertEqual(judged.exitStatus, 3, judged.errors)
        XCTAssertEqual(unjudged.exitStatus, 0, unjudged.errors)
        XCTAssertFalse(unjudged.errors.contains("lock invariant"), unjudged.errors)
        XCTAssertEqual(unjudged.journalBytes, judged.journalBytes)
    }
}
