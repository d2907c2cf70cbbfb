import BusClient
import BusProtocol
import Foundation
import ShieldBusTestSupport
import XCTest

/// Issue #10's attacks, tried by an outside client in Python (Tests/PythonPluginTests/attack_suite.py, written
/// from docs/protocol.md) against the real broker running the habit lock with its real plugin processes: each
/// attack is refused with its documented code, the lock store is untouched, and the broker serves others throughout.
final class TrustAttackTests: XCTestCase {
    static let suitePath = BuildProducts.repositoryRoot.appendingPathComponent("Tests/PythonPluginTests/attack_suite.py").path

    func habitLockConfiguration() throws -> String {
        var text = try String(contentsOfFile: BuildProducts.repositoryRoot.path + "/Config/habit-lock.yml", encoding: .utf8)
        text = text.replacingOccurrences(of: "scenario: scenarios/habit-lock-day.yml\n", with: "")
        for name in ["activity-monitor", "shield-renderer", "action-delegate", "companion-app", "report-builder", "notifier"] {
            text = text.replacingOccurrences(of: "executable: \(name)", with: "executable: \(BuildProducts.path(name))")
        }
        // Outside clients: taps and generic plugins of any name; the person's input only for the client named person.
        return text + "\nclients:\n  - {roles: [tap, generic]}\n  - {name: person, roles: [tool]}\n"
    }

    func testEveryAttackOfTheIssueIsRefusedWithItsCodeAndTheLockHolds() throws {
        let python = try requirePython()
        // Plain launches: the suite replays a plugin's credential read from /proc/<pid>/environ, where a launch from
        // its template never has it (the template hands it over after the fork).
        let broker = try BrokerProcess(configuration: try habitLockConfiguration(), arguments: ["--plain-launches"])
        let cookie = try XCTUnwrap(broker.runtime.cookie(), "the broker writes the outside clients' cookie")
        var info = stat()
        XCTAssertEqual(stat(broker.runtime.cookiePath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "the cookie is readable by its owner only")
        XCTAssertEqual(cookie.utf8.count, 64)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: broker.runtime.cookiePath)), Data(cookie.utf8), "the file holds exactly what is presented")
        waitUntil("every plugin of the habit lock to connect", timeoutSeconds: 30) {
            let plugins = (try? broker.status())?["plugins"]?.arrayValue ?? []
            return plugins.filter { $0["connected"]?.boolValue == true && $0["supervised"]?.boolValue == true }.count == 6
        }
        let work = TemporaryDirectory(prefix: "sbattack")
        let output = work.file("results.jsonl")
        let process = try startProcess(python, [Self.suitePath, "--runtime-dir", broker.runtime.path],
                                                           environment: ProcessInfo.processInfo.environment, log: output)
        waitUntil("the attack suite to finish (output: \(output))", timeoutSeconds: 180) { !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        XCTAssertEqual(process.terminationStatus, 0, "the suite ran to its end:\n\(text.suffix(3000))\nbroker log:\n\(broker.log())")
        let results = text.split(separator: "\n").compactMap { try? JSONValue(parsing: Array($0.utf8)) }.filter { $0["check"] != nil }
        XCTAssertGreaterThanOrEqual(results.count, 50, "every check reported:\n\(text.suffix(3000))")
        for result in results {
            XCTAssertEqual(result["ok"]?.boolValue, true, "\(result["check"]?.stringValue ?? "?"): \(result["detail"]?.stringValue ?? "")")
        }
        // The broker itself saw and counted the refusals, and is still alive.
        let counters = try broker.status()["counters"]?["errorsByCode"]
        for code in ["not-admitted", "role-not-allowed", "reserved-topic", "reply-refused", "bad-name", "foreign-namespace", "read-only"] {
            XCTAssertGreaterThan(counters?[code]?.intValue ?? 0, 0, "status counts \(code)")
        }
        XCTAssertEqual(broker.stop(), 0)
    }
}
