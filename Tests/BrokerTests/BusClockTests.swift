@testable import Broker
import Synchronization
import XCTest

/// Real bus time starts at the host's wall clock and then runs at the true rate: a step of the host's clock moves
/// it neither back nor forward, and a broker started after the host's clock was set back goes on from where the last
/// one got. Scaled time runs from its start at its speed, whatever the wall clock does.
final class BusClockTests: XCTestCase {
    /// A host whose wall clock a test sets, and whose elapsed-time clock only runs on.
    /// Behind a lock: the clock may read it from any thread (`HostClocks` takes Sendable closures).
    private final class Host: Sendable {
        private let times = Mutex((wall: Int64(1_800_000_000_000), elapsed: Int64(5_000)))
        var wall: Int64 {
            get { times.withLock { $0.wall } }
            set { times.withLock { $0.wall = newValue } }
        }
        var elapsed: Int64 {
            get { times.withLock { $0.elapsed } }
            set { times.withLock { $0.elapsed = newValue } }
        }
        var clocks: HostClocks { HostClocks(wall: { self.wall }, elapsed: { self.elapsed }) }
        func pass(_ milliseconds: Int64) { wall += milliseconds; elapsed += milliseconds }
    }

    func testARealClockIsNotMovedByTheHostsClockStepping() {
        let host = Host()
        let clock = BusClock(mode: .real, start: nil, host: host.clocks)
        clock.startRunning()
        XCTAssertEqual(clock.now(), 1_800_000_000_000, "real time starts at the host's wall clock")
        host.pass(60_000)
        XCTAssertEqual(clock.now(), 1_800_000_060_000)
        host.wall -= 3_600_000  // the host's clock is set back an hour
        host.pass(120_000)
        XCTAssertEqual(clock.now(), 1_800_000_180_000, "a step back does not run bus time back")
        XCTAssertEqual(clock.wallMilliseconds(until: 1_800_000_300_000), 120_000, "a timer two minutes ahead fires in two minutes")
        host.wall += 7_200_000  // and forward two hours
        XCTAssertEqual(clock.now(), 1_800_000_180_000, "nor does a step forward move it on")
    }

    func testARealClockStartedAfterTheHostsClockWasSetBackGoesOnFromTheLastBroker() {
        let host = Host()
        host.wall -= 3_600_000  // set back an hour while no broker ran
        let clock = BusClock(mode: .real, start: nil, host: host.clocks)
        clock.resume(notBefore: 1_800_000_000_000, continuingTheRun: false)
        clock.startRunning()
        XCTAssertEqual(clock.now(), 1_800_000_000_000, "not before where the last broker got")
        host.pass(1_000)
        XCTAssertEqual(clock.now(), 1_800_000_001_000, "and on at the true rate")
    }

    func testAScaledClockRunsFromItsStartAtItsSpeedWhateverTheWallClockDoes() {
        let host = Host()
        let clock = BusClock(mode: .scaled(speed: 60), start: 0, host: host.clocks)
        host.pass(10_000)  // start-up takes no bus time
        clock.startRunning()
        XCTAssertEqual(clock.now(), 0)
        host.pass(1_000)
        host.wall -= 3_600_000
        XCTAssertEqual(clock.now(), 60_000)
    }

    func testAPausedClockStandsStillAndRunsOnFromWhereItStood() {
        let host = Host()
        let clock = BusClock(mode: .real, start: nil, host: host.clocks)
        clock.startRunning()
        host.pass(1_000)
        clock.pause()
        host.pass(60_000)
        XCTAssertEqual(clock.now(), 1_800_000_001_000, "paused: bus time stands still")
        XCTAssertEqual(clock.wallMilliseconds(until: 1_800_000_002_000), Int64.max, "and no timer falls due")
        XCTAssertEqual(clock.mode, "scaled", "a real clock paused is no longer the wall clock's")
        clock.play()
        host.pass(500)
        XCTAssertEqual(clock.now(), 1_800_000_001_500, "on from where it stood, at the true rate")
    }

    func testASpeedRunsOnFromNowAndAMoveGoesForwardOnly() {
        let host = Host()
        let clock = BusClock(mode: .scaled(speed: 60), start: 0, host: host.clocks)
        clock.startRunning()
        host.pass(1_000)
        XCTAssertEqual(clock.now(), 60_000)
        clock.setSpeed(600)
        host.pass(1_000)
        XCTAssertEqual(clock.now(), 660_000, "the time run so far is kept; the new speed applies from now")
        XCTAssertEqual(clock.wallMilliseconds(until: 720_000), 100)
        clock.move(to: 3_600_000)
        XCTAssertEqual(clock.now(), 3_600_000)
        clock.move(to: 1_000)
        XCTAssertEqual(clock.now(), 3_600_000, "never back")
        host.pass(10)
        XCTAssertEqual(clock.now(), 3_606_000, "and on at its speed")
    }
}
