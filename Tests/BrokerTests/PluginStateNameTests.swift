@testable import Broker
import XCTest

/// What `status` and `plugin restart` call a supervised plugin's state.
final class PluginStateNameTests: XCTestCase {
    /// A short-lived extension whose run has ended, its next launch waiting for that run's goodbye, has no process:
    /// it is not shown as running.
    func testAShortLivedExtensionBetweenItsRunsIsRelaunching() {
        let plugin = PluginSupervisor.Plugin(spec: PluginSpec(name: "monitor", executable: "/bin/true", role: .monitor))
        plugin.state = .running
        XCTAssertEqual(PluginAdministration.stateName(plugin), "running")
        plugin.restartAfterBye = (connection: [1], since: 0)
        XCTAssertEqual(PluginAdministration.stateName(plugin), "relaunching")
        plugin.state = .failed("gone")
        XCTAssertEqual(PluginAdministration.stateName(plugin), "failed")
    }
}
