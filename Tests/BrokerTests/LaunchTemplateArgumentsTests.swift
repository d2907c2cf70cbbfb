@testable import Broker
import BusClient
import Foundation
import ShieldBusTestSupport
import XCTest

/// A launch forked from its template starts with the command line the template was started with (the plugin's
/// program and its `arguments:`), as an executed launch does: `CommandLine.arguments` is the program's to read.
final class LaunchTemplateArgumentsTests: XCTestCase {
    /// The reference monitor names itself by its program (`CommandLine.arguments[0]`) when its launch has no plugin
    /// name, and its options file is missing: the launch ends with the configuration error naming the program. This
    /// build's (debug) program finds its arguments whatever the template does, so it cannot see a launch left without
    /// them: only the release program's runtime looks for them from `environ` on the stack, after the template's
    /// constructor, where a launch's environment no longer is (the release half below).
    func testALaunchOfThisBuildsMonitorHasTheTemplatesArguments() throws {
        try assertLaunchHasItsArguments(BuildProducts.path("activity-monitor"))
    }

    /// The same with the release monitor, the one that can show the bug; skipped, saying so, when `.build/release`
    /// does not hold it (`make bench-build` builds it), or holds one older than the template's source (a stale build
    /// would judge code that is no longer there).
    func testALaunchOfTheReleaseMonitorHasTheTemplatesArguments() throws {
        let release: String
        switch BuildProducts.currentRelease("activity-monitor", builtFrom: ["Sources/CLaunchTemplate/launch_template.c"]) {
        case .success(let program): release = program
        case .failure(let why): throw XCTSkip("\(why): only a release program's runtime shows a launch without its arguments")
        }
        try assertLaunchHasItsArguments(release)
    }

    private func assertLaunchHasItsArguments(_ program: String) throws {
        let work = TemporaryDirectory(prefix: "launch-arguments")
        let environment = ["PATH": "/usr/bin:/bin", "SHIELDBUS_PLUGIN_ROLE": "monitor",
                           "SHIELDBUS_PLUGIN_OPTIONS_FILE": work.file("missing.json")]
        let template = try LaunchTemplate(executable: program, arguments: [], environment: environment,
                                          logPath: work.file("monitor.log"), sandbox: nil)
        defer { LaunchTemplate.end([template], graceMilliseconds: 5_000) }
        let deadline = monotonicMilliseconds() + 30_000
        XCTAssertTrue(template.awaitReady(until: deadline), "\(program): \((try? String(contentsOfFile: work.file("monitor.log"), encoding: .utf8)) ?? "")")
        let launch = try XCTUnwrap(template.launch(environment: environment, until: deadline), program)
        let status = try XCTUnwrap(template.awaitEnding(of: launch.templatePID, until: deadline), program)
        let log = try String(contentsOfFile: work.file("monitor.log"), encoding: .utf8)
        XCTAssertEqual(status, 78 << 8, "\(program): exits with EX_CONFIG, not a trap (wait status \(status)): \(log)")
        XCTAssertTrue(log.contains("\(program): cannot start: cannot read the plugin's options file"), "\(program): \(log)")
    }
}
