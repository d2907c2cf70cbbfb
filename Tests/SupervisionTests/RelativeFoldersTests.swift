import Foundation
import ShieldBusTestSupport
import XCTest

/// Folders named relative to where `shieldbus run` is started: its plugins, started in their own folders, find the
/// same runtime and state folders, and the day is the one the default configuration always plays.
final class RelativeFoldersTests: XCTestCase {
    func testARunWithRelativeRuntimeAndStateFoldersPlaysItsDay() throws {
        let work = TemporaryDirectory(prefix: "sbrelative")
        let configuration = BuildProducts.repositoryRoot.appendingPathComponent("Config/default.yml").path
        let run = try CommandRun.shieldbus(["run", "--config", configuration, "--runtime-dir", "here/run", "--state-dir", "here/state",
                                            "--journal", "day.jsonl", "--quiet"],
                                           directory: work.path, timeoutSeconds: 120)
        XCTAssertEqual(run.status, 0, run.output + run.errors)
        XCTAssertFalse((run.output + run.errors).contains("cannot read the plugin's options file"), run.errors)
        XCTAssertTrue(FileManager.default.fileExists(atPath: work.path + "/here/state/device.sqlite"), "the state is where it was named")
        XCTAssertTrue(FileManager.default.fileExists(atPath: work.path + "/here/run/options"), "the runtime folder is where it was named")
        let journal = try String(contentsOfFile: work.path + "/day.jsonl", encoding: .utf8)
        XCTAssertTrue(journal.contains("\"topic\":\"shield.shown\""), "the day's shields were drawn")
    }
}
