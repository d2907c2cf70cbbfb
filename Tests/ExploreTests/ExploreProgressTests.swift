import Foundation
import ShieldBusTestSupport
import XCTest

/// Explore's progress on standard error, as a person watching it or a CI log reading it sees it: the days played,
/// the failures, the time spent and — until the last day — an estimate of the time left. (In ExploreTests for its
/// runner.)
extension ExploreTests {
    static let arguments = ["--config", root + "/Config/habit-lock.yml", "--days", "3", "--seed", "41", "--profile", "faithful",
                            "--jobs", "1", "--shrink-runs", "0"]
    /// `1m02s`, `5s`, `1h03m` (`ExploreReport.duration`).
    static let duration = #"(\d+h\d\dm|\d+m\d\ds|\d+s)"#

    /// Not on a terminal (a log, CI): a line per finished day, in order, each with the time spent and, but the last,
    /// the time left.
    func testProgressIsALinePerFinishedDayWhenNotOnATerminal() throws {
        let directory = TemporaryDirectory(prefix: "sbexplore")
        let (status, output) = try explore(Self.arguments, in: directory)
        XCTAssertEqual(status, 0, output)
        let lines = try String(contentsOfFile: lastErrorsFile, encoding: .utf8).split(separator: "\n").filter { $0.contains(" days · ") }
        XCTAssertEqual(lines.count, 3, "a line per day: \(lines)")
        for (index, line) in lines.enumerated() {
            let left = index < 2 ? ", about \(Self.duration) left" : ""
            XCTAssertNotNil(line.range(of: "^explore: \(index + 1)/3 days · 0 failure\\(s\\) · \(Self.duration)\(left)$", options: .regularExpression), String(line))
        }
        XCTAssertFalse(lines.joined().contains("\u{1B}"), "no terminal controls in a log")
    }

    /// On a terminal: one bar drawn again in place (a carriage return, no new line) with the events played, the time
    /// spent and the time left, cleared before the report's lines and at the end.
    func testProgressIsABarInPlaceOnATerminal() throws {
        let directory = TemporaryDirectory(prefix: "sbexplore")
        let terminal = try PseudoTerminal()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuildProducts.path("shieldbus"))
        process.arguments = ["explore"] + Self.arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = terminal.terminal
        try process.run()
        waitUntil("explore to finish", timeoutSeconds: 600) { !process.isRunning }
        XCTAssertEqual(process.terminationStatus, 0)
        waitUntil("its last words on the terminal") { terminal.text.contains("day(s) in") }
        let shown = terminal.text
        let bars = shown.components(separatedBy: "\r").filter { $0.hasPrefix("[") }
        XCTAssertEqual(bars.count, 3, "the bar drawn again once per day: \(shown.debugDescription)")
        XCTAssertNotNil(bars[0].range(of: #"^\[#{10}-{20}\] 1/3 days · \d+ events · 0 failure\(s\) · "# + Self.duration + ", about " + Self.duration + " left",
                                      options: .regularExpression), bars[0].debugDescription)
        XCTAssertTrue(bars.allSatisfy { !$0.contains("\n") }, "drawn in place: \(shown.debugDescription)")
        XCTAssertTrue(shown.contains("\r\u{1B}[K"), "cleared before the next line: \(shown.debugDescription)")
    }
}
