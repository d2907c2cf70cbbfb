@testable import Broker
import Foundation
import XCTest

/// The scheduler's word on a process, read from `/proc/<pid>/stat` as the wait for a plugin's acknowledgements reads it.
final class ProcessProgressTests: XCTestCase {
    func testTheStateAndCPUAreReadAfterTheCommandWhateverItHolds() throws {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 800 0 0 0 17 5 0 0 20 0 1 0 123 0 0"
        XCTAssertEqual(ProcessProgress.parse(line), ProcessProgress(cpuTicks: 22, isBusy: false))
        XCTAssertEqual(ProcessProgress.parse(line.replacingOccurrences(of: ") S ", with: ") R "))?.isBusy, true)
        XCTAssertEqual(ProcessProgress.parse(line.replacingOccurrences(of: ") S ", with: ") D "))?.isBusy, true, "waiting for the disk")
        XCTAssertNil(ProcessProgress.parse("4242 (cut"))
        XCTAssertNotNil(ProcessProgress.read(getpid()))
    }

    func testAProcessWorkedWhenBusyOrItsCPURose() {
        let idle = ProcessProgress(cpuTicks: 10, isBusy: false)
        XCTAssertFalse(idle.worked(since: nil), "blocked, and nothing to compare")
        XCTAssertFalse(idle.worked(since: idle))
        XCTAssertTrue(ProcessProgress(cpuTicks: 11, isBusy: false).worked(since: idle))
        XCTAssertTrue(ProcessProgress(cpuTicks: 10, isBusy: true).worked(since: idle))
    }
}
