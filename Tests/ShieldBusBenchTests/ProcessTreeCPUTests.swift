@testable import shieldbus_bench
import Foundation
import XCTest

/// What the latency suite makes of two readings of a run's processes; the readings themselves are the benchmark's.
final class ProcessTreeCPUTests: XCTestCase {
    private let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    func testEachProgramGetsWhatItsProcessesSpentBetweenTheReadings() {
        let earlier = reading([1: ("shieldbus", 10), 2: ("notifier", 5), 3: ("notifier", 7)])
        let later = reading([1: ("shieldbus", 30), 2: ("notifier", 9), 3: ("notifier", 8)])
        let seconds = later.secondsByProgram(since: earlier)
        XCTAssertEqual(seconds.count, 2)
        XCTAssertEqual(seconds["shieldbus"] ?? -1, 20 / ticksPerSecond, accuracy: 1e-12)
        // 4 + 1 ticks, its two processes together
        XCTAssertEqual(seconds["notifier"] ?? -1, 5 / ticksPerSecond, accuracy: 1e-12)
    }

    func testAProcessNotInBothReadingsOrWhoseNumberAnotherProgramTookCountsForNothing() {
        let earlier = reading([1: ("shieldbus", 10), 2: ("report-builder", 5), 3: ("bwrap", 2)])
        // 2 ended and its number went to another program; 3 ended; 4 started after the first reading.
        let later = reading([1: ("shieldbus", 12), 2: ("notifier", 50), 4: ("shield-renderer", 70)])
        XCTAssertEqual(later.secondsByProgram(since: earlier).keys.sorted(), ["shieldbus"])
    }

    private func reading(_ processes: [pid_t: (String, Int)]) -> ProcessTreeCPU {
        var reading = ProcessTreeCPU()
        for (pid, process) in processes { reading.processes[pid] = (program: process.0, ticks: process.1) }
        return reading
    }
}
