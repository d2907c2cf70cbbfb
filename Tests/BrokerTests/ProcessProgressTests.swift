@testable import Broker
import BusProtocol
import Foundation
import XCTest

/// The scheduler's word on a process, read from `/proc/<pid>/stat` as the wait for a plugin's acknowledgements reads it.
final class ProcessProgressTests: XCTestCase {
    func testTheStateAndCPUAreReadAfterTheCommandWhateverItHolds() throws {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 800 0 3 0 17 5 0 0 20 0 1 0 123 0 0"
        XCTAssertEqual(ProcessProgress.parse(line), ProcessProgress(cpuTicks: 22, faults: 803, isBusy: false))
        XCTAssertEqual(ProcessProgress.parse(line.replacingOccurrences(of: ") S ", with: ") R "))?.isBusy, true)
        XCTAssertEqual(ProcessProgress.parse(line.replacingOccurrences(of: ") S ", with: ") D "))?.isBusy, true, "waiting for the disk")
        XCTAssertNil(ProcessProgress.parse("4242 (cut"))
        XCTAssertNotNil(ProcessProgress.read(getpid()))
    }

    /// The line read byte by byte gives what splitting it at its spaces gives, for lines drawn with commands holding
    /// spaces and parentheses, runs of spaces, signs, letters and numbers past 64 bits.
    func testTheLineReadByteByByteAsSplittingItReads() {
        func bySplitting(_ stat: String) -> ProcessProgress? {
            guard let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]),
                  let minor = UInt64(fields[7]), let major = UInt64(fields[9]) else { return nil }
            return ProcessProgress(cpuTicks: user + system, faults: minor + major, isBusy: fields[0] == "R" || fields[0] == "D")
        }
        var generator = SystemRandomNumberGenerator()
        let commands = ["sh", "a (b) c", "x)", ") )", "", "(", "name with  spaces"]
        let states = ["R", "S", "D", "T", "Z", "RR", "I"]
        func number() -> String {
            switch Int.random(in: 0..<12, using: &generator) {
            case 0: return "+\(UInt32.random(in: 0...9_999, using: &generator))"
            case 1: return "-1"
            case 2: return "18446744073709551616"
            case 3: return "12a"
            case 4: return "\(UInt64.random(in: 0...(UInt64.max / 4), using: &generator))"
            default: return "\(UInt32.random(in: 0...99_999, using: &generator))"
            }
        }
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...20, using: &generator)
            let fields = [states.randomElement(using: &generator)!] + (0..<count).map { _ in number() }
            let gaps = fields.map { _ in String(repeating: " ", count: Int.random(in: 0..<8, using: &generator) == 0 ? 2 : 1) }
            var line = "\(Int.random(in: 1...99_999, using: &generator)) (\(commands.randomElement(using: &generator)!))"
            for (field, gap) in zip(fields, gaps) { line += gap + field }
            if Bool.random(using: &generator) { line += "\n" }
            XCTAssertEqual(ProcessProgress.parse(line), bySplitting(line), line)
        }
    }

    /// A stopped process's reading is what the whole of its `stat` file says.
    func testAReadingIsTheWholeStatFile() throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        defer {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        kill(child.processIdentifier, SIGSTOP)
        let path = "/proc/\(child.processIdentifier)/stat"
        let deadline = Date().addingTimeInterval(10)
        var text = try String(contentsOfFile: path, encoding: .utf8)
        while !text.contains(") T "), Date() < deadline { text = try String(contentsOfFile: path, encoding: .utf8) }
        XCTAssertTrue(text.contains(") T "), "stopped: \(text)")
        XCTAssertEqual(ProcessProgress.read(child.processIdentifier), ProcessProgress.parse(text))
        XCTAssertNil(ProcessProgress.read(-1), "no such process")
    }

    func testAProcessWorkedWhenBusyOrItsCPURose() {
        let idle = ProcessProgress(cpuTicks: 10, isBusy: false)
        XCTAssertFalse(idle.worked(since: nil), "blocked, and nothing to compare")
        XCTAssertFalse(idle.worked(since: idle))
        XCTAssertTrue(ProcessProgress(cpuTicks: 11, isBusy: false).worked(since: idle))
        XCTAssertTrue(ProcessProgress(cpuTicks: 10, isBusy: true).worked(since: idle))
        XCTAssertTrue(ProcessProgress(cpuTicks: 10, faults: 1, isBusy: false).worked(since: idle), "charged no tick, but it took page faults")
    }
}

/// A plugin that works in short bursts is seldom caught runnable: the first look at it must have an earlier reading
/// to compare its CPU with, or it is given up on at once.
final class LaggardReadingsTests: XCTestCase {
    /// Processes asleep at every look whose CPU rose between them, as the test sets it.
    private final class Bursts {
        var ticks: UInt64 = 100
        func read(_ pid: pid_t) -> ProcessProgress? { ProcessProgress(cpuTicks: ticks, isBusy: false) }
    }

    func testTheFirstLookComparesWithTheReadingTakenEarlyInTheWait() {
        let bursts = Bursts()
        var readings = LaggardReadings(reader: bursts.read)
        readings.read([("monitor", 7)])
        bursts.ticks += 3
        XCTAssertTrue(readings.isStillAtWork("monitor", pid: 7), "its CPU rose since the early reading")
        XCTAssertFalse(readings.isStillAtWork("monitor", pid: 7), "nothing since the first look")
        bursts.ticks += 1
        XCTAssertTrue(readings.isStillAtWork("monitor", pid: 7))
    }

    func testWithoutAnEarlierReadingOfTheSameProcessOnlyARunnableOneIsAtWork() {
        let bursts = Bursts()
        var readings = LaggardReadings(reader: bursts.read)
        XCTAssertFalse(readings.isStillAtWork("monitor", pid: 7), "nothing to compare with")
        readings.read([("app", 7)])
        readings.waitEnded()
        bursts.ticks += 3
        XCTAssertFalse(readings.isStillAtWork("app", pid: 7), "the last wait's reading is forgotten")
        readings.read([("app", 7)])
        bursts.ticks += 3
        XCTAssertFalse(readings.isStillAtWork("app", pid: 8), "a restarted plugin's process is another")
        XCTAssertFalse(readings.isStillAtWork("app", pid: 7), "the reading of the other process replaced this one")
    }
}

/// A limit on a plugin's process, judged in virtual time by its progress: the first look reads, each later one asks
/// whether it worked since; past the busy limit, or once it cannot be read, it is waited for no longer.
final class ProgressWatchTests: XCTestCase {
    private final class Process {
        var progress: ProcessProgress? = ProcessProgress(cpuTicks: 100, isBusy: false)
        func read(_ pid: pid_t) -> ProcessProgress? { progress }
    }

    func testAProcessIsWaitedForWhileAtWorkWithinTheBusyLimit() {
        let process = Process()
        var watch = ProgressWatch<String>(reader: process.read)
        XCTAssertTrue(watch.waitsOn("worker", pid: 7, waited: 1_000, limit: 1_000), "the first look only reads")
        process.progress = ProcessProgress(cpuTicks: 103, isBusy: false)
        XCTAssertTrue(watch.waitsOn("worker", pid: 7, waited: 2_000, limit: 1_000), "its CPU rose")
        XCTAssertFalse(watch.waitsOn("worker", pid: 7, waited: 3_000, limit: 1_000), "blocked, no CPU used since")
        XCTAssertFalse(watch.waitsOn("worker", pid: 7, waited: 4_000, limit: 1_000), "still blocked: the last look's reading is compared with")
        process.progress = ProcessProgress(cpuTicks: 103, isBusy: true)
        XCTAssertTrue(watch.waitsOn("worker", pid: 7, waited: 5_000, limit: 1_000), "runnable")
        XCTAssertFalse(watch.waitsOn("worker", pid: 7, waited: ProcessProgress.busyLimit(for: 1_000), limit: 1_000), "the busy limit")
        XCTAssertTrue(watch.waitsOn("worker", pid: 8, waited: 1_000, limit: 1_000), "another process: a first look")
        process.progress = nil
        XCTAssertFalse(watch.waitsOn("worker", pid: 8, waited: 2_000, limit: 1_000), "it ended")
        XCTAssertFalse(watch.waitsOn("other", pid: 9, waited: 1_000, limit: 1_000), "one that cannot be read is not waited for")
    }
}

/// The timekeeper reads the laggards early in a wait for quiet, before its first look at them.
final class LaggardWaitTests: XCTestCase {
    private final class BusyBus: QuietBus {
        var calls: [String] = []
        var isStopping: Bool { false }
        var isQuiet: Bool { false }
        var lastSequencedTime: BusTime { 0 }
        func releaseHeldPublications() -> Bool { false }
        func drain() {}
        func saveSequenced() {}
        func readLaggards() { calls.append("read") }
        func excuseLaggards(waited: Int64, mayWaitOn: Bool) -> Bool {
            calls.append("look")
            return true
        }
        func waitForQuietEnded() { calls.append("ended") }
    }

    func testTheLaggardsAreReadBeforeTheFirstLook() {
        let bus = BusyBus()
        let time = TimeKeeper(clock: BusClock(mode: .virtual, start: 0), acknowledgementTimeout: 20)
        time.bus = bus
        let deadline = Date().addingTimeInterval(10)
        while !bus.calls.contains("look"), Date() < deadline { time.advance() }
        XCTAssertEqual(bus.calls.prefix(2), ["read", "look"], "read once, early, then looked at")
        XCTAssertEqual(bus.calls.filter { $0 == "read" }.count, 1)
    }
}
