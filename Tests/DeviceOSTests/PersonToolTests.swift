@testable import DeviceOS
import Foundation
import ShieldBusTestSupport
import XCTest

/// `shieldbus do` through the real broker and the habit lock's plugins: an action that did nothing on the device
/// exits non-zero and says why — never "done" — and one that did says what is on screen after it, so "open" tells
/// whether a shield came up. (In CrashSafetyTests for its habit-lock configuration.)
extension CrashSafetyTests {
    func testThePersonsToolSaysWhatHappenedAndNeverDoneForNothing() throws {
        let work = TemporaryDirectory(prefix: "sbperson")
        let journal = work.file("journal.jsonl")
        let broker = try BrokerProcess(configuration: try habitLockConfiguration(), arguments: ["--no-scenario", "--journal", journal])
        defer { broker.stop() }
        func person(_ arguments: String...) throws -> (status: Int32, output: String) {
            try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path])
        }
        waitUntil("the plugins to be ready (log: \(broker.log(tail: 10)))") { self.journal(journal).contains { $0.topic == "bus.ready" } }

        let pressAtHome = try person("press", "primary")
        XCTAssertEqual(pressAtHome.status, 1, pressAtHome.output)
        XCTAssertFalse(pressAtHome.output.contains("done"), pressAtHome.output)
        XCTAssertTrue(pressAtHome.output.contains("no shield is on screen"), pressAtHome.output)

        let open = try person("open", "Instagram")
        XCTAssertEqual(open.status, 0, open.output)
        XCTAssertEqual(open.output, "done: open Instagram — Instagram under a shield: “Habits first” (drawn by shield)\n")

        let secondary = try person("press", "secondary")
        XCTAssertEqual(secondary.status, 1, "the habit lock's shield draws one button: \(secondary.output)")
        XCTAssertTrue(secondary.output.contains("has no secondary button"), secondary.output)

        let close = try person("press", "primary")
        XCTAssertEqual(close.status, 0, close.output)
        XCTAssertEqual(close.output, "done: press primary — the home screen\n", "the habit lock's Close closes the app")

        // Each notification waiting can be tapped once (the habit lock's notifier may have posted one): then none is.
        let posted = self.journal(journal).filter { $0.topic == "notification.posted" }.count
        for _ in 0..<posted { XCTAssertEqual(try person("notification-tap").status, 0) }
        let tap = try person("notification-tap")
        XCTAssertEqual(tap.status, 1, "\(posted) posted, \(posted) tapped: \(tap.output)")
        XCTAssertFalse(tap.output.contains("done"), tap.output)
        XCTAssertTrue(tap.output.contains("no notification is waiting to be tapped"), tap.output)

        XCTAssertEqual(try person("open", "Maps").output, "done: open Maps — Maps in use\n", "an app not picked is not shielded")
        // Closing or quitting what is not on screen, or closing the home screen, changes nothing: never "done".
        for (arguments, said) in [(["close", "Instagram"], "Instagram is not on screen"), (["force-quit", "Instagram"], "Instagram is not on screen")] {
            let nothing = try runToEnd(BuildProducts.path("shieldbus"), ["do"] + arguments + ["--runtime-dir", broker.runtime.path])
            XCTAssertEqual(nothing.status, 1, nothing.output)
            XCTAssertTrue(nothing.output.contains(said) && !nothing.output.contains("done"), nothing.output)
        }
        XCTAssertEqual(try person("close").status, 0, "Maps closed")
        let closeAtHome = try person("close")
        XCTAssertEqual(closeAtHome.status, 1, closeAtHome.output)
        XCTAssertTrue(closeAtHome.output.contains("the home screen is showing"), closeAtHome.output)
        let homeAtHome = try person("home")
        XCTAssertEqual(homeAtHome.status, 1, homeAtHome.output)
        XCTAssertTrue(homeAtHome.output.contains("home: the home screen is showing already; nothing changed") && !homeAtHome.output.contains("done"),
                      homeAtHome.output)

        // A control in the product's app: journaled by the OS as the person's act, for the product's app.
        let tapped = try person("app-action", "skip-tonight")
        XCTAssertEqual(tapped.status, 0, tapped.output)
        XCTAssertTrue(waitUntil("the app action to be journaled") {
            self.journal(journal).contains { $0.topic == "activity.app.action" && $0.bodyValue["app"]?.stringValue == "Habit Lock"
                && $0.bodyValue["action"]?.stringValue == "skip-tonight" && $0.source == "broker" }
        })
        let unnamed = try person("app-action", "skip tonight")
        XCTAssertEqual(unnamed.status, 64, "a control's name is one word: \(unnamed.output)")

        // Every welcome says the device clock's offset from bus time (protocol.md § 4.3, `welcome`): 0 until the person sets it.
        let before = try broker.connect(name: "clock-watcher", role: .tap, subscriptions: [])
        XCTAssertEqual(before.welcome?.settings["clockOffsetMs"]?.intValue, 0, before.welcome?.settings.jsonText ?? "no welcome")
        before.close()
        XCTAssertEqual(try person("set-clock", "+2h").status, 0)
        let after = try broker.connect(name: "clock-watcher-2", role: .tap, subscriptions: [])
        XCTAssertEqual(after.welcome?.settings["clockOffsetMs"]?.intValue, 7_200_000, after.welcome?.settings.jsonText ?? "no welcome")
        let zone = try XCTUnwrap(after.welcome?.settings["timeZone"]?.stringValue)
        after.close()
        // Setting the clock or the zone to what it is already changes nothing: said, exit 1.
        let sameClock = try person("set-clock", "+0m")
        XCTAssertEqual(sameClock.status, 1, sameClock.output)
        XCTAssertTrue(sameClock.output.contains("shows that time already"), sameClock.output)
        let sameZone = try person("time-zone", zone)
        XCTAssertEqual(sameZone.status, 1, sameZone.output)
        XCTAssertTrue(sameZone.output.contains("is in \(zone) already"), sameZone.output)
    }
}

/// Usage mistakes a command finds itself are shown with that command's usage (not the top level's), and exit 64.
final class CommandUsageTests: XCTestCase {
    func testAMistakeShowsTheCommandsOwnUsage() throws {
        let shieldbus = BuildProducts.path("shieldbus")
        let cases: [([String], String, String)] = [
            (["do", "frobnicate"], "unknown action 'frobnicate'", "Usage: shieldbus do "),
            (["send", "app.note.added", "{bad"], "the body is not JSON", "Usage: shieldbus send "),
            (["do", "app-action"], "'app-action' needs the control's name", "Usage: shieldbus do "),
        ]
        for (arguments, error, usage) in cases {
            let run = try runToEnd(shieldbus, arguments + ["--runtime-dir", "/nonexistent"])
            XCTAssertEqual(run.status, 64, run.output)
            XCTAssertTrue(run.output.contains("Error: \(error)"), run.output)
            XCTAssertTrue(run.output.contains(usage), "the command's own usage: \(run.output)")
            XCTAssertFalse(run.output.contains("<subcommand>"), run.output)
        }
        // Shell completion knows do's actions, and its value from the shipped catalog's apps and the buttons.
        let script = try runToEnd(shieldbus, ["--generate-completion-script", "bash"])
        XCTAssertTrue(script.output.contains("notification-tap"), "do's actions are listed")
        XCTAssertTrue(script.output.contains("'faithful'$'\\n''ios-realistic'"), "run's and explore's profiles are listed")
        let values = try runToEnd(shieldbus, ["---completion", "do", "--", "value"]).output.split(separator: "\n").map(String.init)
        XCTAssertTrue(values.contains("Instagram") && values.contains("primary"), "\(values.prefix(5))")
        // And tap's patterns from the bus's namespaces.
        let patterns = try runToEnd(shieldbus, ["---completion", "tap", "--", "patterns"])
        XCTAssertEqual(patterns.status, 0, patterns.output)
        XCTAssertTrue(patterns.output.split(separator: "\n").contains("shield."), patterns.output)
        let version = try runToEnd(shieldbus, ["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertEqual(version.output.split(separator: ".").count, 3, "a release number: \(version.output)")
    }
}
