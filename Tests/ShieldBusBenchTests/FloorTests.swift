@testable import shieldbus_bench
import BusProtocol
import XCTest

/// The floor suite's arithmetic and the line its measuring process prints; the measurements themselves are the
/// benchmark's, never a test's. Every expected figure is worked out by hand from `units` (in the comments).
final class FloorTests: XCTestCase {
    func testATurnsLineIsReadBackAsItWasWritten() {
        let costs = TurnCosts(roundTrip: 35.25, roundTripSender: 5.5, durableTurn: 77, durableTurnSender: 24.875)
        XCTAssertEqual(TurnCosts(line: costs.line), costs)
    }

    func testAnythingButFourNonNegativeNumbersIsRefused() {
        for line in ["", "1 2 3", "1 2 3 4 5", "1 2 three 4", "1 2 3 -4", "1 2 3 nan", "1 2 3 inf"] {
            XCTAssertNil(TurnCosts(line: line), line)
        }
    }

    func testTheFloorIsEachCountTimesItsUnitCost() {
        let floor = Floor(units: Self.units, counts: Self.counts)
        // 0.14 turns × 80 + (0.46 − 0.14) saves × 12 + (0.28 − 0.14 + 0.21 + 0.18) × 20 + 1 × 1
        XCTAssertEqual(floor.perEvent(Self.turns), 11.2 + 3.84 + 10.6 + 1, accuracy: 1e-9)
        // 0.14 × 40 + 0.46 × 12 + (0.21 + 0.28 + 0.18) × 20 + 1
        XCTAssertEqual(floor.perEventFromUnitsAlone(Self.turns), 5.6 + 5.52 + 13.4 + 1, accuracy: 1e-9)
        // 0.14 × 30 + 0.32 × 12 + 0.21 × 20 + 1
        XCTAssertEqual(floor.brokerLoopPerEvent(Self.turns), 4.2 + 3.84 + 4.2 + 1, accuracy: 1e-9)
        // 0.14 × 5
        XCTAssertEqual(floor.brokerLoopHandOffsPerEvent(Self.turns), 0.7, accuracy: 1e-9)
        // 0.14 × 80: the turns' chain alone, whatever the loop's commits cost
        XCTAssertEqual(floor.serialPerEvent(Self.turns), 11.2, accuracy: 1e-9)
    }

    func testTheYearsFloorIsItsCPUOnBothCoresWhenThatIsLonger() {
        // CPU 26.64 µs an event, 13.32 on two cores, above the chain's 11.2: 13.32 µs × 516,616 events
        XCTAssertEqual(Floor(units: Self.units, counts: Self.counts).yearSeconds, 6.88132512, accuracy: 1e-9)
    }

    func testTheYearsFloorIsItsSerialPartWhenThatIsLongerThanItsCPUOnBothCores() {
        var units = Self.units
        (units.spread.durableTurn, units.oneCore.durableTurn) = (200, 200)
        // the chain 0.14 × 200 = 28 µs an event; CPU 28 + 3.84 + 10.6 + 1 = 43.44, 21.72 on two cores: 28 µs × 516,616
        XCTAssertEqual(Floor(units: units, counts: Self.counts).yearSeconds, 14.465248, accuracy: 1e-9)
    }

    func testEachTurnFigureIsTakenAtTheLesserPlacement() {
        var units = Self.units
        units.oneCore = TurnCosts(roundTrip: 30, roundTripSender: 6, durableTurn: 70, durableTurnSender: 31)
        XCTAssertEqual(Floor(units: units, counts: Self.counts).turns, TurnCosts(roundTrip: 30, roundTripSender: 5, durableTurn: 70, durableTurnSender: 30))
        // CPU 0.14 × 70 + 3.84 + 10.6 + 1 = 25.24 µs, 12.62 on two cores, longer than the chain's 0.14 × 70 = 9.8
        XCTAssertEqual(Floor(units: units, counts: Self.counts).yearSeconds, 12.62 * 0.516616, accuracy: 1e-9)
    }

    func testMakeRunsDayCountsTheStartsOnTheCores() {
        let floor = Floor(units: Self.units, counts: Self.counts)
        // CPU: the broker's start 3 ms + six plugin starts × 8 ms + 353 events × 26.64 µs = 60.40392 ms, on two cores
        // 30.20196 ms; the serial part 3 + 8 ms + 353 × 11.2 µs = 14.9536 ms is shorter
        XCTAssertEqual(floor.makeRunDayCPUSeconds, 0.06040392, accuracy: 1e-12)
        XCTAssertEqual(floor.makeRunDaySeconds, 0.03020196, accuracy: 1e-12)
        XCTAssertEqual(floor.makeRunDayEventsPerSecond, 11_687.983164006, accuracy: 1e-6)
    }

    func testMakeRunsDayIsNeverShorterThanABrokerAndAPluginStartAndTheChain() {
        var units = Self.units
        (units.swiftExec.cpu, units.sandboxedPlugin.cpu) = (30, 1)
        // CPU (30 + 6 × 1) ms + 9.40392 ms = 45.40392 ms, 22.70196 on two cores; serial 30 + 1 + 3.9536 = 34.9536 ms
        XCTAssertEqual(Floor(units: units, counts: Self.counts).makeRunDaySeconds, 0.0349536, accuracy: 1e-12)
    }

    func testWhatEachTargetLeavesForAllTheFloorLeavesOut() {
        let floor = Floor(units: Self.units, counts: Self.counts)
        // the year: 15 s × 2 cores = 30 CPU-s over 516,616 events = 58.0702 µs an event, less 26.64
        XCTAssertEqual(floor.yearCPUPerEventLeft, 31.4302107562, accuracy: 1e-9)
        // make run's day: 353 / 10,000 s × 2 cores = 70.6 ms, less 60.40392 ms, over 353 events
        XCTAssertEqual(floor.makeRunDayCPUPerEventLeft, 28.8840793201, accuracy: 1e-9)
    }

    func testAFloorsRowSaysWhetherItsTargetIsReachableAndNeverThatItIsMet() throws {
        let rows = Floor(units: Self.units, counts: Self.counts).figures.filter { $0.name.hasPrefix("floor: ") }
        XCTAssertEqual(rows.map(\.target), [15, 10_000, 10])
        // the year 6.88 s ≤ 15; make run's day 11,688 events/s ≥ 10,000; the loop 13.24 µs > 10
        XCTAssertEqual(rows.map(\.reachable), [true, true, false])
        XCTAssertEqual(rows.map(\.met), [nil, nil, nil])
        XCTAssertEqual(rows.map { $0.note.hasPrefix("target above the floor") }, [true, true, false])
        XCTAssertTrue(rows[2].note.hasPrefix("target below the floor"), rows[2].note)
        let table = FigureTable(machine: MachineInfo.current(), mode: "test", figures: rows)
        guard case .object(let json) = table.json, case .array(let figures)? = json["figures"] else { return XCTFail("\(table.json)") }
        for case .object(let figure) in figures {
            XCTAssertNil(figure["met"], "\(figure)")
            XCTAssertNotNil(figure["reachable"], "\(figure)")
        }
        XCTAssertEqual(figures.count, 3)
    }

    func testAMeasuredFigureIsMetAndNotReachable() {
        let figure = Figure(name: "year", value: 107, unit: "s", baseline: nil, target: 15, better: .lower)
        XCTAssertEqual(figure.met, false)
        XCTAssertNil(figure.reachable)
    }

    func testTheLastAllowedProcessorIsReadFromTheAffinityList() throws {
        XCTAssertEqual(try AllowedCores.last(of: "Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n"), 1)
        XCTAssertEqual(try AllowedCores.last(of: "Cpus_allowed_list:\t2,5-7,4\n"), 7)
        XCTAssertEqual(try AllowedCores.last(of: "Cpus_allowed_list:\t3\n"), 3)
        for status in ["Name:\tx\n", "Cpus_allowed_list:\t\n", "Cpus_allowed_list:\t0-x\n"] {
            XCTAssertThrowsError(try AllowedCores.last(of: status), status)
        }
    }

    /// The counts the figures above are worked out with, whatever the current build measures (`FloorCounts()`).
    static let counts = FloorCounts(turns: 0.14, busSaves: 0.46, deviceCommits: 0.21, handledRecords: 0.28, appGroupWrites: 0.18, journalLines: 1)
    static let turns = TurnCosts(roundTrip: 40, roundTripSender: 5, durableTurn: 80, durableTurnSender: 30)
    static let units = FloorUnits(spread: turns, oneCore: turns, exclusiveCommit: 10, ledgerSave: 12, sharedCommit: 20, journalLine: 1,
                                  sandboxedTrue: .init(cpu: 5, wall: 10), sandboxedPlugin: .init(cpu: 8, wall: 16),
                                  swiftExec: .init(cpu: 3, wall: 6), swiftFork: .init(cpu: 0.5, wall: 0.5), pluginStart: "a test's")
}
