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
    /// build's program, and the release one when `.build/release` holds it — a release program's runtime finds the
    /// arguments only after the template's constructor, from a launch's environment that is no longer on the stack.
    func testALaunchFromTheTemplateHasTheTemplatesArguments() throws {
        var programs = [BuildProducts.path("activity-monitor")]
        let release = BuildProducts.repositoryRoot.appendingPathComponent(".build/release/activity-monitor").path
        if FileManager.default.isExecutableFile(atPath: release) { programs.append(release) }
        for program in programs {
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
}
