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
    static let curveSuitePath = BuildProducts.repositoryRoot.appendingPathComponent("Tests/PythonPluginTests/curve_attack.py").path

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

    /// The tcp endpoint from outside (curve_attack.py, written from docs/protocol.md § 2): an allowlisted key with a
    /// wrong credential is refused `not-admitted`, and 300 random CURVE keys within about a second are refused
    /// without an answer, counted one by one in `status` while the broker's log gets at most one line a second
    /// for them (docs/security.md § 4), each line carrying how many refusals it stands for.
    func testCURVEFloodAndWrongCredentialsFromOutside() throws {
        let python = try requirePython()
        let keys = TemporaryDirectory(prefix: "sbcurvekeys")
        let made = try runToEnd(BuildProducts.path("shieldbus"), ["keys", "new", "dev", "--directory", keys.path])
        XCTAssertEqual(made.status, 0, made.output)
        let broker = try BrokerProcess(configuration: """
            name: curve-attack
            bus:
              curve:
                allow: [\(keys.file("dev.key"))]
            clients:
              - {roles: [tap, generic]}
            """, arguments: ["--endpoint", "tcp://127.0.0.1:*"])
        defer { broker.stop() }
        let flood = 300
        let work = TemporaryDirectory(prefix: "sbcurveattack")
        let output = work.file("results.jsonl")
        let process = try startProcess(python, [Self.curveSuitePath, "--runtime-dir", broker.runtime.path, "--key", keys.file("dev.key_secret"), "--flood", "\(flood)"],
                                       environment: ProcessInfo.processInfo.environment, log: output)
        waitUntil("the CURVE attacks to finish (output: \(output))", timeoutSeconds: 120) { !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        XCTAssertEqual(process.terminationStatus, 0, "the attacks ran to their end:\n\(text.suffix(3000))\nbroker log:\n\(broker.log())")
        let lines = text.split(separator: "\n").compactMap { try? JSONValue(parsing: Array($0.utf8)) }
        let results = lines.filter { $0["check"] != nil }
        XCTAssertGreaterThanOrEqual(results.count, 8, "every check reported:\n\(text.suffix(3000))")
        for result in results {
            XCTAssertEqual(result["ok"]?.boolValue, true, "\(result["check"]?.stringValue ?? "?"): \(result["detail"]?.stringValue ?? "")")
        }
        let seconds = try XCTUnwrap(lines.compactMap { $0["flood"]?["seconds"]?.doubleValue }.first, "the flood's length:\n\(text.suffix(2000))")

        // Every refusal counted; the broker has seen them all once the count reaches the flood.
        var counters = JSONValue.object([:])
        waitUntil("the broker to count \(flood) refused keys") {
            counters = (try? broker.status()["counters"]?["errorsByCode"]) ?? .object([:])
            return (counters["curve-refused"]?.intValue ?? 0) >= Int64(flood)
        }
        XCTAssertEqual(counters["curve-refused"]?.intValue, Int64(flood), "each random key refused once: \(counters)")
        XCTAssertEqual(counters["not-admitted"]?.intValue, 3, "the three wrong credentials: \(counters)")
        // The log: lines about refused keys at least a second apart (so never two in one second of its timestamps),
        // at most one for each second the flood lasted and one more, and their counts add up to what they stand for.
        let log = (try? String(contentsOfFile: broker.logPath, encoding: .utf8)) ?? ""
        let refusalLines = log.split(separator: "\n").filter { $0.contains("not on the allowlist") }
        let stamps = refusalLines.map { $0.prefix { $0 != " " } }
        XCTAssertEqual(Set(stamps).count, stamps.count, "at most one line a second:\n\(refusalLines.joined(separator: "\n"))")
        XCTAssertGreaterThanOrEqual(refusalLines.count, 1, "the refusals were logged:\n\(broker.log())")
        XCTAssertLessThanOrEqual(refusalLines.count, Int(seconds.rounded(.up)) + 1, "\(flood) refusals in \(seconds) s:\n\(refusalLines.joined(separator: "\n"))")
        let logged = refusalLines.compactMap { line in line.range(of: "refusals=").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) } }
        XCTAssertEqual(logged.count, refusalLines.count, "each line says how many refusals it stands for:\n\(refusalLines.joined(separator: "\n"))")
        XCTAssertLessThanOrEqual(logged.reduce(0, +), flood, "no refusal stood for twice")
        XCTAssertGreaterThan(logged.reduce(0, +), refusalLines.count, "the lines stand for more refusals than there are lines")
        print("curve attack: \(flood) random keys in \(seconds) s, \(refusalLines.count) log lines standing for \(logged.reduce(0, +)) refusals, all \(counters["curve-refused"]?.intValue ?? 0) counted")
    }
}
