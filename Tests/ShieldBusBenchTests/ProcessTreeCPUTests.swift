@testable import shieldbus_bench
import Foundation
import XCTest

/// What the latency suite makes of two readings of a run's processes, and a reading of real ones.
final class ProcessTreeCPUTests: XCTestCase {
    private let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    func testEachProgramGetsWhatItsProcessesSpentBetweenTheReadings() {
        let earlier = reading([(1, 100, "shieldbus", 10), (2, 100, "notifier", 5), (3, 101, "notifier", 7)])
        let later = reading([(1, 100, "shieldbus", 30), (2, 100, "notifier", 9), (3, 101, "notifier", 8)])
        let spent = later.spent(since: earlier)
        XCTAssertEqual(spent.secondsByProgram.count, 2)
        XCTAssertEqual(spent.secondsByProgram["shieldbus"] ?? -1, 20 / ticksPerSecond, accuracy: 1e-12)
        // 4 + 1 ticks, its two processes together
        XCTAssertEqual(spent.secondsByProgram["notifier"] ?? -1, 5 / ticksPerSecond, accuracy: 1e-12)
        XCTAssertEqual(spent.inOneReadingOnly, 0)
    }

    func testAProcessNotInBothReadingsCountsForNothingAndIsCounted() {
        let earlier = reading([(1, 100, "shieldbus", 10), (2, 100, "report-builder", 5), (3, 100, "bwrap", 2)])
        // 2 ended and its number went to a later process of the same program; 3 ended; 4 started after the first
        // reading.
        let later = reading([(1, 100, "shieldbus", 12), (2, 900, "report-builder", 50), (4, 900, "shield-renderer", 70)])
        let spent = later.spent(since: earlier)
        XCTAssertEqual(spent.secondsByProgram.keys.sorted(), ["shieldbus"])
        XCTAssertEqual(spent.inOneReadingOnly, 4, "the ended 2 and 3, the new 2 and 4")
    }

    func testAReadingFindsAProcessBelowTheRootByItsProgramAndWhatItSpent() throws {
        let spinner = Process()
        spinner.executableURL = URL(fileURLWithPath: "/bin/sh")
        spinner.arguments = ["-c", "while :; do :; done"]
        try spinner.run()
        defer { spinner.terminate(); spinner.waitUntilExit() }
        let root = getpid(), earlier = ProcessTreeCPU.read(root: root)
        XCTAssertTrue(earlier.processes.contains { $0.key.pid == spinner.processIdentifier && $0.value.program == "sh" })
        // Until the spinner has spent a tick past the first reading (at most a few ms of its loop).
        let deadline = Date().addingTimeInterval(30)
        var spent = ProcessTreeCPU.read(root: root).spent(since: earlier)
        while (spent.secondsByProgram["sh"] ?? 0) <= 0, Date() < deadline {
            spent = ProcessTreeCPU.read(root: root).spent(since: earlier)
        }
        XCTAssertGreaterThan(spent.secondsByProgram["sh"] ?? 0, 0, "a spinning child's CPU is read")
    }

    private func reading(_ processes: [(pid: pid_t, started: Int, program: String, ticks: Int)]) -> ProcessTreeCPU {
        var reading = ProcessTreeCPU()
        for process in processes {
            reading.processes[.init(pid: process.pid, startTicks: process.started)] = (program: process.program, ticks: process.ticks)
        }
        return reading
    }
}
