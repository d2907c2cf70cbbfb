@testable import shieldbus_bench
import XCTest

/// The floor suite's arithmetic and the line its measuring process prints; the measurements themselves are the
/// benchmark's, never a test's.
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
        let floor = Floor(units: Self.units)
        // 0.23 turns × 80 + (0.46 − 0.23) × 10 + (0.53 − 0.23 + 0.21 + 0.18) × 20 + 1 × 1
        XCTAssertEqual(floor.perEvent(Self.turns), 18.4 + 2.3 + 13.8 + 1, accuracy: 1e-9)
        // 0.23 × 40 + 0.46 × 10 + (0.21 + 0.53 + 0.18) × 20 + 1
        XCTAssertEqual(floor.perEventFromUnitsAlone(Self.turns), 9.2 + 4.6 + 18.4 + 1, accuracy: 1e-9)
        // 0.23 × 30 + 0.23 × 10 + 0.21 × 20 + 1
        XCTAssertEqual(floor.brokerLoopPerEvent(Self.turns), 6.9 + 2.3 + 4.2 + 1, accuracy: 1e-9)
    }

    func testTheYearsFloorIsItsCPUOnBothCoresAndNeverBelowItsSerialPart() {
        let floor = Floor(units: Self.units)
        let perEvent = floor.perEvent(Self.turns)
        let serial = max(0.23 * 80, floor.brokerLoopPerEvent(Self.turns))
        XCTAssertEqual(floor.yearSeconds, max(perEvent / 2, serial) * FloorCounts.yearEvents / 1e6, accuracy: 1e-9)
    }

    func testEachTurnFigureIsTakenAtTheLesserPlacement() {
        var units = Self.units
        units.oneCore = TurnCosts(roundTrip: 30, roundTripSender: 6, durableTurn: 70, durableTurnSender: 31)
        XCTAssertEqual(Floor(units: units).turns, TurnCosts(roundTrip: 30, roundTripSender: 5, durableTurn: 70, durableTurnSender: 30))
        XCTAssertLessThan(Floor(units: units).yearSeconds, Floor(units: Self.units).yearSeconds)
    }

    func testMakeRunsDayCountsTheStartsOnTheCores() {
        let floor = Floor(units: Self.units)
        let starts = (3 + 6 * 8) / 1000.0
        let events = 353 * floor.perEvent(Self.turns) / 1e6
        let spread = max((starts + events) / 2, 11 / 1000.0 + 353 * max(0.23 * 80, floor.brokerLoopPerEvent(Self.turns)) / 1e6)
        XCTAssertEqual(floor.makeRunDaySeconds, spread, accuracy: 1e-12)
        XCTAssertEqual(floor.makeRunDayEventsPerSecond, 353 / floor.makeRunDaySeconds, accuracy: 1e-9)
    }

    func testEachTargetsRowSaysWhetherItLiesBelowTheFloor() {
        let rows = Floor(units: Self.units).figures.filter { $0.name.hasPrefix("floor: ") }
        XCTAssertEqual(rows.map(\.target), [15, 10_000, 10])
        for row in rows {
            XCTAssertEqual(row.note.hasPrefix("target below the floor"), row.met == false, row.name)
        }
        XCTAssertEqual(rows.last?.met, false)  // the broker's loop at 14.4 µs against 10
    }

    static let turns = TurnCosts(roundTrip: 40, roundTripSender: 5, durableTurn: 80, durableTurnSender: 30)
    static let units = FloorUnits(spread: turns, oneCore: turns, exclusiveCommit: 10, ledgerSave: 12, sharedCommit: 20, journalLine: 1,
                                  sandboxedTrue: .init(cpu: 5, wall: 10), sandboxedSwift: .init(cpu: 8, wall: 16),
                                  swiftExec: .init(cpu: 3, wall: 6), swiftFork: .init(cpu: 0.5, wall: 0.5))
}
