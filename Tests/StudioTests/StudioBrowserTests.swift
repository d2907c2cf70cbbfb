import Foundation
import ShieldBusTestSupport
import XCTest

/// ShieldBus Studio in headless Chromium, through the real broker and the reference plugins: runs
/// `studio_browser_test.py`, `studio_page_test.py`, `studio_clock_test.py`, `studio_person_test.py`,
/// `studio_journal_test.py` in that order (one live broker for them all), `studio_large_journal_test.py` (on a live
/// broker's journal of its own) and `studio_explore_test.py` and `studio_products_test.py` (brokers of their own), in
/// four test cases (pytest + Playwright for Python, driving Debian's chromium), and requires every test to pass.
///
/// Needs python3 with pytest and playwright, and /usr/bin/chromium (`make deps` installs them); when they are
/// missing the test fails, saying what to install.
final class StudioBrowserTests: XCTestCase {
    static func paths(_ files: [String]) -> [String] {
        files.map { BuildProducts.repositoryRoot.appendingPathComponent("Tests/StudioTests/\($0)").path }
    }

    // Four test cases: all in one would take longer than a test case may (`TestWatchdog`).

    /// The tests that share one live broker (`conftest.py`'s `live`), in the order they change it.
    func testThePhoneTheBusAndTheStateInABrowser() throws {
        try runPytest(Self.paths(["studio_browser_test.py", "studio_page_test.py", "studio_clock_test.py", "studio_person_test.py",
                                  "studio_journal_test.py"]), passing: 24)
    }

    /// A large journal: a live broker's journal of its own, repeated; and a year's journal against a month's.
    func testALargeJournalInABrowser() throws {
        try runPytest(Self.paths(["studio_large_journal_test.py"]), passing: 2)
    }

    /// The tests with brokers of their own: each shipped product's day at a phone's width, then at a laptop's (two test
    /// cases: the days are independent, and two workers can take them); and an explore failure opened at its violation
    /// at both widths, in the first (one explore for both).
    func testEachProductsDayAndAnExploreFailureInAPhonesWidth() throws {
        try runPytest(Self.paths(["studio_explore_test.py", "studio_products_test.py"]), selecting: "390 or explore", passing: 7)
    }

    func testEachProductsDayAndAnExploreFailureInALaptopsWidth() throws {
        try runPytest(Self.paths(["studio_products_test.py"]), selecting: "1280", passing: 5)
    }

    /// Runs the pytest files in one session (only the tests whose names match `selecting`, pytest's `-k`, when given)
    /// and requires exactly `passing` tests, all passed.
    func runPytest(_ files: [String], selecting: String? = nil, passing: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let shieldbus = BuildProducts.path("shieldbus")
        let work = TemporaryDirectory(prefix: "sbstudio")
        var environment = ProcessInfo.processInfo.environment
        environment["SHIELDBUS"] = shieldbus
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let check = try startProcess("/usr/bin/env", ["python3", "-c", "import pytest, playwright.sync_api"], environment: environment, log: work.file("check.log"))
        check.waitUntilExit()
        guard check.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: environment["CHROMIUM"] ?? "/usr/bin/chromium") else {
            XCTFail("the Studio's browser test needs python3 with pytest and playwright, and Debian's chromium: run `make deps` "
                + "(\((try? String(contentsOfFile: work.file("check.log"), encoding: .utf8)) ?? ""))", file: file, line: line)
            return
        }
        let run = try startProcess("/usr/bin/env", ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"] + (selecting.map { ["-k", $0] } ?? []) + files,
                                   environment: environment, log: work.file("pytest.log"))
        // pytest's own expectations carry the deadlines (Playwright's expect polls; every wait has a timeout).
        run.waitUntilExit()
        let output = (try? String(contentsOfFile: work.file("pytest.log"), encoding: .utf8)) ?? ""
        XCTAssertEqual(run.terminationStatus, 0, "the Studio's browser test failed:\n\(output)", file: file, line: line)
        XCTAssertTrue(output.contains("\(passing) passed"), "every browser test ran and passed:\n\(output)", file: file, line: line)
    }
}
