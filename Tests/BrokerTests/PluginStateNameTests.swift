@testable import Broker
import XCTest

/// What `status` and `plugin restart` call a supervised plugin's state.
final class PluginStateNameTests: XCTestCase {
    /// A short-lived extension whose run has ended, its next launch waiting for that run's goodbye, has no process:
    /// it is not shown as running.
    func testAShortLivedExtensionBetweenItsRunsIsRelaunching() {
        let plugin = PluginSupervisor.Plugin(spec: PluginSpec(name: "monitor", executable: "/bin/true", role: .monitor), stateChanges: ChangeCount())
        plugin.state = .running
        XCTAssertEqual(PluginAdministration.stateName(plugin), "running")
        plugin.restartAfterBye = (connection: [1], since: 0)
        XCTAssertEqual(PluginAdministration.stateName(plugin), "relaunching")
        plugin.state = .failed("gone")
        XCTAssertEqual(PluginAdministration.stateName(plugin), "failed")
    }

    /// A plugin whose start found its storage unusable waits for it out of action: the bus does not wait for it, and
    /// an action meant for it is answered naming it.
    func testAPluginWaitingForItsStorageIsOutOfAction() {
        let plugin = PluginSupervisor.Plugin(spec: PluginSpec(name: "monitor", executable: "/bin/true", role: .monitor), stateChanges: ChangeCount())
        plugin.state = .waitingForStorage(until: 0, why: "the disk is full")
        XCTAssertEqual(PluginAdministration.stateName(plugin), "waiting-for-storage")
        XCTAssertFalse(plugin.isRunning, "the bus goes on without it")
        XCTAssertEqual(plugin.outOfAction, "waiting for its storage: the disk is full")
        XCTAssertTrue(plugin.isFailedOrBackingOff, "a device restart starts it afresh")
    }
}
